"""Presentation mode's view model, Qt-free: captions from the demo's titles,
slides built from the inspector's result list, a photo's matches judged only when the user
names the painting, and moving between queries in the list's order."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from irviewer.collection.answer import Answer
from irviewer.collection.matches import Match
from irviewer.core.evaluation import NEGATIVE, POSITIVE
from irviewer.opening.opener import open_now
from irviewer.opening.request import demo_request
from irviewer.view.presentation import (
    Caption,
    answer_caption,
    caption,
    instance_titles,
    neighbour,
    no_search_sentence,
    photo_result,
    photo_slide,
    plain,
    query_slide,
    searchable_methods,
)
from irviewer.view.result_list import UNJUDGED, result_list


@pytest.fixture(scope="module")
def demo():
    return open_now(demo_request())


@pytest.mark.parametrize(("title", "name", "expected"), [
    ("Mona Lisa, c. 1503–19 — Leonardo da Vinci", "images/x_d2.jpg",
     Caption("Mona Lisa, c. 1503–19", "Leonardo da Vinci", "images/x_d2.jpg")),
    ("A — B — Someone", "n", Caption("A — B", "Someone", "n")),  # the last dash parts
    ("Untitled", "n", Caption("Untitled", "", "n")),
    ("— Nobody", "n", Caption("— Nobody", "", "n")),
    ("", "images/leonardo_mona-lisa_d2.jpg",
     Caption("leonardo_mona-lisa_d2", "", "images/leonardo_mona-lisa_d2.jpg")),
])
def test_captions_split_work_and_artist(title, name, expected):
    assert caption(title, name) == expected


def test_plain_words_from_the_inspectors_header():
    assert plain("AP <b>83.1</b> &nbsp; P@1 <b>100</b> &nbsp; 4 positives") == (
        "AP 83.1 · P@1 100 · 4 positives")


def test_a_query_slide_is_the_inspectors_result_list_cut_to_n(demo):
    ev = demo.evaluation(demo.first.name, next(iter(demo.protocols)))
    slide = query_slide(ev, 3, top_n=5)
    assert slide.tiles == result_list(ev, 3, 5, False).tiles
    assert len(slide.tiles) == 5 and slide.judged and slide.query == 3
    assert slide.query_caption.artist  # the demo's titles name the artist
    assert slide.metrics.startswith("AP ") and "<" not in slide.metrics


def _matches(demo, instance_of_first: str) -> list[Match]:
    ds = demo.dataset
    labels = [str(x) for x in ds.gallery_labels]
    first = labels.index(instance_of_first)
    other = next(i for i, x in enumerate(labels) if x != instance_of_first)
    return [Match(1, first, ds.gallery[first], labels[first], "", 0.5),
            Match(2, other, ds.gallery[other], labels[other], "", 0.4)]


def test_a_photos_matches_are_unjudged_until_the_painting_is_named(demo):
    ds = demo.dataset
    label = str(ds.gallery_labels[0])
    matches = _matches(demo, label)
    header, result = photo_result(ds, Path("visit.jpg"), matches)
    assert [t.relevance for t in result.tiles] == [UNJUDGED, UNJUDGED]
    assert header.title == "Your photo" and "No ground truth" in header.metrics
    assert result.tiles[0].path == ds.image_paths[ds.gallery[0]]
    header, result = photo_result(ds, Path("visit.jpg"), matches, instance=label)
    assert [t.relevance for t in result.tiles] == [POSITIVE, NEGATIVE]
    assert "First match right" in header.metrics
    assert "1 of the top 2 are this painting" in header.metrics
    assert not photo_slide(ds, Path("visit.jpg"), matches).judged
    named = photo_slide(ds, Path("visit.jpg"), matches, instance=label)
    assert named.judged and named.query_caption.title == caption(
        instance_titles(ds)[label], label).title


def test_a_photo_s_slide_and_header_say_irviewer_s_answer(demo):
    ds = demo.dataset
    mona = Match(1, 0, "images/m_d1", "leonardo_mona-lisa",
                 "Mona Lisa, c. 1503–19 — Leonardo da Vinci", 0.4, inliers=40)
    wave = Match(2, 1, "images/w_g1", "hokusai_great-wave",
                 "The Great Wave — Katsushika Hokusai", 0.3, inliers=3)
    named = Answer("visit.jpg", "leonardo_mona-lisa", mona, (mona, wave), 12, "normal", True)
    slide = photo_slide(ds, Path("visit.jpg"), [mona, wave], answer=named)
    assert slide.query_caption == Caption("This is Mona Lisa, c. 1503–19",
                                          "Leonardo da Vinci", "visit.jpg")
    assert slide.matches_heading == "" and not slide.judged
    header, _ = photo_result(ds, Path("visit.jpg"), [mona, wave], answer=named)
    assert header.title == "This is Mona Lisa, c. 1503–19 — Leonardo da Vinci"
    assert header.metrics == named.evidence()
    none = Answer("visit.jpg", None, None, (wave, mona), 12, "normal", True)
    slide = photo_slide(ds, Path("visit.jpg"), [wave, mona], answer=none)
    assert slide.query_caption == Caption("Not in this collection",
                                          "Closest: The Great Wave; Mona Lisa, c. 1503–19",
                                          "visit.jpg")
    assert slide.matches_heading == "NOT IN THIS COLLECTION · THE CLOSEST"
    assert answer_caption(none, "p.jpg").title == "Not in this collection"


def test_the_picker_lists_each_painting_once_by_title(demo):
    titles = instance_titles(demo.dataset)
    assert len(titles) == 22
    assert titles["leonardo_mona-lisa"] == "Mona Lisa, c. 1503–19 — Leonardo da Vinci"


def test_which_methods_can_search(demo):
    assert searchable_methods(demo) == ["strong.npz"]
    sentence = no_search_sentence("weak.npz", ["strong.npz"])
    assert "weak.npz cannot search" in sentence and "choose strong.npz" in sentence
    assert "nor can any open method" in no_search_sentence("weak.npz", [])


@given(st.lists(st.integers(0, 50), min_size=1, max_size=20, unique=True),
       st.integers(-3, 3))
def test_neighbour_walks_the_list_and_wraps(order, step):
    for i, q in enumerate(order):
        assert neighbour(order, q, step) == order[(i + step) % len(order)]
    # moving forward n times from any query comes back to it
    q = order[0]
    for _ in range(len(order)):
        q = neighbour(order, q, 1)
    assert q == order[0]


def test_neighbour_from_outside_the_list():
    assert neighbour([4, 7, 9], 1, 1) == 4
    assert neighbour([4, 7, 9], 1, -1) == 9
    assert neighbour([], 1, 1) is None


def test_an_artwork_of_a_one_photo_collection_is_shown_as_more_like_this(tmp_path):
    """A curator's collection of one photo per artwork: no frames (judged False), no
    numbers, and the words of browsing, not of a test."""
    from irviewer.opening.request import OpenRequest
    from irviewer.view.presentation import BROWSING_LABELS
    from irviewer.view.result_list import PLAIN
    from tests.collection_photos import indexed

    opened = open_now(OpenRequest(indexed(tmp_path / "p", tmp_path / "c", artworks=4)))
    ev = opened.evaluation(opened.first.name, next(iter(opened.protocols)))
    slide = query_slide(ev, 0, top_n=3)
    assert not slide.judged and slide.metrics == ""
    assert (slide.query_label, slide.matches_label) == BROWSING_LABELS
    assert len(slide.tiles) == 3 and {t.badge for t in slide.tiles} == {PLAIN}


def test_a_benchmark_query_keeps_its_frames_and_its_words(demo):
    ev = demo.evaluation(demo.first.name, next(iter(demo.protocols)))
    slide = query_slide(ev, 0)
    assert slide.judged and slide.metrics.startswith("AP ")
    assert (slide.query_label, slide.matches_label) == ("THE QUERY", "WHAT THE SYSTEM FINDS")
