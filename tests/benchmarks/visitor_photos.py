"""Visitor photos: how often ``irviewer search --demo`` names the right painting.

Run from the repository root (a script, not a test; needs the shared source paintings):

    python tests/benchmarks/visitor_photos.py [--source ../shared/demo-paintings]
                                              [--per-kind N] [--seed S] [--keep DIR]

For each of the 22 source paintings (the full-resolution reproductions the demo was built
from; no demo image is used) it makes N new 640-px visitor photos of every kind in
``tests/visitor.py`` (crop, perspective, light, blur, jpeg, combined), saves each as a
JPEG in a temporary folder (``--keep DIR`` keeps them), searches the demo's gallery with it
like ``irviewer search --demo`` and counts the photos whose first match is the right
painting (top-1) and those with the right painting among the first five (top-5), per kind
and overall. The photos are never used to build the demo.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402

from irviewer.collection.photo_search import open_demo_searcher  # noqa: E402
from tests.visitor import KINDS, visitor_photo  # noqa: E402

DEFAULT_SOURCE = ROOT.parent / "shared" / "demo-paintings"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--per-kind", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--keep", type=Path, help="keep the photos in this folder")
    args = parser.parse_args()
    paintings = sorted(args.source.glob("*.jpg"))
    if not paintings:
        print(f"visitor_photos.py: no *.jpg in {args.source}; give --source DIR",
              file=sys.stderr)
        return 2
    searcher = open_demo_searcher()
    hits = {k: [0, 0, 0] for k in KINDS}  # top-1, top-5, photos
    misses: dict[str, list[str]] = {k: [] for k in KINDS}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for p, path in enumerate(paintings):
            with Image.open(path) as im:
                painting = im.convert("RGB")
            for k, kind in enumerate(KINDS):
                for n in range(args.per_kind):
                    rng = np.random.default_rng([args.seed, p, k, n])
                    photo_path = folder / f"{path.stem}_{kind}{n + 1}.jpg"
                    visitor_photo(painting, kind, rng).save(photo_path, "JPEG", quality=90)
                    matches = searcher.search(photo_path, 5)
                    labels = [m.instance for m in matches]
                    hits[kind][0] += labels[0] == path.stem
                    hits[kind][1] += path.stem in labels
                    hits[kind][2] += 1
                    if labels[0] != path.stem:
                        misses[kind].append(f"{path.stem} -> {labels[0]}")
    elapsed = time.perf_counter() - start
    total = [sum(h[i] for h in hits.values()) for i in range(3)]
    print(f"{len(paintings)} paintings x {len(KINDS)} kinds x {args.per_kind} photos = "
          f"{total[2]} visitor photos (640 px), searched in the demo's "
          f"{searcher.dataset.n_gallery} gallery views; {elapsed:.0f} s in all")
    print(f"{'kind':12s} {'photos':>6s} {'top-1':>14s} {'top-5':>14s}")
    for kind, (t1, t5, n) in [*hits.items(), ("all", total)]:
        print(f"{kind:12s} {n:6d} {t1:4d} ({100 * t1 / n:5.1f} %) {t5:4d} ({100 * t5 / n:5.1f} %)")
    for kind, wrong in misses.items():
        if wrong:
            print(f"wrong first match, {kind}: {', '.join(wrong)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
