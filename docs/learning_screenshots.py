"""Make the screenshot of docs/metrics.md's metric-learning section on a real X display (or
offscreen when there is none):

    xvfb-run -a -s "-screen 0 1600x1000x24" python docs/learning_screenshots.py [--out DIR]

The demo's 176 photos of 22 paintings, listed as a Stanford Online Products list
(``Ebay_test.txt``: one class per painting), are a leave-one-out set: every photo a query
against the 175 others. The script opens it with the demo's weak and strong descriptors and
writes ``leave-one-out-window.png``: the weak method, the failures only (P@1 = 0), and the
worst of the failing queries whose first same-painting result is still among the first
eight (ranks 5 to 8) selected.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))

import numpy as np  # noqa: E402
from collection_screenshots import save  # noqa: E402


def write_demo_list(folder: Path, demo: Path) -> Path:
    """Write the demo's photos as an ``Ebay_test.txt`` in ``folder`` (one class per
    painting, paths under ``images/``, linked to the demo's images); return the folder."""
    classes: dict[str, int] = {}
    lines = ["image_id class_id super_class_id path"]
    with (demo / "demo.csv").open(encoding="utf-8") as f:
        for i, row in enumerate(csv.DictReader(f), start=1):
            label = classes.setdefault(row["instance"], 11319 + len(classes))
            lines.append(f"{i} {label} 1 {row['image']}")
    (folder / "Ebay_test.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "images").symlink_to(demo / "images", target_is_directory=True)
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    from irviewer.gui.app import application
    from irviewer.gui.main_window import MainWindow
    from irviewer.opening.request import OpenRequest, demo_paths

    manifest, strong = demo_paths()
    weak = strong.with_name("weak.npz")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "demo-as-sop"
        folder.mkdir()
        write_demo_list(folder, manifest.parent)
        app = application()
        window = MainWindow(top_k=20, keep_sessions=False)
        window.resize(1480, 900)
        window.show()
        window.open_request(OpenRequest(folder, (weak, strong)), sync=True)
        ev = window.inspector.evaluation
        assert ev is not None
        # A failure whose first right answer is still in the window's first rows.
        first = ev.per_query["first_positive_rank"]
        ap = np.where((first >= 4) & (first <= 7), ev.per_query["AP"], np.inf)
        window.inspector.queries.set_filters("", True, None)
        window.inspector.select(int(np.argmin(ap)))
        app.processEvents()
        window.cache.load_now(window.inspector.visible_thumbnails())
        app.processEvents()
        save(window.grab(), args.out / "leave-one-out-window.png")
        window.close()
    print(f"wrote {args.out / 'leave-one-out-window.png'} ({app.platformName()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
