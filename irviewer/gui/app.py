"""Starting the viewer: ``irviewer [DATASET -d DESCRIPTORS] [--screenshot PATH]``."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication

from irviewer.gui.main_window import MainWindow
from irviewer.session import demo_paths


def application() -> QApplication:
    """Return the running QApplication, creating it once."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(sys.argv[:1])
        app.setApplicationName("irviewer")
    return app


def run(dataset: Path | None, descriptors: Path | None, screenshot: Path | None,
        select: str | None, top_k: int) -> int:
    """Open the window (on the demo without a dataset); with ``screenshot``, render it
    offscreen with every visible thumbnail loaded, save a PNG and return 0."""
    if dataset is None:
        dataset, descriptors = demo_paths()
    if descriptors is None:
        print("irviewer: error: give the dataset's descriptor file with -d FILE",
              file=sys.stderr)
        return 2
    app = application()
    window = MainWindow(top_k=top_k)
    if screenshot is None:
        window.show()
        window.open_paths(dataset, descriptors)
        return app.exec()
    window.open_paths(dataset, descriptors, sync=True)
    if window.last_error is not None:
        print(f"irviewer: error: {window.last_error}", file=sys.stderr)
        return 2
    window.show()
    if select:
        window.select_query(select)
    app.processEvents()
    window.cache.load_now(window.visible_thumbnails())
    app.processEvents()
    ok = window.grab().save(str(screenshot))
    window.close()
    if not ok:
        print(f"irviewer: error: {screenshot}: cannot write the PNG", file=sys.stderr)
        return 2
    return 0
