"""Make the screenshots of docs/metrics.md's ties and conventions sections on a real X
display (or offscreen when there is none):

    xvfb-run -a -s "-screen 0 1600x1000x24" python docs/ties_screenshots.py [--out DIR]

Binary descriptors tie by the hundreds: the script cuts the demo's strong descriptors to the
signs of 12 of their dimensions (dimensions 0-11 and 12-23: two methods), opens the demo
with both, and writes:

* ``ties-window.png``: a query whose AP depends on the order of its tied scores (the AP
  column's ≈, the summary's tie range) with the Conventions tab shown;
* ``ties-compare.png``: compare mode between the two, the ΔAPs that the order of tied scores
  alone could make in grey with ≈, and the summary line saying how many.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from tests.core.helpers import binary_descriptors  # noqa: E402

sys.path.insert(0, str(ROOT / "docs"))
from collection_screenshots import save  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    from irviewer.gui.app import application
    from irviewer.gui.main_window import MainWindow
    from irviewer.opening.request import OpenRequest, demo_paths

    manifest, strong = demo_paths()
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "signs-0-11.npz", Path(tmp) / "signs-12-23.npz"
        binary_descriptors(strong, a, 0)
        binary_descriptors(strong, b, 12)
        app = application()
        window = MainWindow(top_k=20, keep_sessions=False)
        window.resize(1480, 900)
        window.show()
        window.open_request(OpenRequest(manifest, (a, b)), sync=True)
        ev = window.inspector.evaluation
        assert ev is not None
        ties = ev.ties.per_query
        widest = int(np.nanargmax(ties["AP_best"] - ties["AP_worst"]))
        window.inspector.select(widest)
        window.plots.overview.setCurrentIndex(window.plots.conventions_tab)
        app.processEvents()
        window.cache.load_now(window.inspector.visible_thumbnails())
        app.processEvents()
        save(window.grab(), args.out / "ties-window.png")
        window.compare_mode.set_compared(b.name)
        app.processEvents()
        window.compare_mode.wait()
        app.processEvents()
        window.cache.load_now(window.inspector.visible_thumbnails()
                              + window.compare_mode.visible_thumbnails())
        app.processEvents()
        save(window.grab(), args.out / "ties-compare.png")
        window.close()
    print(f"wrote {args.out / 'ties-window.png'} and {args.out / 'ties-compare.png'} "
          f"({app.platformName()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
