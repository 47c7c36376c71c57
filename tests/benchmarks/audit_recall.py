"""How well ``irviewer audit`` finds label errors: planted ones whose truth is known, and the
ones a re-annotation found. One command prints every table of ``docs/audit.md``'s "How well it
finds errors":

    python tests/benchmarks/audit_recall.py            # (a), (b) and (c)
    python tests/benchmarks/audit_recall.py --plant-seeds 0 1 2 3 4   # more planted sets
    python tests/benchmarks/audit_recall.py --skip-roxford   # (a) and (b) only

(a) A synthetic instance set (tests/core/audit_synth.py) with two descriptor files: N gallery
    images relabelled to another instance (planted errors) and as many correctly labelled
    images made very hard (decoys), at three noise levels. Precision@N = planted images among
    the first N distinct images the suspects name; recall@2N / @3N; decoys among the first 2N.
(b) The real Oxford5k gt_files (../shared/samples/oxford5k-gt) with its real 128-d CaffeNet
    fc7 descriptors (../shared/samples/oxford5k-lopq-fc7-features), errors planted by
    tests/core/oxford_plants.py: for each of four landmarks, two images taken out of the
    good/ok lists of all five queries of the landmark and two images of other landmarks put
    into its good lists (a modified copy in a temporary folder). Each (landmark, image) is one
    planted problem, as an annotator meets it; the listing is scored entry by entry (an entry
    naming the five queries sharing a list is one). Methods: the fc7 file alone, and with a
    second file made from it (PCA-whitened, 64-d).
(c) The untouched Oxford5k judged by the revisited re-annotation (tests/benchmarks/
    audit_roxford.py): precision of the first 25 / 50 / 100 pair suspects by direction, for
    the audit and the baselines, and what the first confirmed and unconfirmed suspects show.

Baseline ("rank percentile"): a negative's score is how near the top it ranks, a positive's
how near the bottom, averaged over the methods; for image-label sets an image takes the highest
score of its pairs.
"""

from __future__ import annotations

import argparse
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
from tests.core.oxford_plants import LANDMARKS, plant, planted_scores  # noqa: E402

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


def oxford(seeds: tuple[int, ...]) -> None:
    """Print the annotator's targets on the Oxford5k with planted problems, per seed."""
    if not GT.is_dir() or not FC7.is_dir():
        print("(b) skipped: the shared Oxford5k samples are not present")
        return
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        first, second = oxford_methods(tmp)
        print(f"\n(b) Oxford5k, real gt_files and fc7 descriptors; landmarks "
              f"{', '.join(LANDMARKS)}: 2 images taken out of the good/ok lists of all five "
              "queries of each, 2 images of other landmarks added to their good lists; 16 "
              "planted problems (8 taken, 8 added). Targets: >= 75 % of the problems in the "
              "first 48 entries, none twice, >= 6 of the 8 added in the first 24.\n")
        print("| seed | methods | planted in the first 48 (taken / added) | added in the "
              "first 24 | problems listed twice in the first 48 | pair entries naming 5 "
              "queries |")
        print("|---|---|---|---|---|---|")
        for seed in seeds:
            plants = plant(GT, tmp / f"gt{seed}", seed)
            for methods in ((first,), (first, second)):
                opened = open_now(OpenRequest(tmp / f"gt{seed}", descriptors=methods,
                                              options=ReadOptions()))
                result = audit(opened.dataset,
                               {k: m.ranking for k, m in opened.methods.items()})
                sc = planted_scores(result.suspects, plants)
                pairs = [s for s in result.suspects[:48] if s.query is not None]
                five = sum(len(s.queries) == 5 for s in pairs)
                print(f"| {seed} | {' + '.join(opened.methods)} | {sc.recall:.2f} "
                      f"({sc.taken} / {sc.added} of 8) | {sc.added_early} of 8 | "
                      f"{sc.repeats} | {five} of {len(pairs)} |")


def main() -> None:
    """Parse the options and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plant-seeds", type=int, nargs="+", default=[0, 1, 2],
                        help="seeds of the planted Oxford5k sets (b)")
    parser.add_argument("--skip-roxford", action="store_true",
                        help="leave out (c), the untouched Oxford5k judged by rOxford")
    args = parser.parse_args()
    synthetic(args.seed)
    oxford(tuple(args.plant_seeds))
    if not args.skip_roxford:
        print()
        audit_roxford.report()


if __name__ == "__main__":
    main()
