"""Sessions in the window: save and reopen exactly, autosave and its recovery, recent
sessions, a bad session file, sessions on the command line and by drag and drop."""

from __future__ import annotations

import json
import os
import time

from PySide6.QtCore import QSettings

from irviewer.gui.main_window import MainWindow
from irviewer.gui.sessions import controller as persistence
from irviewer.gui.sessions.places import autosave_path
from irviewer.opening.request import demo_request
from irviewer.opening.session_file import load_session

QUERY = "images/vermeer_girl-with-a-pearl-earring_query"


def make_window(qtbot) -> MainWindow:
    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    w.show()
    return w


def arrange(w: MainWindow) -> None:
    """Change every part of the view a session keeps."""
    w.bar.method_box.setCurrentText("weak.npz")
    w.bar.ap_box.setCurrentIndex(2)
    w.results.k_box.setValue(30)
    w.results.ignored_box.setChecked(True)
    w.queries.filter_edit.setText("v")
    w.set_ap_range((0.1, 0.9))
    w.select_query(QUERY)


def view(w: MainWindow) -> tuple:
    return (w.bar.method_box.currentText(), w.evaluation.protocol.ap, w.results.shown_depth,
            w.results.show_ignored,
            w.queries.filter_edit.text(), w.queries.proxy.ap_range,
            w.opened.dataset.queries[w.current].name, len(w.results.grid.tiles))


def test_save_then_reopen_restores_the_view(qtbot, tmp_path):
    w = make_window(qtbot)
    w.open_request(demo_request(), sync=True)
    arrange(w)
    before = view(w)
    assert w.save_session_as(tmp_path / "work")  # the suffix is added
    saved = load_session(tmp_path / "work.irv")
    assert saved.selected_query == QUERY and saved.active_method == 1
    assert persistence.recent_sessions(w.settings)[0] == str(tmp_path / "work.irv")
    again = make_window(qtbot)
    again.open_session(tmp_path / "work.irv", sync=True)
    assert view(again) == before
    assert again.sessions.path == tmp_path / "work.irv"


def test_autosave_is_offered_after_a_crash(qtbot, tmp_path):
    w = make_window(qtbot)
    w.open_request(demo_request(), sync=True)
    assert w.save_session_as(tmp_path / "work.irv")
    w.results.k_box.setValue(40)  # changed after saving: only the autosave has it
    w.autosave()
    backup = autosave_path(tmp_path / "work.irv")
    assert load_session(backup).top_k == 40
    old = time.time() - 60
    os.utime(tmp_path / "work.irv", (old, old))
    asked = []
    restored = make_window(qtbot)
    restored.sessions.ask_restore = lambda path: asked.append(path) or True
    restored.open_session(tmp_path / "work.irv", sync=True)
    assert asked == [backup] and restored.results.shown_depth == 40
    declined = make_window(qtbot)
    declined.sessions.ask_restore = lambda path: False
    declined.open_session(tmp_path / "work.irv", sync=True)
    assert declined.results.shown_depth == 20  # what was saved
    assert declined.save_session() and not backup.exists()  # saving supersedes it


def test_a_plain_open_is_kept_and_comes_back_from_recent(qtbot):
    w = make_window(qtbot)
    w.open_request(demo_request(), sync=True)
    arrange(w)
    w.close()  # closing writes the view once more
    recent = persistence.recent_sessions(QSettings(
        QSettings.Format.IniFormat, QSettings.Scope.UserScope, "irviewer", "irviewer"))
    assert len(recent) == 1 and persistence.label(recent[0]) == "demo.csv — strong.npz, weak.npz"
    again = make_window(qtbot)
    again.sessions.fill_recent(again.menus.recent)
    actions = again.menus.recent.actions()
    assert [a.text() for a in actions] == ["demo.csv — strong.npz, weak.npz"]
    actions[0].trigger()
    qtbot.waitUntil(lambda: again.opened is not None, timeout=20000)
    assert again.bar.method_box.currentText() == "weak.npz" and again.results.shown_depth == 30
    assert again.sessions.path is None  # still not a file of the user's


def test_a_bad_session_is_a_dialog_with_its_sentence(qtbot, tmp_path):
    (tmp_path / "bad.irv").write_text(json.dumps({"format": "irviewer-session",
                                                  "version": 7}))
    w = make_window(qtbot)
    w.open_session(tmp_path / "bad.irv", sync=True)
    assert "written by a newer irviewer (version 7)" in w.last_error
    assert w.opened is None


def test_session_on_the_command_line_and_dropped(qtbot, tmp_path):
    from irviewer.cli import main

    w = make_window(qtbot)
    w.open_request(demo_request(), sync=True)
    w.select_query(QUERY)
    assert w.save_session_as(tmp_path / "work.irv")
    assert main([str(tmp_path / "work.irv"), "--screenshot", str(tmp_path / "s.png")]) == 0
    assert (tmp_path / "s.png").stat().st_size > 10_000
    dropped = make_window(qtbot)
    dropped.open_dropped([tmp_path / "work.irv"], sync=True)
    assert dropped.opened.dataset.queries[dropped.current].name == QUERY


