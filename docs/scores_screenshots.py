"""Make the screenshot of docs/window.md's Scores tab from the built-in demo, on the
display the window opens on (run it under ``xvfb-run`` to see it on a real X server; with
``QT_QPA_PLATFORM=offscreen`` it renders offscreen):

    xvfb-run -a -s "-screen 0 1600x1000x24" python docs/scores_screenshots.py [--out DIR]

``scores-tab.png``: the Scores tab of the demo's strong descriptors, one query selected,
the threshold at 0.25 (the query's and all queries' precision and recall under it). (The
compare mode's badges are in docs/rerank_window.png, made as docs/rerank.md says.)

Needs the window's dependencies (PySide6); nothing is downloaded.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from irviewer.gui.app import application, screenshot  # noqa: E402
from irviewer.gui.main_window import MainWindow  # noqa: E402
from irviewer.opening.request import demo_request  # noqa: E402
from irviewer.view.score_view import step_of_score  # noqa: E402

QUERY = "images/cezanne_boy-in-the-red-vest_query"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    app = application()
    window = MainWindow(top_k=50, keep_sessions=False)
    window.resize(1480, 900)
    window.show()
    window.open_request(demo_request(), sync=True)
    window.select_query(QUERY)
    window.split.setSizes([380, 640, 460])
    window.plots.setSizes([300, 560])
    window.scores.show_tab()
    app.processEvents()
    window.scores.wait()
    app.processEvents()
    window.scores.set_step(step_of_score(0.25))
    screenshot(window, args.out / "scores-tab.png", QUERY)
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
