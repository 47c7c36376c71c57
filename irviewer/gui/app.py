"""Starting the viewer: ``irviewer [DATASET -d DESCRIPTORS ...] [--screenshot PATH]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from irviewer.core.errors import InputError
from irviewer.gui.main_window import MainWindow
from irviewer.io.atomic import atomic_path
from irviewer.io.resources import resources_dir
from irviewer.opening.options import request_from_args
from irviewer.opening.request import SESSION_SUFFIX

__all__ = ["application", "request_from_args", "run", "screenshot"]


def application() -> QApplication:
    """Return the running QApplication, creating it once (with Python's garbage collection
    moved to the GUI thread: :data:`_COLLECTOR`)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(sys.argv[:1])
        app.setApplicationName("irviewer")
        app.setOrganizationName("irviewer")
        _COLLECTOR.append(collect_garbage_in_the_gui_thread())
        app.setDesktopFileName("irviewer")  # the Linux .desktop entry (packaging/)
        icon = resources_dir() / "icons" / "irviewer.png"
        if icon.is_file():
            app.setWindowIcon(QIcon(str(icon)))
    return app


def collect_garbage_in_the_gui_thread() -> object:
    """Turn Python's automatic cyclic garbage collection off and collect on a one-second
    timer in the GUI thread instead; return the collector (keep it).

    Automatic collection runs wherever an allocation crosses its threshold, worker threads
    included (thumbnail decoding, ranking); a collected cycle that holds a Qt widget then
    destroys it off the GUI thread, which corrupts Qt's list of top-level widgets and
    crashes later (seen as a segfault in GUI-test teardown, in ``topLevelWidgets()``).
    pyqtgraph's GarbageCollector is that timer."""
    from pyqtgraph.util.garbage_collector import GarbageCollector

    return GarbageCollector(interval=1.0)


#: The running application's collector (:func:`collect_garbage_in_the_gui_thread`).
_COLLECTOR: list[object] = []


#: Qt's PNG "quality" for screenshots: zlib's fast levels, as small a file as Qt's default
#: (level 6 costs 50 ms on a 1480 x 900 window, this about 30).
PNG_QUALITY = 80


def screenshot(window: MainWindow, path: Path, select: str | None = None,
               present: bool = False) -> None:
    """Show ``window`` (offscreen under the offscreen platform), select ``select``, load
    every visible thumbnail (and compare mode's statistics), render the window
    (``present``: presentation mode) to the image ``path`` (PNG; another suffix Qt writes,
    e.g. ``.jpg``, in its format), written atomically. InputError with one sentence when it
    cannot be written."""
    app = application()
    window.show()
    if select:
        window.select_query(select)
    app.processEvents()
    window.compare_mode.wait()  # compare mode's statistics, computed off the GUI thread
    window.cache.load_now([*window.inspector.visible_thumbnails(),
                           *window.compare_mode.visible_thumbnails()])
    if present:
        window.presentation.enter()
        window.presentation.view.load_now()
    app.processEvents()
    shown = window.presentation.view if present else window
    kind = Path(path).suffix.lstrip(".").upper() or "PNG"
    quality = PNG_QUALITY if kind == "PNG" else -1
    with atomic_path(Path(path)) as tmp:
        if not shown.grab().save(str(tmp), kind, quality):
            raise InputError(f"{path}: cannot write a {kind} image there")


def run(args: argparse.Namespace) -> int:
    """Open the window on what ``args`` name; with ``--screenshot``, render it offscreen with
    every visible thumbnail loaded, save a PNG and return 0 (InputError on bad input, its
    placeholders kept for the command line to word).
    ``args`` are the viewer's command line (checked: :func:`irviewer.cli.main`), turned
    into what to open by the opening layer (:func:`request_from_args`)."""
    session = args.dataset is not None and args.dataset.suffix == SESSION_SUFFIX
    app = application()
    window = MainWindow(top_k=args.results, keep_sessions=args.screenshot is None)

    def start(sync: bool) -> None:
        if session:
            window.open_session(args.dataset, sync=sync)
        else:
            window.open_request(request_from_args(args), sync=sync)

    if args.screenshot is None:
        if args.kiosk:  # the kiosk is the only window: the inspector shows only for staff
            window.opening.failed.connect(lambda *_: window.show())  # (or when it fails)
            window.presentation.kiosk_when_opened(args.idle, args.watch)
        else:
            window.show()
            if args.present:
                window.presentation.enter_when_opened()
        start(sync=False)
        return app.exec()
    start(sync=True)
    try:
        if window.last_error is not None:  # worded for the command line by its caller
            raise InputError(window.last_error)
        screenshot(window, args.screenshot, args.select, args.present)
    finally:
        window.close()
    return 0