def test_view_state_round_trips_through_the_window_and_the_session_file(qtbot, tmp_path):
    from PySide6.QtCore import Qt

    w = make_window(qtbot)
    w.open_request(demo_request(), sync=True)
    arrange(w)
    w.queries.table.sortByColumn(1, Qt.SortOrder.DescendingOrder)
    state = w.view_state()
    assert (state.method, state.ap, state.top_k, state.show_ignored) == (
        "weak.npz", "trapezoid", 30, True)
    assert (state.sort_column, state.sort_order) == (1, "descending")
    assert state.selected_query == QUERY and len(state.splitter_sizes) == 3
    assert w.save_session_as(tmp_path / "sorted.irv")
    again = make_window(qtbot)
    again.open_session(tmp_path / "sorted.irv", sync=True)
    restored = again.view_state()
    assert restored.sort_column == 1 and restored.sort_order == "descending"
    assert view(again) == view(w)
    fresh = make_window(qtbot)
    fresh.open_request(demo_request(), sync=True)
    fresh.apply_view(state)  # no file in between
    assert fresh.view_state().selected_query == QUERY and view(fresh) == view(w)


def test_a_normal_quit_leaves_no_crash_notice_and_asks_to_save_changes(qtbot, tmp_path):
    w = make_window(qtbot)
    w.open_request(demo_request(), sync=True)
    assert w.save_session_as(tmp_path / "work.irv")
    backup = autosave_path(tmp_path / "work.irv")
    first = load_session(tmp_path / "work.irv").selected_query

    def reopen(expect_restore: bool = False) -> MainWindow:
        again = make_window(qtbot)
        asked = []
        again.sessions.ask_restore = lambda path: asked.append(path) or True
        again.open_session(tmp_path / "work.irv", sync=True)
        assert bool(asked) == expect_restore
        return again

    # Unchanged: no question, no autosave left behind.
    questions = []
    w.sessions.ask_save = lambda path: questions.append(path) or "save"
    w.close()
    assert questions == [] and not backup.exists()
    # Changed, then discarded: the file keeps what was saved, nothing asks to restore.
    w = reopen()
    w.select_query(QUERY)
    w.autosave()  # what the timer does: a backup exists while the window is open
    assert backup.exists()
    w.sessions.ask_save = lambda path: questions.append(path) or "discard"
    w.close()
    assert questions == [tmp_path / "work.irv"] and not backup.exists()
    assert load_session(tmp_path / "work.irv").selected_query == first
    # Changed, then saved: the file has the new view.
    w = reopen()
    w.select_query(QUERY)
    w.sessions.ask_save = lambda path: "cancel"
    w.close()
    assert w.isVisible()  # cancelled: still open
    w.sessions.ask_save = lambda path: "save"
    w.close()
    assert not w.isVisible() and not backup.exists()
    assert load_session(tmp_path / "work.irv").selected_query == QUERY
    reopen()


def test_kept_sessions_live_in_the_user_data_folder(user_data):
    # one rule for "the user's data folder" (platformdirs), shared with the corrections of
    # datasets whose folder cannot be written
    assert persistence.data_folder() == user_data / "sessions"
    assert (user_data / "sessions").is_dir()


def test_sessions_an_earlier_version_kept_in_qts_folder_are_found_again(qapp, user_data):
    # before the user data folder rule, kept sessions lived in Qt's AppDataLocation/sessions
    # (the application and organisation both named irviewer, as irviewer.gui.app sets them)
    names = (qapp.organizationName(), qapp.applicationName())
    qapp.setOrganizationName("irviewer")
    qapp.setApplicationName("irviewer")
    try:
        legacy = persistence.legacy_folder()
        assert legacy == user_data / "irviewer" / "sessions"  # under XDG_DATA_HOME, not ~
        legacy.mkdir(parents=True)
        (legacy / "demo-0123456789ab.irv").write_text("{}")
        settings = QSettings()
        settings.setValue(persistence.RECENT_KEY, [str(legacy / "demo-0123456789ab.irv")])
        recent = persistence.recent_sessions(settings)
        assert recent == [str(user_data / "sessions" / "demo-0123456789ab.irv")]
        assert (user_data / "sessions" / "demo-0123456789ab.irv").read_text() == "{}"
        assert not legacy.exists()
    finally:
        qapp.setOrganizationName(names[0])
        qapp.setApplicationName(names[1])


def test_compare_mode_is_kept_in_the_session(qtbot, tmp_path):
    w = make_window(qtbot)
    w.open_request(demo_request(), sync=True)
    w.bar.method_box.setCurrentText("weak.npz")
    w.compare_mode.set_compared("strong.npz")
    assert w.compare_mode.active
    assert w.save_session_as(tmp_path / "work.irv")
    saved = load_session(tmp_path / "work.irv")
    assert (saved.compare_method, saved.compare_rerank) == (0, None)  # strong.npz: source 0
    again = make_window(qtbot)
    again.open_session(tmp_path / "work.irv", sync=True)
    assert again.bar.method_box.currentText() == "weak.npz"
    assert again.compare_mode.compared() == "strong.npz" and again.compare_mode.active
    w.compare_mode.set_compared(None)  # off: saved as off
    assert w.save_session() and load_session(tmp_path / "work.irv").compare_method is None
