"""File ▸ Export figure: the dialog's choices become the figure `irviewer figure` draws
(the same select_queries / layout_figure), written in a worker; the PDF and PNG parse;
bad answers get one sentence and no file."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image
from PySide6.QtWidgets import QMessageBox

from irviewer.core.errors import InputError
from irviewer.gui.figure_writer import png_size
from irviewer.gui.main_window import MainWindow
from irviewer.gui.theme import RELEVANCE
from irviewer.opening.request import demo_request
from irviewer.view.figure import layout_figure, select_queries
from irviewer.view.figure_formats import DPI
from irviewer.view.figure_request import FigureRequest, figure_layout


@pytest.fixture
def window(qtbot):
    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    w.show()
    w.open_request(demo_request(), sync=True)
    return w


def test_file_menu_has_export_figure(window):
    texts = [a.text() for a in window.menus.file.actions()]
    assert "&Export figure…" in texts
    assert texts.index("&Export figure…") < texts.index("&Quit")


def test_worst_n_with_the_compared_row_writes_a_pdf_in_a_worker(window, qtbot, tmp_path):
    window.compare_mode.set_compared("weak.npz")
    out = tmp_path / "worst.pdf"
    with qtbot.waitSignal(window.figures.written, timeout=60_000) as got:
        window.figures.export(FigureRequest("worst", 2, 5, False, True, out))
    assert got.args == [str(out)]
    data = out.read_bytes()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    assert window.statusBar().currentMessage() == f"Figure written to {out}"
    # the layout the window used is the command's: worst 2 under strong, weak as second row
    evs = [("strong.npz", window.evaluation), ("weak.npz", window.compare_mode.other)]
    expected = layout_figure(evs, select_queries(evs, worst=2), 5)
    made = figure_layout(FigureRequest("worst", 2, 5, False, True, out), evs[0], evs[1],
                         None, [])
    assert [r.header for r in made.rows] == [r.header for r in expected.rows]
    assert [r.method for r in made.rows] == ["strong.npz", "weak.npz"] * 2


def test_selected_query_as_png_carries_the_relevance_colours(window, tmp_path):
    out = tmp_path / "one.png"
    window.figures.export(FigureRequest("selected", 1, 4, True, False, out), sync=True)
    request = FigureRequest("selected", 1, 4, True, False, out)
    layout = figure_layout(request, ("strong.npz", window.evaluation), None, window.current,
                           [])
    assert [r.query for r in layout.rows] == [window.current]
    with Image.open(out) as im:
        assert im.info["dpi"] == pytest.approx((DPI, DPI), abs=0.01)
        size = png_size(layout.width, layout.height)
        assert im.size == (size.width(), size.height())
        pixels = np.asarray(im.convert("RGB")).astype(int)
    frame = layout.geometry.frame
    for cell in layout.rows[0].tiles:
        r = cell.rect
        x, y = r.x + frame / 2, r.y + r.h / 2
        colour = RELEVANCE[cell.badge][0]
        want = tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
        assert tuple(pixels[int(y * DPI / 72), int(x * DPI / 72)]) == want


def test_listed_queries_follow_the_tables_filter_and_order(window):
    window.queries.failures.setChecked(True)  # two failures on the demo
    panel = window.queries
    listed = [panel.model.query_of(panel.proxy.mapToSource(panel.proxy.index(r, 0)).row())
              for r in range(panel.proxy.rowCount())]
    layout = figure_layout(FigureRequest("listed", 1, 3, False, False,
                                         window.opened.dataset.path.parent / "x.svg"),
                           ("strong.npz", window.evaluation), None, None, listed)
    assert [r.query for r in layout.rows] == listed and len(listed) == 2


def test_bad_answers_are_one_sentence_and_no_file(window, qtbot, tmp_path, monkeypatch):
    shown = ("strong.npz", window.evaluation)
    with pytest.raises(InputError, match=r"fig.gif: a figure is written as .pdf, .svg or .png"):
        figure_layout(FigureRequest("worst", 2, 5, False, False, tmp_path / "fig.gif"), shown,
                      None, None, [])
    with pytest.raises(InputError, match="need a method to compare with"):
        figure_layout(FigureRequest("largest_changes", 2, 5, False, False,
                                    tmp_path / "f.pdf"), shown, None, None, [])
    with pytest.raises(InputError, match="no such folder"):
        figure_layout(FigureRequest("worst", 2, 5, False, False, tmp_path / "no" / "f.pdf"),
                      shown, None, None, [])
    opened: list[str] = []
    monkeypatch.setattr(QMessageBox, "open", lambda self: opened.append(self.text()))
    window.figures.export(FigureRequest("worst", 2, 5, False, False, tmp_path / "f.gif"),
                          sync=True)
    assert opened == ["f.gif: a figure is written as .pdf, .svg or .png"]
    assert not (tmp_path / "f.gif").exists()
    assert window.statusBar().currentMessage() == "The figure was not written"


def test_the_dialog_names_the_figure_formats_and_filters_by_them(qtbot, tmp_path,
                                                                monkeypatch):
    """The file row's label and the Browse dialog's filter are the figure formats' list."""
    from PySide6.QtWidgets import QFileDialog, QFormLayout, QLabel, QWidget

    from irviewer.gui.export.dialog import ExportFigureDialog

    parent = QWidget()
    qtbot.addWidget(parent)
    dialog = ExportFigureDialog(parent, None, tmp_path / "figure.pdf")
    form = dialog.findChild(QFormLayout)
    labels = [form.itemAt(r, QFormLayout.ItemRole.LabelRole) for r in range(form.rowCount())]
    texts = [item.widget().text() for item in labels
             if item is not None and isinstance(item.widget(), QLabel)]
    assert "File (.pdf, .svg, .png):" in texts
    asked: list[str] = []

    def save_file_name(*args):
        asked.append(args[3])
        return str(tmp_path / "chosen.svg"), args[3]

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_file_name)
    dialog._browse()
    assert asked == ["Figures (*.pdf *.svg *.png)"]
    assert dialog.request().path == tmp_path / "chosen.svg"
