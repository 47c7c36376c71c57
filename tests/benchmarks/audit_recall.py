"""How well ``irviewer audit`` finds injected label errors, against a naive baseline.

Run from the repository root (a script, not a test):

    python tests/benchmarks/audit_recall.py            # (a) synthetic and (b) Oxford5k
    python tests/benchmarks/audit_recall.py --untouched 15   # also list the first suspects
                                                              # of the untouched Oxford5k

(a) A synthetic instance set (tests/core/audit_synth.py) with two descriptor files: N gallery
    images relabelled to another instance (injected errors) and as many correctly labelled
    images made very hard (decoys). Recall = injected images among the first 2N / 3N
    suspects; decoys = decoy images there.
(b) The real Oxford5k gt_files (../shared/samples/oxford5k-gt) with its real 128-d CaffeNet
    fc7 descriptors (../shared/samples/oxford5k-lopq-fc7-features). For each of three
    landmarks, a few images are taken out of the good/ok lists of all five queries of the
    landmark and a few images of other landmarks are put into its good lists (a modified copy
    in a temporary folder). Each moved (query, image) pair is one injected error (one row of
    the corrections file). Methods: the fc7 file alone, and with a second file made from it
    (PCA-whitened, 64-d) so that agreement across methods can be tried on real data.

Baseline ("rank percentile"): a negative's score is how near the top it ranks, a positive's
how near the bottom (1 - rank / gallery size, rank / gallery size), averaged over the methods;
for image-label sets an image takes the highest score of its pairs.
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
from irviewer.core.evaluation import query_roles  # noqa: E402
from irviewer.formats.base import ReadOptions  # noqa: E402
from irviewer.opening.opener import OpenRequest, open_now  # noqa: E402
from tests.core.audit_synth import write_synth_set  # noqa: E402

SAMPLES = ROOT.parent / "shared" / "samples"
GT = SAMPLES / "oxford5k-gt"
FC7 = SAMPLES / "oxford5k-lopq-fc7-features"
ROXFORD = SAMPLES / "revisited-oxford-paris-gnd" / "gnd_roxford5k.pkl"


def baseline_pairs(opened, protocol_name: str) -> list[tuple[float, int, int]]:  # type: ignore[no-untyped-def]
    """Return (score, query, gallery) of every ranked negative in the top 100 and every
    positive, by rank percentile averaged over the methods."""
    ds = opened.dataset
    scores: dict[tuple[int, int], list[float]] = {}
    for m in opened.methods.values():
        ev = m.evaluations[protocol_name]
        mask = np.zeros(ds.n_gallery, dtype=bool)
        mask[ds.global_ignored] = True
        n = m.ranking.n_ranked
        for q, query in enumerate(ds.queries):
            pos, ign = query_roles(query, ev.protocol, mask)
            top = m.ranking.top_indices[q][:100]
            for r, g in enumerate(top.tolist()):
                if g >= 0 and g not in pos and g not in ign and g != query.self_index:
                    scores.setdefault((q, g), []).append(1 - r / n)
            ranks = m.ranking.rank_items(q, pos)
            for g, r in zip(pos.tolist(), ranks.tolist(), strict=True):
                if g != query.self_index:
                    scores.setdefault((q, g), []).append(1.0 if r < 0 else r / n)
    k = len(opened.methods)
    return sorted(((sum(v) / k, q, g) for (q, g), v in scores.items()), reverse=True)


def synthetic(seed: int, noise: float) -> None:
    """Print recall on the synthetic set, audit and baseline."""
    with tempfile.TemporaryDirectory() as tmp:
        s = write_synth_set(Path(tmp), n_labels=120, per_label=8, n_injected=20, n_decoys=20,
                            dim=256, noise=noise, seed=seed)
        opened = open_now(OpenRequest(s.manifest, descriptors=s.descriptors))
        ds = opened.dataset
        maps = ", ".join(f"{n} mAP {m.evaluations['instance'].summary['mAP'] * 100:.1f}"
                         for n, m in opened.methods.items())
        n = len(s.injected)
        result = audit(ds, {k: m.ranking for k, m in opened.methods.items()})
        audit_items = _unique([x.item for x in result.suspects])
        base_items = _unique([ds.gallery[g] for _, _, g in baseline_pairs(opened, "instance")])
        print(f"(a) synthetic instance set, seed {seed}, noise {noise}: {ds.n_queries} queries, "
              f"{ds.n_gallery} gallery, {maps}; N = {n} relabelled images, "
              f"{len(s.decoys)} decoys")
        for name, items in (("audit", audit_items), ("baseline", base_items)):
            cells = []
            for mult in (2, 3):
                first = set(items[:mult * n])
                cells.append(f"recall@{mult}N {len(first & set(s.injected)) / n:.2f} "
                             f"(decoys {len(first & set(s.decoys))})")
            print(f"    {name:9s} " + ", ".join(cells))
        kinds = [x.kind for x in result.suspects[:2 * n]]
        print("    audit's first 2N by kind: "
              + ", ".join(f"{k} {kinds.count(k)}" for k in sorted(set(kinds))))


def _unique(items: list[str]) -> list[str]:
    seen: set[str] = set()
    return [i for i in items if not (i in seen or seen.add(i))]


def oxford_methods(tmp: Path) -> tuple[Path, Path]:
    """Write the fc7 descriptors with names (.npz) and a PCA-whitened 64-d second method."""
    raw = np.fromfile(FC7 / "oxford_features.fvecs", dtype=np.float32).reshape(-1, 129)[:, 1:]
    names = (FC7 / "oxford5k_imlist_sorted.txt").read_text().split()
    first = tmp / "fc7.npz"
    np.savez(first, features=raw, names=np.array(names))
    x = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    x = x - x.mean(axis=0)
    _u, s, vt = np.linalg.svd(x, full_matrices=False)
    white = (x @ vt[:64].T) / s[:64]
    second = tmp / "fc7_pcaw64.npz"
    np.savez(second, features=white.astype(np.float32), names=np.array(names))
    return first, second


def oxford(seed: int, untouched: int) -> None:
    """Print recall on the modified Oxford5k, and the first suspects of the untouched one."""
    if not GT.is_dir() or not FC7.is_dir():
        print("(b) skipped: the shared Oxford5k samples are not present")
        return
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        first, second = oxford_methods(tmp)
        landmarks = ("all_souls", "ashmolean", "radcliffe_camera")
        gt_dir = tmp / "gt"
        taken, given = _inject(tmp, rng, landmarks, 3, 3)
        injected_pairs = taken | given
        n = len(injected_pairs)
        print(f"(b) Oxford5k, real gt_files and fc7 descriptors; landmarks "
              f"{', '.join(landmarks)}: 3 images out of and 3 into the good lists of all "
              f"five queries of each; N = {n} (query, image) pairs")
        for methods in ((first,), (first, second)):
            opened = open_now(OpenRequest(gt_dir, descriptors=methods,
                                          options=ReadOptions()))
            ds = opened.dataset
            maps = ", ".join(f"{k} mAP {m.evaluations['oxford'].summary['mAP'] * 100:.2f}"
                             for k, m in opened.methods.items())
            result = audit(ds, {k: m.ranking for k, m in opened.methods.items()})
            pairs = [(x.query, x.item) for x in result.suspects if x.query is not None]
            base = [(ds.queries[q].name, ds.gallery[g])
                    for _, q, g in baseline_pairs(opened, "oxford")]
            print(f"    methods: {maps}")
            for name, found in (("audit", pairs), ("baseline", base)):
                cells = []
                for m in (2, 3):
                    first_m = set(found[:m * n])
                    cells.append(f"recall@{m}N {len(first_m & injected_pairs) / n:.2f} "
                                 f"(out of good {len(first_m & taken)}/{len(taken)}, "
                                 f"into good {len(first_m & given)}/{len(given)})")
                print(f"      {name:9s} " + ", ".join(cells))
        opened = open_now(OpenRequest(GT, descriptors=(first, second)))
        result = audit(opened.dataset, {k: m.ranking for k, m in opened.methods.items()})
        cross_check(opened, result)
        if untouched:
            print(f"    untouched Oxford5k, both methods: {len(result.suspects)} suspects; "
                  f"the first {untouched}:")
            for i, x in enumerate(result.suspects[:untouched], 1):
                print(f"      {i:2d}. {x.kind} {x.score:.2f} {x.query} {x.item} "
                      f"{x.labelled}->{x.suggested}: {x.evidence}")


def cross_check(opened, result, first: int = 50) -> None:  # type: ignore[no-untyped-def]
    """Print how many of the first pair suspects (audit and baseline) on the untouched
    Oxford5k the revisited re-annotation (Radenovic et al. 2018) labels the other way: an
    Oxford negative that rOxford calls easy/hard, an Oxford good/ok that rOxford calls
    negative. Pairs rOxford does not judge (its junk, images it dropped) are counted apart."""
    if not ROXFORD.is_file():
        print("    (rOxford cross-check skipped: the revisited gnd sample is not present)")
        return
    from irviewer.formats.registry import read_dataset

    rox = read_dataset(ROXFORD, None)
    index = rox.gallery_index()
    by_image = {q.image: q for q in rox.queries}
    ds = opened.dataset

    def verdict(query_name: str, item: str, oxford_positive: bool) -> str:
        q = by_image.get(ds.queries[ds.query_by_name(query_name)].image)
        g = index.get(item)
        if q is None or g is None:
            return "unjudged"
        groups = [n for n in ("easy", "hard", "junk") if g in set(q.group(n).tolist())]
        if groups == ["junk"]:
            return "unjudged"
        rox_positive = bool(groups)
        return "other way" if rox_positive != oxford_positive else "same way"

    pos_groups = ("good", "ok")
    audit_pairs = [(x.query, x.item, x.labelled in pos_groups) for x in result.suspects
                   if x.query is not None and x.kind != "query_ground_truth"][:first]
    base = []
    for _, q, g in baseline_pairs(opened, "oxford"):
        query = ds.queries[q]
        pos = any(g in set(query.group(n).tolist()) for n in pos_groups)
        base.append((query.name, ds.gallery[g], pos))
        if len(base) == first:
            break
    for name, pairs in (("audit", audit_pairs), ("baseline", base)):
        verdicts = [verdict(*p) for p in pairs]
        print(f"    untouched Oxford5k, first {len(pairs)} pair suspects of the {name}: "
              f"rOxford labels {verdicts.count('other way')} the other way, "
              f"{verdicts.count('same way')} the same way, {verdicts.count('unjudged')} "
              "unjudged (its junk or not in it)")


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
    """Parse the options and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--untouched", type=int, default=0, metavar="N",
                        help="also list the first N suspects of the untouched Oxford5k")
    args = parser.parse_args()
    for noise in (1.5, 2.0, 2.5):
        synthetic(args.seed, noise)
    oxford(args.seed, args.untouched)


if __name__ == "__main__":
    main()
