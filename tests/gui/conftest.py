"""GUI test set-up: settings (recent files, window layout) go to a temporary folder, never
to the user's own irviewer settings (the user's data folder: tests/conftest.py)."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable

import pytest
from PySide6.QtCore import QSettings


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path_factory, monkeypatch):
    """Point QSettings' user scope at a fresh folder for each test."""
    folder = tmp_path_factory.mktemp("settings")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    return folder


@pytest.fixture(autouse=True)
def garbage_collected_in_the_gui_thread():
    """Collect cyclic garbage in the GUI thread only, as the application does
    (``irviewer.gui.app._COLLECTOR``): during a test automatic collection is off (it could
    run in a worker thread and destroy a widget there), and what the test left is collected
    here, on the main thread, when it ends."""
    gc.disable()
    yield
    gc.collect()
    gc.enable()


@pytest.fixture(autouse=True)
def no_window_leaks(qapp, garbage_collected_in_the_gui_thread):
    """Fail a test that leaves a window open (qtbot.addWidget closes what a test made)."""
    yield  # qtbot's own teardown (closing what addWidget registered) runs before this
    qapp.processEvents()
    left = [w for w in qapp.topLevelWidgets() if w.isVisible()]
    for w in left:
        w.close()
    assert not left, f"windows left open: {[type(w).__name__ for w in left]}"


@pytest.fixture(autouse=True)
def no_save_question(monkeypatch):
    """Closing a window with an unsaved named session asks (a modal dialog); tests that do
    not answer it themselves discard."""
    from irviewer.gui.sessions.controller import Sessions

    monkeypatch.setattr(Sessions, "_ask_save", lambda self, path: "discard")


@pytest.fixture(autouse=True)
def no_unsaved_corrections_question(monkeypatch):
    """Closing a window whose corrections could not be saved asks (a modal dialog); tests
    that do not answer it themselves discard."""
    from irviewer.gui.corrections import CorrectionsUI

    monkeypatch.setattr(CorrectionsUI, "_ask_unsaved", lambda self, count, why: "discard")


@pytest.fixture
def make_opening_slow(monkeypatch) -> Callable[[], threading.Event]:
    """Return a function that makes every later opening take seconds (a generator that
    reports 1,000 steps of progress) and returns an event set when that generator is
    closed (cancelled or made stale)."""
    from irviewer.gui import workers
    from irviewer.opening.opener import Step

    def make_slow() -> threading.Event:
        closed = threading.Event()

        def slow(_request):  # type: ignore[no-untyped-def]
            try:
                for i in range(1000):
                    time.sleep(0.005)
                    yield Step("ranking", i, 1000)
            finally:
                closed.set()

        monkeypatch.setattr(workers, "iter_open", slow)
        return closed

    return make_slow


@pytest.fixture
def demo_window(qtbot):
    """The window with the demo open (both descriptor files), shown, its first query
    selected."""
    from irviewer.gui.main_window import MainWindow
    from irviewer.opening.request import demo_request

    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    w.show()
    w.open_request(demo_request(), sync=True)
    return w
