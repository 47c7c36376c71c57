"""File ▸ Export ranked list…: the selected query's list, by the command line's writers."""

from __future__ import annotations

import csv

import pytest
from PySide6.QtWidgets import QMessageBox

from irviewer.formats.ranked_csv import write_ranked_csv
from irviewer.formats.trec import write_qrels, write_trec_run


@pytest.fixture
def window(demo_window):
    demo_window.select_query("images/cezanne_boy-in-the-red-vest_query")
    return demo_window


def test_csv_of_the_selected_query_is_the_command_lines(window, tmp_path):
    written = window.figures.export_list(tmp_path / "boy.csv")
    assert written == [tmp_path / "boy.csv"]
    write_ranked_csv(tmp_path / "cli.csv", window.evaluation, [window.current])
    assert (tmp_path / "boy.csv").read_text() == (tmp_path / "cli.csv").read_text()
    rows = list(csv.reader((tmp_path / "boy.csv").read_text().splitlines()))
    assert {r[0] for r in rows[1:]} == {"images/cezanne_boy-in-the-red-vest_query"}
    assert sum(r[4] == "positive" for r in rows[1:]) == 7  # every positive is listed
    assert "Ranked list of images/cezanne_boy" in window.statusBar().currentMessage()


def test_a_run_suffix_writes_the_trec_run_and_its_qrels(window, tmp_path):
    written = window.figures.export_list(tmp_path / "boy.run")
    assert written == [tmp_path / "boy.run", tmp_path / "boy.qrels"]
    write_trec_run(tmp_path / "cli.run", window.evaluation, queries=[window.current])
    write_qrels(tmp_path / "cli.qrels", window.evaluation, queries=[window.current])
    assert (tmp_path / "boy.run").read_text() == (tmp_path / "cli.run").read_text()
    assert (tmp_path / "boy.qrels").read_text() == (tmp_path / "cli.qrels").read_text()
    assert len((tmp_path / "boy.qrels").read_text().splitlines()) == 7


def test_a_folder_that_does_not_exist_is_a_dialog_not_a_file(window, tmp_path, qtbot):
    assert window.figures.export_list(tmp_path / "nowhere" / "boy.csv") == []
    boxes = [b for b in window.findChildren(QMessageBox) if b.isVisible()]
    assert boxes and "does not exist" in boxes[-1].text()
    assert window.statusBar().currentMessage() == "The ranked list was not written"
