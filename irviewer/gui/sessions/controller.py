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
import os
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, QSettings, QStandardPaths, QTimer
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox, QWidget

from irviewer.core.errors import InputError
from irviewer.gui.sessions.places import (
    auto_session_path,
    autosave_path,
    recent_files_update,
    session_label,
)
from irviewer.io.user_data import adopt_files, user_subfolder
from irviewer.opening.opener import Opened
from irviewer.opening.request import SESSION_SUFFIX, OpenRequest
from irviewer.opening.session_file import SessionFile, load_session, open_request, save_session
from irviewer.opening.session_options import options_json
from irviewer.view.view_state import SORT_ORDERS, ViewState

RECENT_KEY = "recent_sessions"
RECENT_LIMIT = 10
AUTOSAVE_MS = 5000


def data_folder() -> Path:
    """Return the folder for sessions kept for the user: ``sessions`` in the user's data
    folder (:func:`irviewer.io.user_data.user_data_folder`, the one rule for it), created
    on first use. Sessions an earlier irviewer kept in Qt's folder (:func:`legacy_folder`)
    are moved here first, so its users find their views again."""
    folder = user_subfolder("sessions")
    adopt_files(legacy_folder(), folder)
    return folder


def legacy_folder() -> Path:
    """Return where irviewer kept the window's sessions before the user data folder rule:
    ``sessions`` in Qt's application data folder (``~/.local/share/irviewer/irviewer`` on
    Linux, the application and organisation both named irviewer), or in ``~/.irviewer``
    where Qt names none."""
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return Path(base or Path.home() / ".irviewer") / "sessions"


def session_of(request: OpenRequest, methods: list[str], view: ViewState,
               geometry: str = "") -> SessionFile | None:
    """Return the session that reopens ``request`` with ``view`` (``methods``: the opened
    methods' names in order; ``geometry``: the window's base64 geometry), its re-ranked and
    approximate methods included; None when the request has no method file."""
    if not request.sources():
        return None
    window = {"geometry": geometry} if geometry else {}
    if view.splitter_sizes:
        window["sizes"] = ",".join(str(int(s)) for s in view.splitter_sizes)
    if view.sort_column is not None:
        window["sort"] = f"{view.sort_column} {view.sort_order}"
    key = request.method_key(view.method) if view.method in methods else None
    other = request.method_key(view.compare_with) if view.compare_with in methods else None
    return SessionFile(
        dataset=request.dataset, descriptors=request.descriptors, rankings=request.rankings,
        active_method=key[0] if key is not None else 0,
        active_rerank=key[1] if key is not None else None,
        reranked=request.reranked_pairs(), approximate=request.approximate_pairs(),
        engine=engine_of(request),
        engines=tuple((i, _kept(ref)) for i, ref in request.engines),
        images=request.options.images, format=request.format,
        options=options_json(request.options), protocol=view.protocol, ap=view.ap,
        self_match=view.self_match, selected_query=view.selected_query, top_k=view.top_k,
        tile_size=view.tile_size, show_ignored=view.show_ignored,
        filter_text=view.filter_text, failures_only=view.failures_only,
        ap_range=view.ap_range, window=window, corrections=request.corrections,
        ann_names=request.ann_names,
        compare_method=other[0] if other is not None else None,
        compare_rerank=other[1] if other is not None else None)


def engine_of(request: OpenRequest) -> tuple[str, str, str | None] | None:
    """Return the request's vector engine as a session keeps it (URI, collection, names
    field), a Milvus Lite file by its absolute path; None without one."""
    if not request.engine or not request.collection:
        return None
    return _kept((request.engine, request.collection, request.engine_names))


def _kept(ref: tuple[str, str, str | None]) -> tuple[str, str, str | None]:
    """Return a vector engine's (URI, collection, names field) as a session keeps it: a
    Milvus Lite file by its absolute path."""
    uri = ref[0] if "://" in ref[0] else os.path.abspath(ref[0])
    return uri, ref[1], ref[2]


def view_of(session: SessionFile, methods: list[str]) -> ViewState:
    """Return the view ``session`` keeps (``methods``: the opened methods' names in order);
    window entries that do not parse are left out (the window's defaults apply)."""
    sizes: tuple[int, ...] = ()
    with contextlib.suppress(ValueError):
        sizes = tuple(int(s) for s in session.window.get("sizes", "").split(",") if s)
    sort_column, sort_order = None, "ascending"
    parts = session.window.get("sort", "").split()
    if len(parts) == 2 and parts[0].isdigit() and parts[1] in SORT_ORDERS:
        sort_column, sort_order = int(parts[0]), parts[1]
    request = open_request(session)
    shown = request.method_named(session.active_method, session.active_rerank)
    other = (request.method_named(session.compare_method, session.compare_rerank)
             if session.compare_method is not None else None)
    return ViewState(
        method=shown if shown in methods else None,
        compare_with=other if other in methods else None,
        protocol=session.protocol, ap=session.ap, self_match=session.self_match,
        selected_query=session.selected_query, filter_text=session.filter_text,
        failures_only=session.failures_only, ap_range=session.ap_range,
        top_k=session.top_k, tile_size=session.tile_size, show_ignored=session.show_ignored,
        sort_column=sort_column, sort_order=sort_order, splitter_sizes=sizes)


