"""Make the screenshots of docs/search.md's answers, on a real X display when there is one
(``xvfb-run -a -s "-screen 0 1600x1000x24" sh -c "openbox & python
docs/answer_screenshots.py"``: a window manager makes presentation mode full screen), from
the 22 public-domain paintings (``../shared/demo-paintings``) and scikit-image's CC0
cameraman photo (``../shared/samples``), which the collection does not hold:

    python docs/answer_screenshots.py [--shared DIR] [--out DIR]

It indexes the paintings with their titles into a temporary collection
(``docs/collection_screenshots.py``'s titles file), photographs the cameraman hanging on a
wall from the side (``tests/visitor.py``), searches it in the window and in presentation
mode, and grabs the screen each time:

* ``answer-window.png``: the window's photo bar and header: "Not in this collection";
* ``answer-present.png``: presentation mode saying the same, its matches headed "closest".

Needs the window's dependencies (PySide6); nothing is downloaded.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
if not os.environ.get("DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from irviewer.cli import main as irviewer  # noqa: E402
from tests.visitor import phone_photo  # noqa: E402


def titles_csv(source: Path, out: Path) -> None:
    """Write the paintings' titles file (docs/collection_screenshots.py's; importing it
    must not choose the offscreen platform for this script)."""
    platform = os.environ.get("QT_QPA_PLATFORM")
    spec = importlib.util.spec_from_file_location(
        "collection_screenshots", ROOT / "docs" / "collection_screenshots.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if platform is None:
        os.environ.pop("QT_QPA_PLATFORM", None)
    module.titles_csv(source, out)


def settle(app, seconds: float) -> None:  # type: ignore[no-untyped-def]
    """Let the window paint for ``seconds`` (a real display draws asynchronously)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.05)


def grab(app, widget, path: Path) -> None:  # type: ignore[no-untyped-def]
    """Write the screen (a real display) or the widget (offscreen) to ``path``."""
    screen = app.primaryScreen()
    image = screen.grabWindow(0) if os.environ.get("DISPLAY") else widget.grab()
    if not image.save(str(path)):
        raise SystemExit(f"{path}: cannot write the screenshot there")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    source = args.shared / "demo-paintings"
    args.out.mkdir(parents=True, exist_ok=True)
    from irviewer.gui.app import application
    from irviewer.gui.main_window import MainWindow
    from irviewer.opening.request import OpenRequest

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        titles_csv(source, work / "titles.csv")
        if irviewer(["index", str(source), "--out", str(work / "Our collection"),
                     "--titles", str(work / "titles.csv")]) != 0:
            return 1
        with Image.open(args.shared / "samples" / "scikit-image-cc0-photos" / "camera.png") \
                as im:
            photo = phone_photo(im.convert("RGB"), "angle", np.random.default_rng(5))
        photo.save(work / "cameraman.jpg", quality=90)
        app = application()
        window = MainWindow(top_k=20, keep_sessions=False)
        window.resize(1560, 940)
        window.move(0, 0)
        window.show()
        window.open_request(OpenRequest(work / "Our collection"), sync=True)
        window.photo_search.search(work / "cameraman.jpg", sync=True)
        answer = window.photo_search.answer
        print(f"window: {answer.sentence() if answer else 'no answer'}")
        window.cache.load_now(window.inspector.visible_thumbnails())
        settle(app, 1.5)
        grab(app, window, args.out / "answer-window.png")
        window.presentation.enter()
        window.photo_search.show()
        window.presentation.view.load_now()
        settle(app, 3)
        print(f"presentation: {window.presentation.view.slide.query_caption}")
        grab(app, window.presentation.view, args.out / "answer-present.png")
        window.presentation.leave()
        window.close()
    print(f"wrote {args.out / 'answer-window.png'} and {args.out / 'answer-present.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
