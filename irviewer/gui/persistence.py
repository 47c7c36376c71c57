"""What the window remembers: its view as a session (File ▸ Save session, autosave), the
recent sessions (File ▸ Recent), and restoring a session's view once its data is open.

Every open dataset has a session file: the user's own ``.irv`` once saved, otherwise one
kept per dataset and set of methods in the user's data folder. The view is written to it
(the user's own file: to its ``~autosave`` sibling) whenever it changed, every few seconds
and on closing, atomically; so a crash loses at most those seconds, and reopening the same
files from File ▸ Recent comes back where one left off.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSettings, QStandardPaths

from irviewer.core.errors import InputError
from irviewer.session_file import (
    SessionFile,
    auto_session_path,
    autosave_path,
    load_session,
    options_json,
    recent_files_update,
    session_label,
)

if TYPE_CHECKING:
    from irviewer.gui.main_window import MainWindow

RECENT_KEY = "recent_sessions"
RECENT_LIMIT = 10


def data_folder() -> Path:
    """Return the folder for sessions kept for the user (created on first use)."""
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    folder = Path(base or Path.home() / ".irviewer") / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def view_state(window: MainWindow) -> SessionFile | None:
    """Return the window's current dataset, methods and view as a session (None: nothing
    is open)."""
    opened = window.opened
    if opened is None:
        return None
    request = opened.request
    sources = request.sources()
    method = window.method_box.currentText()
    names = list(opened.methods)
    selected = (opened.dataset.queries[window.current].name
                if window.current is not None else None)
    return SessionFile(
        dataset=request.dataset, descriptors=request.descriptors, rankings=request.rankings,
        active_method=names.index(method) if method in names else 0,
        images=request.options.images, format=request.format,
        options=options_json(request.options),
        protocol=window.protocol_box.currentText() or None,
        ap=window.ap_box.currentData(), self_match=window.self_box.currentData(),
        selected_query=selected, top_k=window.top_k, tile_size=window.grid.tile_size,
        show_ignored=window.show_ignored, filter_text=window.filter_edit.text(),
        failures_only=window.failures.isChecked(),
        ap_range=window.proxy.ap_range,
        window={"geometry": bytes(window.saveGeometry().toBase64()).decode("ascii"),
                "splitter": bytes(window.split.saveState().toBase64()).decode("ascii")},
    ) if sources else None


def apply_view(window: MainWindow, session: SessionFile) -> None:
    """Set the window's view from ``session`` (its data is already open): method,
    protocol, conventions, list depth, tile size, filters, selected query, layout.
    Values that no longer apply (a protocol the dataset lacks) are left as they are."""
    names = list(window.opened.methods) if window.opened else []
    if 0 <= session.active_method < len(names):
        window.method_box.setCurrentText(names[session.active_method])
    if session.protocol and window.protocol_box.findText(session.protocol) >= 0:
        window.protocol_box.setCurrentText(session.protocol)
    for box, value in ((window.ap_box, session.ap), (window.self_box, session.self_match)):
        box.setCurrentIndex(max(0, box.findData(value)))
    window.k_box.setValue(session.top_k)
    window.grid.set_tile_size(session.tile_size)
    window.ignored_box.setChecked(session.show_ignored)
    window.filter_edit.setText(session.filter_text)
    window.failures.setChecked(session.failures_only)
    window.set_ap_range(session.ap_range)
    geometry, splitter = session.window.get("geometry"), session.window.get("splitter")
    if geometry:
        window.restoreGeometry(QByteArray.fromBase64(geometry.encode("ascii")))
    if splitter:
        window.split.restoreState(QByteArray.fromBase64(splitter.encode("ascii")))
    if session.selected_query and window.opened is not None:
        with contextlib.suppress(InputError):  # the query is gone: keep the first one
            window.select_query(session.selected_query)


def autosave_target(window: MainWindow) -> Path | None:
    """Return where the window's view is autosaved: the user's session's ``~autosave``
    sibling, or the session kept for this dataset and set of methods."""
    if window.session_path is not None:
        return autosave_path(window.session_path)
    if window.opened is None:
        return None
    request = window.opened.request
    return auto_session_path(data_folder(), request.dataset, request.sources())


def recent_sessions(settings: QSettings) -> list[str]:
    """Return the recent session files, newest first, that still exist."""
    value = settings.value(RECENT_KEY, [])
    paths = [value] if isinstance(value, str) else list(value or [])
    return [p for p in paths if Path(p).is_file()]


def remember(settings: QSettings, path: Path) -> None:
    """Put ``path`` first in the recent sessions."""
    settings.setValue(RECENT_KEY, recent_files_update(recent_sessions(settings), str(path),
                                                      RECENT_LIMIT))
    settings.sync()


def label(path: str) -> str:
    """Return the menu label of a recent session file."""
    try:
        session = load_session(Path(path))
    except InputError:
        return Path(path).name
    own = "" if Path(path).parent == data_folder() else f"{Path(path).name}: "
    return own + session_label(session)