def autosave_target(session_path: Path | None, request: OpenRequest | None) -> Path | None:
    """Return where the view is autosaved: the user's session's ``~autosave`` sibling, or
    the session kept for this dataset and set of methods (None: nothing is open)."""
    if session_path is not None:
        return autosave_path(session_path)
    if request is None:
        return None
    return auto_session_path(data_folder(), request.dataset, request.sources())


def recent_sessions(settings: QSettings) -> list[str]:
    """Return the recent session files, newest first, that still exist (a kept session an
    earlier irviewer listed from Qt's folder, under its new place in :func:`data_folder`)."""
    value = settings.value(RECENT_KEY, [])
    paths = [value] if isinstance(value, str) else (
        list(value) if isinstance(value, list | tuple) else [])
    kept, legacy = data_folder(), legacy_folder()  # the earlier version's files adopted
    found = []
    for p in paths:
        if Path(p).parent == legacy and not Path(p).is_file():
            p = str(kept / Path(p).name)
        if Path(p).is_file() and p not in found:
            found.append(p)
    return found


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



class SessionHost(Protocol):
    """What :class:`Sessions` needs from the window: the open data, its view, its layout,
    opening a request, and showing an error or a status message."""

    @property
    def opened(self) -> Opened | None: ...
    def view_state(self) -> ViewState: ...
    def apply_view(self, state: ViewState) -> None: ...
    def geometry_state(self) -> str: ...
    def restore_geometry_state(self, state: str) -> None: ...
    def open_request(self, request: OpenRequest, sync: bool = False) -> None: ...
    def show_error(self, message: str) -> None: ...
    def show_message(self, message: str) -> None: ...


