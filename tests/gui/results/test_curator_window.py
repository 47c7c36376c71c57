"""The curator's window, offscreen: a collection without ground truth (one photo per
artwork) opens without the research tool — no AP, P@1, Pos. or 1st columns, no failure or
AP filter, no method/protocol/conventions bar, no PR plot or AP histogram, no corrections
pane, titles under the tiles instead of rank and score — and a visitor's photo's matches
are shown plainly (no grey "?", no "Colour as"); M in presentation shows no match's rank or
score; a benchmark opened after it gets the research tool back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QImage

from irviewer.gui.main_window import MainWindow
from irviewer.gui.results.query_model import TITLE
from irviewer.opening.request import OpenRequest, demo_paths
from irviewer.view.result_list import PLAIN, UNJUDGED
from irviewer.view.window_layout import CURATOR, RESEARCH, window_layout
from tests.collection_photos import indexed

IMAGES = Path(demo_paths()[0]).parent / "images"


@pytest.fixture
def window(qtbot, tmp_path):
    w = MainWindow(top_k=20, keep_sessions=False)
    qtbot.addWidget(w)
    qtbot.addWidget(w.presentation.view)
    w.show()
    w.open_request(OpenRequest(indexed(tmp_path / "p", tmp_path / "c", artworks=4)), sync=True)
    return w


def research_parts(w: MainWindow) -> dict[str, bool]:
    """Which of the research tool's parts the window shows."""
    table = w.queries.table
    return {"AP, P@1, Pos., 1st": not any(table.isColumnHidden(c) for c in range(1, TITLE)),
            "failures only": not w.queries.failures_row.isHidden(),
            "AP filter": not w.queries.ap_row.isHidden(),
            "protocol bar": not w.bar.choices.isHidden(),
            "plots": not w.plots.isHidden(),
            "corrections": not w.corrections.dock.isHidden(),
            "show ignored": not w.results.ignored_box.isHidden(),
            "rank and score under tiles": w.results.grid.numbers}


def test_a_collection_without_ground_truth_gets_the_curators_window(window):
    assert window_layout(window.evaluation) == CURATOR
    assert not any(research_parts(window).values()), research_parts(window)
    assert not window.queries.table.isColumnHidden(TITLE)
    assert window.queries.model.headerData(0, window.queries.table.horizontalHeader()
                                           .orientation()) == "Artwork"
    assert window.queries.count.text() == "4 of 4 artworks shown"
    summary = window.bar.summary.text()
    assert summary.startswith("Every artwork has one photo") and "instance" not in summary
    assert "Nothing to score" not in summary
    assert window.statusBar().currentMessage().endswith(": 4 artworks, 4 photos")
    window.open_paths(*demo_paths(), sync=True)  # a benchmark: the research tool is back
    assert window_layout(window.evaluation) == RESEARCH
    assert all(research_parts(window).values()), research_parts(window)
    assert window.queries.count.text() == "22 of 22 queries shown"


def test_a_visitors_photo_in_a_curators_window_is_shown_plainly(window, qtbot, tmp_path):
    photo = tmp_path / "visitor.jpg"
    (tmp_path / "p" / "art01.jpg").rename(photo)  # the collection's own picture, elsewhere
    search = window.photo_search
    search.search(photo, sync=True)
    qtbot.waitUntil(lambda: search.answer is not None, timeout=20_000)
    tiles = window.results.grid.tiles
    assert tiles and {t.badge for t in tiles} == {PLAIN}  # no grey "?"
    assert {t.relevance for t in tiles} == {UNJUDGED}
    assert search.bar.picker.isHidden()  # no "Colour as": nothing waits to be judged
    assert window.results.results_label.text().startswith("<b>More like this</b>")


def matches_area(view) -> np.ndarray:
    """The slide's pixels right of the query's column, above the footer."""
    image = view.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(
        image.height(), image.bytesPerLine() // 4, 4)[:, : image.width()]
    return pixels[: int(image.height() * 0.9), int(image.width() * 0.45):].copy()


def test_m_in_presentation_shows_no_rank_or_score_in_a_curators_collection(window, qtbot,
                                                                        tmp_path):
    window.presentation.enter()
    view = window.presentation.view
    view.resize(1280, 720)
    qtbot.waitUntil(view.isVisible)
    view.load_now()
    assert not view.slide.tile_numbers
    plain = matches_area(view)
    view.show_metrics = True  # M
    assert np.array_equal(plain, matches_area(view))  # no "#1 0.051" under the matches
    view.show_metrics = False
    search = window.photo_search
    search.search(IMAGES / "leonardo_mona-lisa_g1.jpg", sync=True)
    qtbot.waitUntil(lambda: window.presentation.photo_slide is not None, timeout=20_000)
    assert not view.slide.tile_numbers and not view.slide.judged
    view.load_now()
    before = matches_area(view)
    view.show_metrics = True
    assert np.array_equal(before, matches_area(view))
    window.presentation.leave()
