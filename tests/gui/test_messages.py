"""The window's command line answers bad input as every command does: one sentence, in the
command line's words (its own options, never the Open dialog's fields), exit 2 — also when
the sentence came through the window (``--screenshot``)."""

from __future__ import annotations

import pytest

from irviewer.cli import main
from tests.cli.bad_inputs import VIEWER, cases, check_answer, make_data


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_data(tmp_path_factory.mktemp("bad"))


@pytest.mark.parametrize(("command", "what", "argv"), cases([VIEWER]),
                         ids=lambda v: v if isinstance(v, str) else None)
def test_the_viewer_answers_bad_input_in_the_command_lines_words(data, capsys, command,
                                                                 what, argv):
    code = main([w.format(r=data) for w in argv])
    captured = capsys.readouterr()
    check_answer(command, code, captured.out, captured.err)


def test_a_sentence_through_the_window_keeps_both_wordings(qtbot, data):
    from irviewer.core.errors import command_line_text
    from irviewer.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.open_paths(data / "gt", data / "rows.npy", sync=True)
    assert w.last_error is not None and "in the Open dialog" in w.last_error
    assert "--row-names FILE" in command_line_text(w.last_error)
