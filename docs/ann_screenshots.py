"""Make the screenshots of docs/ann.md on a real X display (run under ``xvfb-run`` with a
window manager, or on a desktop), from the demo:

    xvfb-run -a -s "-screen 0 1600x1000x24" sh -c \\
        "openbox & sleep 1; python docs/ann_screenshots.py [--out DIR]"

* ``ann_compare.png``: the window comparing the demo's exact ranking with an inverted file
  probing one list of eight (exact ↔ IVF): the ΔAP column, the query the index broke
  most shown, its two ranked lists side by side (the results that moved or vanished);
* ``ann_sweep.png``: File ▸ Add an approximate index method… with nprobe=1,2,4,8 swept: the
  sweep's figure and table.

The screen itself is captured (QScreen.grabWindow of the root window), not a widget
rendered offscreen. Needs the window's dependencies and irviewer[ann].
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

SWEEP = "IVF8,Flat:nprobe=1,2,4,8"
SPEC = "IVF8,Flat:nprobe=1"


def settle(app: QApplication, ms: int = 1500) -> None:
    """Let the window paint (thumbnails decode in threads) for ``ms`` milliseconds."""
    done: list[bool] = []
    QTimer.singleShot(ms, lambda: done.append(True))
    while not done:
        app.processEvents()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    app = QApplication.instance() or QApplication(["irviewer"])
    if app.platformName() in ("offscreen", "minimal"):
        print("run on an X display (xvfb-run), not offscreen", file=sys.stderr)
        return 2
    from irviewer.gui.main_window import MainWindow
    from irviewer.opening.request import OpenRequest, demo_paths

    manifest, strong = demo_paths()
    window = MainWindow(top_k=20)
    window.resize(1560, 940)
    window.move(0, 0)
    window.show()
    window.open_request(OpenRequest(manifest, (strong,)), sync=True)
    settle(app, 500)
    window.ann.start("strong.npz", SWEEP, sync=True)  # File ▸ Add an approximate index…
    sweep = window.ann.sweep
    assert sweep is not None, window.ann.last_error
    sweep.move(60, 40)
    sweep.raise_()
    settle(app)
    screen = app.primaryScreen()
    screen.grabWindow(0).copy(sweep.frameGeometry()).save(str(args.out / "ann_sweep.png"))
    sweep.close()
    ivf = f"strong.npz + {SPEC}"
    window.compare_mode.set_compared(ivf)  # what adding the sweep chose: its first setting
    ev = window.opened.evaluation(ivf, "instance")
    exact = window.opened.evaluation("strong.npz", "instance")
    worst = int((ev.per_query["AP"] - exact.per_query["AP"]).argmin())
    window.inspector.select(worst)
    settle(app)
    screen.grabWindow(0).copy(window.frameGeometry()).save(str(args.out / "ann_compare.png"))
    window.close()
    print(f"wrote {args.out / 'ann_compare.png'} and {args.out / 'ann_sweep.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
