"""An artwork's details (a manifest's other columns: year, room, ...) are shown wherever it
is shown: tile tooltips, the query header, presentation captions, a photo's matches."""

from __future__ import annotations

import numpy as np
import pytest

from irviewer.collection.matches import Match
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest
from irviewer.view.presentation import caption, photo_result, photo_slide, query_slide
from irviewer.view.result_list import query_header, result_list

MANIFEST = """image,instance,role,title,artist,Year,Room
a1.jpg,a,both,Alpha,Ann,1601,2
a2.jpg,a,both,Alpha,Ann,1601,2
b1.jpg,b,both,Beta,,,7
"""


@pytest.fixture
def opened(tmp_path):
    (tmp_path / "set.csv").write_text(MANIFEST)
    np.savez(tmp_path / "d.npz", features=np.array([[1, 0], [0.9, 0.1], [0, 1]], np.float32),
             names=np.array(["a1", "a2", "b1"]))
    return open_now(OpenRequest(tmp_path / "set.csv", (tmp_path / "d.npz",)))


def test_tiles_and_the_query_header_carry_the_details(opened):
    ev = opened.evaluations["instance"]
    tiles = result_list(ev, 0, 5, show_ignored=False).tiles
    assert [t.name for t in tiles] == ["a2", "b1"]
    assert tiles[0].details == "Year 1601 · Room 2" and tiles[1].details == "Room 7"
    assert tiles[0].tooltip().splitlines()[:3] == ["a2", "Alpha — Ann", "Year 1601 · Room 2"]
    assert query_header(ev, 0).details == "Year 1601 · Room 2"


def test_captions_carry_the_details_on_slides(opened):
    slide = query_slide(opened.evaluations["instance"], 0)
    assert slide.query_caption == caption("Alpha — Ann", "a1", "Year 1601 · Room 2")
    assert slide.query_caption.artist == "Ann"
    assert [c.details for c in slide.captions] == ["Year 1601 · Room 2", "Room 7"]


def test_a_photos_matches_carry_the_details(opened, tmp_path):
    match = Match(1, 2, "b1", "b", "Beta", 0.9, (("Room", "7"),))
    _header, result = photo_result(opened.dataset, tmp_path / "p.jpg", [match])
    assert result.tiles[0].details == "Room 7"
    assert photo_slide(opened.dataset, tmp_path / "p.jpg", [match]).captions[0].details == \
        "Room 7"


def test_a_summary_with_nothing_scored_says_why_instead_of_nan(opened, tmp_path):
    from irviewer.view.summary import ONE_PHOTO_EACH, summary

    text = summary(opened.evaluations["instance"]).html()
    assert "Nothing to score" not in text and "mAP" in text
    from dataclasses import replace

    none = replace(summary(opened.evaluations["instance"]), n_evaluated=0, nothing="why")
    assert none.html().startswith("<b>Nothing to score</b>: why") and "nan" not in none.html()
    assert "drop a visitor's photo" in ONE_PHOTO_EACH
