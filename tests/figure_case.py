"""A tiny instance set with real image files (and one missing) whose rankings are known by
construction, for the figure tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

MANIFEST = """image,instance,role,title
qa.jpg,a,query,Query A
qb.jpg,b,query,
a1.jpg,a,gallery,
a2.jpg,a,gallery,
b1.jpg,b,gallery,
c1.jpg,c,gallery,
c2.jpg,c,gallery,
"""
NAMES = ["qa", "qb", "a1", "a2", "b1", "c1", "c2"]
#: first.npz: qa ranks a1 (1.0), c1 (0.8), a2 (0.6), b1, c2 (< 0):  AP (1 + 2/3) / 2 = 5/6
#:            qb ranks b1 (0.9), ... : AP 1
FIRST = {"qa": [1, 0, 0], "qb": [0, 1, 0], "a1": [1, 0, 0], "c1": [0.8, 0, 0.6],
         "a2": [0.6, 0, 0.8], "b1": [-0.1, 0.9, 0.42], "c2": [-0.5, -0.5, 0.7]}
#: second.npz: qa ranks c1 (0.95) first, then a1, a2: AP (1/2 + 2/3) / 2 = 7/12; qb as above
SECOND = {**FIRST, "c1": [0.95, 0, 0.31], "a1": [0.9, 0, 0.43], "a2": [0.5, 0, 0.86]}
#: c2.jpg is not written: its tile is a named placeholder.
MISSING = "c2"


def make_case(folder: Path) -> Path:
    """Write the manifest, an image per name (but c2) and first.npz / second.npz; return
    the manifest's path."""
    (folder / "set.csv").write_text(MANIFEST)
    for i, name in enumerate(NAMES):
        if name != MISSING:
            colour = (40 * i % 256, 90, 200 - 20 * i)
            Image.new("RGB", (120, 90), colour).save(folder / f"{name}.jpg")
    for stem, vec in (("first", FIRST), ("second", SECOND)):
        np.savez(folder / f"{stem}.npz", names=np.array(NAMES),
                 features=np.array([vec[n] for n in NAMES], dtype=np.float32))
    return folder / "set.csv"
