"""Make the screenshot of docs/api.md with the Python API itself (offscreen):

    python docs/api_screenshots.py [--out DIR]

The demo's 176 photos of 22 paintings as a leave-one-out set given from Python — the weak
descriptors' rows as a numpy array, one label per row (the painting) — every photo a query
against the 175 others. ``irviewer.view(..., screenshot=...)`` writes ``api-leave-one-out.png``
with the failing query (P@1 = 0) of lowest AP selected, its pictures from the demo's folder.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import irviewer  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    demo = irviewer.demo()
    with np.load(demo.weak) as z:
        embeddings, names = z["features"], [str(n) for n in z["names"]]
    with demo.dataset.open(encoding="utf-8") as f:
        painting = {row["image"].rsplit(".", 1)[0]: row["instance"] for row in csv.DictReader(f)}
    labels = [painting[n] for n in names]
    result = irviewer.evaluate(embeddings, labels=labels, names=names)
    failing = np.flatnonzero(result.per_query("P@1") == 0)
    ap = result.per_query("AP")
    worst = result.queries[int(failing[np.argmin(ap[failing])])]
    out = args.out / "api-leave-one-out.png"
    irviewer.view(embeddings, labels=labels, names=names, images=demo.images, select=worst,
                  screenshot=out)
    print(f"{out}: {worst} (AP {100 * ap[result.queries.index(worst)]:.1f}, P@1 0), "
          f"{len(failing)} of {len(names)} queries fail at rank 1")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
