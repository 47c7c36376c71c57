"""How well ``irviewer audit`` finds label errors: planted ones whose truth is known, and the
ones a re-annotation found. One command prints every table of ``docs/audit.md``'s "How well it
finds errors":

    python tests/benchmarks/audit_recall.py            # (a), (b) and (c)
    python tests/benchmarks/audit_recall.py --skip-roxford   # (a) and (b) only

(a) A synthetic instance set (tests/core/audit_synth.py) with two descriptor files: N gallery
    images relabelled to another instance (planted errors) and as many correctly labelled
    images made very hard (decoys), at three noise levels. Precision@N = planted images among
    the first N distinct images the suspects name; recall@2N / @3N; decoys among the first 2N.
(b) The real Oxford5k gt_files (../shared/samples/oxford5k-gt) with its real 128-d CaffeNet
    fc7 descriptors (../shared/samples/oxford5k-lopq-fc7-features). For each of three
    landmarks, a few images are taken out of the good/ok lists of all five queries of the
    landmark and a few images of other landmarks are put into its good lists (a modified copy
    in a temporary folder). Each moved (query, image) pair is one planted error. Methods: the
    fc7 file alone, and with a second file made from it (PCA-whitened, 64-d).
(c) The untouched Oxford5k judged by the revisited re-annotation (tests/benchmarks/
    audit_roxford.py): precision of the first 25 / 50 / 100 pair suspects by direction, for
    the audit and the baselines, and what the first confirmed and unconfirmed suspects show.

Baseline ("rank percentile"): a negative's score is how near the top it ranks, a positive's
how near the bottom, averaged over the methods; for image-label sets an image takes the highest
score of its pairs.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from irviewer.core.audit import audit  # noqa: E402
from irviewer.formats.base import ReadOptions  # noqa: E402
from irviewer.opening.opener import open_now  # noqa: E402
from irviewer.opening.request import OpenRequest  # noqa: E402
from tests.benchmarks import audit_roxford  # noqa: E402
from tests.core.audit_synth import write_synth_set  # noqa: E402

GT = audit_roxford.GT
FC7 = audit_roxford.FC7


def _unique(items: list[str]) -> list[str]:
    seen: set[str] = set()
    return [i for i in items if not (i in seen or seen.add(i))]


def synthetic_row(seed: int, noise: float) -> str:
    """Return the markdown rows of one synthetic set: audit and baseline."""
    with tempfile.TemporaryDirectory() as tmp:
        s = write_synth_set(Path(tmp), n_labels=120, per_label=8, n_injected=20, n_decoys=20,
                            dim=256, noise=noise, seed=seed)
        opened = open_now(OpenRequest(s.manifest, descriptors=s.descriptors))
        ds = opened.dataset
        mean_map = np.mean([m.evaluations["instance"].summary["mAP"] * 100
                            for m in opened.methods.values()])
        n = len(s.injected)
        result = audit(ds, {k: m.ranking for k, m in opened.methods.items()})
        audit_items = _unique([x.item for x in result.suspects])
        base = audit_roxford.naive_pairs(opened, "instance")
        base_items = _unique([ds.gallery[g] for _, g in base])
        rows = []
        for name, items in (("audit", audit_items), ("baseline", base_items)):
            planted, decoys = set(s.injected), set(s.decoys)
            cells = [f"{len(set(items[:n]) & planted) / n:.2f}",
                     f"{len(set(items[:2 * n]) & planted) / n:.2f}",
                     f"{len(set(items[:3 * n]) & planted) / n:.2f}",
                     f"{len(set(items[:2 * n]) & decoys)}"]
            rows.append(f"| noise {noise} (mAP {mean_map:.0f}) | {name} | " + " | ".join(cells)
                        + " |")
        return "\n".join(rows)


def synthetic(seed: int) -> None:
    """Print the synthetic table."""
    print("(a) synthetic instance sets: 120 instances x 8 gallery images, 2 queries each, two "
          f"descriptor files (seed {seed}); N = 20 relabelled images, 20 decoys\n")
    print("| set | method | precision@N | recall@2N | recall@3N | decoys in the first 2N |")
    print("|---|---|---|---|---|---|")
    for noise in (1.5, 2.0, 2.5):
        print(synthetic_row(seed, noise))


def oxford_methods(tmp: Path) -> tuple[Path, Path]:
    """Write the fc7 descriptors with names (.npz) and a PCA-whitened 64-d second method."""
    raw = np.fromfile(FC7 / "oxford_features.fvecs", dtype=np.float32).reshape(-1, 129)[:, 1:]
    names = (FC7 / "oxford5k_imlist_sorted.txt").read_text().split()
    first = tmp / "fc7.npz"
    np.savez(first, features=raw, names=np.array(names))
    return first, audit_roxford.write_pcaw64(tmp)


def oxford(seed: int) -> None:
    """Print recall on the Oxford5k with planted pair errors."""
    if not GT.is_dir() or not FC7.is_dir():
        print("(b) skipped: the shared Oxford5k samples are not present")
        return
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        first, second = oxford_methods(tmp)
        landmarks = ("all_souls", "ashmolean", "radcliffe_camera")
        taken, given = _inject(tmp, rng, landmarks, 3, 3)
        planted = taken | given
        n = len(planted)
        print(f"\n(b) Oxford5k, real gt_files and fc7 descriptors; landmarks "
              f"{', '.join(landmarks)}: 3 images out of and 3 into the good lists of all "
              f"five queries of each (seed {seed}); N = {n} (query, image) pairs\n")
        print("| methods | method | recall@2N (out of / into good) | recall@3N (out / in) |")
        print("|---|---|---|---|")
        for methods in ((first,), (first, second)):
            opened = open_now(OpenRequest(tmp / "gt", descriptors=methods,
                                          options=ReadOptions()))
            ds = opened.dataset
            maps = " + ".join(f"{k} (mAP {m.evaluations['oxford'].summary['mAP'] * 100:.1f})"
                              for k, m in opened.methods.items())
            result = audit(ds, {k: m.ranking for k, m in opened.methods.items()})
            pairs = _unique_pairs([(x.query, x.item) for x in result.suspects
                                   if x.query is not None])
            base = [(ds.queries[q].name, ds.gallery[g])
                    for q, g in audit_roxford.naive_pairs(opened, "oxford")]
            for name, found in (("audit", pairs), ("baseline", base)):
                cells = []
                for m in (2, 3):
                    first_m = set(found[:m * n])
                    cells.append(f"{len(first_m & planted) / n:.2f} ({len(first_m & taken)}"
                                 f" / {len(first_m & given)} of {len(taken)})")
                print(f"| {maps} | {name} | " + " | ".join(cells) + " |")


def _unique_pairs(pairs: list[tuple[str | None, str]]) -> list[tuple[str | None, str]]:
    seen: set[tuple[str | None, str]] = set()
    return [p for p in pairs if not (p in seen or seen.add(p))]


def _inject(tmp: Path, rng: np.random.Generator, landmarks: tuple[str, ...], n_out: int,
            n_in: int) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """Copy the gt_files with ``n_out`` good images of each landmark taken out of the good/ok
    lists of all five of its queries (they become negatives) and ``n_in`` images listed for
    none of them put into its good lists; return the (query, image) pairs taken and given."""
    out_dir = tmp / "gt"
    shutil.copytree(GT, out_dir)
    everything = sorted({line for f in GT.glob("*_good.txt") for line in f.read_text().split()})
    taken_pairs: set[tuple[str, str]] = set()
    given_pairs: set[tuple[str, str]] = set()
    for lm in landmarks:
        qs = [f"{lm}_{i}" for i in range(1, 6)]
        lists = {q: {g: (out_dir / f"{q}_{g}.txt").read_text().split()
                     for g in ("good", "ok", "junk")} for q in qs}
        selves = {(out_dir / f"{q}_query.txt").read_text().split()[0][5:] for q in qs}
        common = set.intersection(*(set(lists[q]["good"]) for q in qs)) - selves
        taken = rng.choice(sorted(common), size=n_out, replace=False).tolist()
        listed = set().union(*(set(v) for q in qs for v in lists[q].values()))
        outside = [x for x in everything if x not in listed]
        given = rng.choice(outside, size=n_in, replace=False).tolist()
        for q in qs:
            good = [x for x in lists[q]["good"] if x not in taken] + given
            (out_dir / f"{q}_good.txt").write_text("".join(f"{x}\n" for x in good))
            ok = [x for x in lists[q]["ok"] if x not in taken]
            (out_dir / f"{q}_ok.txt").write_text("".join(f"{x}\n" for x in ok))
            taken_pairs |= {(q, x) for x in taken}
            given_pairs |= {(q, x) for x in given}
    return taken_pairs, given_pairs


def main() -> None:
    """Parse the options and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-roxford", action="store_true",
                        help="leave out (c), the untouched Oxford5k judged by rOxford")
    args = parser.parse_args()
    synthetic(args.seed)
    oxford(args.seed)
    if not args.skip_roxford:
        print()
        audit_roxford.report()


if __name__ == "__main__":
    main()