class Sessions(QObject):
    """Session files for the window: open, save, save as, autosave every few seconds and on
    closing, File ▸ Recent. ``path`` is the user's own ``.irv`` (None until saved or opened);
    ``ask_restore(backup)`` decides whether a newer autosave is restored and
    ``ask_save(path)`` whether a changed view is saved on closing (dialogs; tests replace
    them). With ``keep`` False (a ``--screenshot`` run) nothing is kept and nothing asked:
    a session opens as saved, and closing writes nothing."""

    def __init__(self, host: SessionHost, parent: QWidget, settings: QSettings,
                 keep: bool = True) -> None:
        super().__init__(parent)
        self.host, self.parent_widget, self.settings, self.keep = host, parent, settings, keep
        self.path: Path | None = None
        self._pending: tuple[Path | None, SessionFile] | None = None
        self._autosaved: str | None = None
        self.timer = QTimer(self)
        self.timer.setInterval(AUTOSAVE_MS)
        self.timer.timeout.connect(self.autosave)
        self.ask_restore = self._ask_restore
        self.ask_save = self._ask_save

    # -- opening -----------------------------------------------------------------------------
    def open_session(self, path: Path, sync: bool = False) -> None:
        """Open the ``.irv`` session at ``path``: its data, then its view. A newer autosave
        beside it (the window was not closed normally) is offered first."""
        path = Path(path)
        try:
            session = load_session(path)
            backup = autosave_path(path)
            if (self.keep and backup.is_file()
                    and backup.stat().st_mtime > path.stat().st_mtime
                    and self.ask_restore(backup)):
                session = load_session(backup)
        except InputError as e:
            self.host.show_error(e.for_window())
            return
        self._pending = (path, session)
        self.host.open_request(open_request(session), sync=sync)

    def open_session_dialog(self) -> None:
        """File ▸ Open a session."""
        path, _ = QFileDialog.getOpenFileName(self.parent_widget, "Open a session",
                                              filter=f"irviewer sessions (*{SESSION_SUFFIX})")
        if path:
            self.open_session(Path(path))

    def open_recent(self, path: Path) -> None:
        """Open a recent session: the user's own file as such, a kept one as its data."""
        if path.parent != data_folder():
            self.open_session(path)
            return
        try:
            session = load_session(path)
        except InputError as e:
            self.host.show_error(e.for_window())
            return
        self._pending = (None, session)
        self.host.open_request(open_request(session))

    def fill_recent(self, menu: QMenu) -> None:
        """Fill File ▸ Recent."""
        menu.clear()
        recent = recent_sessions(self.settings)
        if not recent:
            menu.addAction("(nothing yet)").setEnabled(False)
        for path in recent:
            action = menu.addAction(label(path))
            action.triggered.connect(lambda _=False, p=path: self.open_recent(Path(p)))

    def failed(self) -> None:
        """Opening failed: the session being opened is dropped."""
        self._pending = None

    def before_open(self) -> None:
        """New data arrives: keep the view being left behind."""
        self.autosave()

    def after_open(self) -> None:
        """New data is shown: apply the view of the session it came from, remember it, and
        start autosaving."""
        session, self._pending = self._pending, None
        self.path = session[0] if session is not None else None
        self._autosaved = None
        if session is not None:
            geometry = session[1].window.get("geometry")
            if geometry:
                self.host.restore_geometry_state(geometry)
            opened = self.host.opened
            self.host.apply_view(view_of(session[1], list(opened.methods) if opened else []))
        if self.path is not None and self.keep:
            remember(self.settings, self.path)
        self.autosave()
        if self.keep:
            self.timer.start()

    # -- saving ------------------------------------------------------------------------------
    def current(self) -> SessionFile | None:
        """Return the open data and its view as a session (None: nothing is open)."""
        opened = self.host.opened
        if opened is None:
            return None
        return session_of(opened.request, list(opened.methods), self.host.view_state(),
                          self.host.geometry_state())

    def save(self) -> bool:
        """File ▸ Save session (asks for a file the first time); True when written."""
        if self.path is None:
            return self.save_as()
        return self._write(self.path)

    def save_as(self, path: Path | None = None) -> bool:
        """File ▸ Save session as: write to ``path`` (asked for when None)."""
        if self.host.opened is None:
            self.host.show_message("Nothing to save: open a dataset first")
            return False
        if path is None:
            chosen, _ = QFileDialog.getSaveFileName(
                self.parent_widget, "Save the session",
                filter=f"irviewer sessions (*{SESSION_SUFFIX})")
            if not chosen:
                return False
            path = Path(chosen)
        if path.suffix != SESSION_SUFFIX:
            path = path.with_name(path.name + SESSION_SUFFIX)
        if self._write(path):
            self.path = path
            return True
        return False

    def _write(self, path: Path) -> bool:
        state = self.current()
        if state is None:
            return False
        try:
            save_session(path, state)
        except (InputError, OSError) as e:
            self.host.show_error(f"{path}: the session was not saved ({e})")
            return False
        autosave_path(path).unlink(missing_ok=True)
        remember(self.settings, path)
        self.host.show_message(f"Session saved to {path}")
        return True

    def autosave(self) -> None:
        """Write the view to the autosave file if it changed since the last write."""
        if not self.keep:
            return
        state = self.current()
        opened = self.host.opened
        target = autosave_target(self.path, opened.request if opened else None)
        if state is None or target is None:
            return
        fingerprint = repr(state)
        if fingerprint == self._autosaved:
            return
        try:
            save_session(target, state)
        except (InputError, OSError) as e:
            self.host.show_message(f"Autosave failed: {e}")
            return
        self._autosaved = fingerprint
        if self.path is None:
            remember(self.settings, target)

    def close(self) -> bool:
        """The window closes normally: return False to keep it open (the user cancelled).

        With the user's own session whose view changed, ask whether to save it (Save writes
        the session, Discard keeps the file as it was); either way its ``~autosave`` sibling
        goes, so the next opening does not take this for a crash. Otherwise the kept session
        gets the view once more. A window that keeps no sessions (a ``--screenshot`` run)
        asks nothing and touches no session file."""
        if not self.keep:
            self.timer.stop()
            return True
        if self.path is None:
            self.timer.stop()
            self.autosave()
            return True
        if self.unsaved():
            answer = self.ask_save(self.path)
            if answer == "cancel":
                return False
            if answer == "save" and not self._write(self.path):
                return False
        self.timer.stop()
        autosave_path(self.path).unlink(missing_ok=True)
        return True

    def unsaved(self) -> bool:
        """Return whether the view differs from the user's session file (window geometry
        aside)."""
        if self.path is None:
            return False
        state = self.current()
        if state is None:
            return False
        try:
            saved = load_session(self.path)
        except InputError:
            return True
        keep = {"geometry"}
        return (replace(state, window={k: v for k, v in state.window.items() if k not in keep})
                != replace(saved, window={k: v for k, v in saved.window.items()
                                          if k not in keep}))

    def _ask_save(self, path: Path) -> str:
        """Ask whether to save the changed view to ``path``: "save", "discard" or
        "cancel"."""
        buttons = (QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                   | QMessageBox.StandardButton.Cancel)
        answer = QMessageBox.question(
            self.parent_widget, "irviewer", f"Save the changes to the view in {path.name}?",
            buttons, QMessageBox.StandardButton.Save)
        return {QMessageBox.StandardButton.Save: "save",
                QMessageBox.StandardButton.Discard: "discard"}.get(answer, "cancel")

    def _ask_restore(self, backup: Path) -> bool:
        answer = QMessageBox.question(
            self.parent_widget, "irviewer", f"{backup.name} is newer than the session: "
            "irviewer was not closed normally last time. Restore the autosaved view?")
        return answer == QMessageBox.StandardButton.Yes
