"""Benchmark: how fast ``irviewer search --demo`` answers one 640-px visitor photo.

Run from the repository root (a script, not a test; pytest does not collect this folder):

    python tests/benchmarks/bench_search.py [--photos N] [--repeat R]

Makes N visitor-style 640-px photos from demo gallery images in a temporary folder (JPEG
files, as a phone would deliver them), opens the demo once (not timed per photo), then for
each photo times, median of R runs:

* ``decode_s``: reading the JPEG file safely (``read_rgb``);
* ``describe_s``: the bare descriptor (``demo-vlad``: dense RootSIFT + colour at four
  scales, PCA, VLAD over 128 words) of the decoded image: the baseline;
* ``rank_s``: scoring the 154 gallery vectors and taking the top 5;
* ``search_s``: ``Searcher.search(path)``, everything a photo costs, end to end;

and prints each, and search as a ratio to the bare descriptor (the rest is overhead).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402

from irviewer.collection.photo_search import open_demo_searcher  # noqa: E402
from irviewer.formats.image_files import read_rgb  # noqa: E402
from tests.visitor import visitor_photo  # noqa: E402


def median_time(work, repeat: int) -> float:  # type: ignore[no-untyped-def]
    """Return the median wall time of ``repeat`` calls of ``work()``, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--photos", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    start = time.perf_counter()
    searcher = open_demo_searcher()
    print(f"opening the demo (manifest, strong.npz, vocabulary): "
          f"{time.perf_counter() - start:.3f} s, once")
    rng = np.random.default_rng(5)
    gallery = searcher.dataset.gallery
    picks = [gallery[i] for i in rng.choice(len(gallery), args.photos, replace=False)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, name in enumerate(picks):
            with Image.open(searcher.dataset.image_paths[name]) as im:
                photo = visitor_photo(im, "combined", rng)
            path = Path(tmp) / f"photo{i}.jpg"
            photo.save(path, "JPEG", quality=90)
            image = read_rgb(path)[0]
            vector = searcher.describe(image)
            searcher.search(path)  # warm-up
            rows.append((photo.size,
                         median_time(lambda p=path: read_rgb(p), args.repeat),
                         median_time(lambda im=image: searcher.extractor(im), args.repeat),
                         median_time(lambda v=vector: searcher.rank(v, 5), args.repeat),
                         median_time(lambda p=path: searcher.search(p, 5), args.repeat)))
    print(f"{'photo':>10s} {'decode_s':>9s} {'describe_s':>11s} {'rank_s':>9s} "
          f"{'search_s':>9s} {'search/describe':>16s}")
    for (w, h), dec, desc, rank, total in rows:
        print(f"{w:>4d} x {h:<3d} {dec:9.4f} {desc:11.4f} {rank:9.5f} {total:9.4f} "
              f"{total / desc:16.2f}")
    med = [statistics.median(col) for col in zip(*(r[1:] for r in rows), strict=True)]
    print(f"{'median':>10s} {med[0]:9.4f} {med[1]:11.4f} {med[2]:9.5f} {med[3]:9.4f} "
          f"{med[3] / med[1]:16.2f}")
    print(f"time per photo (median of {len(rows)} photos): {med[3]:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
