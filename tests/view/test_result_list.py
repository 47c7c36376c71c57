"""The result list's view model against the core, headless: shown ranks with ignored items
hidden or shown, badges from the protocol's ignored groups, missed positives with their
scores and the hardest one's rank, and the summary bar from the protocol's headline."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.errors import InputError
from irviewer.core.evaluation import IGNORED, NEGATIVE, POSITIVE, evaluate
from irviewer.core.protocols import Protocol, get_protocol
from irviewer.core.ranking import rank
from irviewer.view.result_list import (
    EVERY_QUERY,
    SAME_CAMERA,
    SELF,
    ignored_reasons,
    own_badges,
    query_header,
    result_list,
)
from irviewer.view.summary import summary, summary_keys
from irviewer.view.view_state import ViewState
from tests.core.helpers import aligned, random_dataset, sign_vectors


def lined_up(groups: dict[str, list[int]], n_gallery: int = 8, self_index: int = -1,
             names: tuple[str, ...] = ("positive", "junk"), global_ignored=(),
             title: str = "") -> tuple[Dataset, object]:
    """One query whose cosine to gallery image i strictly decreases with i."""
    angles = np.linspace(0.0, 3.0, n_gallery)
    gallery = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    q = build_query("q", "qimg", groups, self_index=self_index, meta={"title": title})
    ds = Dataset(name="t", format="test", path=None,
                 gallery=tuple(f"g{i}" for i in range(n_gallery)), queries=(q,),
                 groups=names, protocols=("instance",),
                 global_ignored=np.array(global_ignored, dtype=np.int64))
    return ds, rank(aligned(np.array([[1.0, 0.0]], dtype=np.float32), gallery), ds, k=n_gallery)


JUNK = Protocol("t", "test", positive=("positive",), ignored=("junk",), ap="finite",
                self_match="remove")


def test_ignored_items_are_hidden_or_shown_where_they_ranked_by_hand():
    ds, r = lined_up({"positive": [0, 3, 7], "junk": [1]}, self_index=2)
    ev = evaluate(ds, r, JUNK)
    hidden = result_list(ev, 0, depth=3, show_ignored=False)
    # Order g0..g7; g1 junk and g2 the query's own image are removed before ranks count.
    assert [t.index for t in hidden.tiles] == [0, 3, 4]
    assert [t.rank for t in hidden.tiles] == [1, 2, 3]
    assert [t.raw_rank for t in hidden.tiles] == [1, 4, 5]
    assert [t.relevance for t in hidden.tiles] == [POSITIVE, POSITIVE, NEGATIVE]
    shown = result_list(ev, 0, depth=3, show_ignored=True)
    assert [t.index for t in shown.tiles] == [0, 1, 2, 3, 4]
    assert [t.rank for t in shown.tiles] == [1, None, None, 2, 3]
    assert [t.ignored_by for t in shown.tiles] == [None, "junk", SELF, None, None]
    assert [t.badge for t in shown.tiles] == [POSITIVE, IGNORED, IGNORED, POSITIVE, NEGATIVE]
    assert shown.shown == hidden.shown == 3 and not hidden.ends_early
    # g7 is the missed positive at rank 6 after removals (8 images, two removed).
    assert [t.index for t in hidden.missed] == [7]
    assert [t.rank for t in hidden.missed] == [6] and hidden.hardest_rank == 6
    assert hidden.missed[0].raw_rank == 8
    assert "the hardest at rank 6" in hidden.missed_heading()
    assert hidden.heading() == "<b>Ranked results</b>: the top 3"


def test_missed_positives_carry_their_score_not_nan():
    ds, r = lined_up({"positive": [0, 6]})
    ev = evaluate(ds, r, JUNK)
    missed = result_list(ev, 0, depth=2, show_ignored=False).missed
    assert [t.index for t in missed] == [6]
    expected = float(np.cos(np.linspace(0.0, 3.0, 8)[6]))
    assert missed[0].score == pytest.approx(expected, abs=1e-6)
    assert "score nan" not in missed[0].tooltip()


def test_a_short_list_ends_early_and_says_so():
    ds, r = lined_up({"positive": [0]}, n_gallery=4)
    result = result_list(evaluate(ds, r, JUNK), 0, depth=10, show_ignored=False)
    assert result.shown == 4 and result.ends_early
    assert "(the list ends here)" in result.heading()
    assert result.missed == () and "none" in result.missed_heading()


def test_images_removed_for_every_query_are_never_tiles():
    ds, r = lined_up({"positive": [0, 2]}, global_ignored=[1])
    result = result_list(evaluate(ds, r, JUNK), 0, depth=8, show_ignored=True)
    assert 1 not in [t.index for t in result.tiles]
    assert EVERY_QUERY not in [t.ignored_by for t in result.tiles]


def test_same_camera_badge_comes_from_the_protocols_ignored_group():
    groups = {"positive": [2], "same_camera": [0, 1]}
    ds, r = lined_up(groups, names=("positive", "same_camera"))
    reid = get_protocol("market1501")
    result = result_list(evaluate(ds, r, reid), 0, depth=5, show_ignored=True)
    assert [t.badge for t in result.tiles[:3]] == [SAME_CAMERA, SAME_CAMERA, POSITIVE]
    assert [t.relevance for t in result.tiles[:3]] == [IGNORED, IGNORED, POSITIVE]
    assert own_badges(reid) == (SAME_CAMERA,)
    assert ignored_reasons(evaluate(ds, r, reid)) == []  # same camera has its own badge
    # The same group name under a protocol that counts it as positive is no badge of its own.
    plain = Protocol("p", "test", positive=("positive", "same_camera"))
    tiles = result_list(evaluate(ds, r, plain), 0, depth=5, show_ignored=True).tiles
    assert SAME_CAMERA not in [t.badge for t in tiles] and own_badges(plain) == ()


def test_the_legend_names_what_the_protocol_ignores():
    ds, r = lined_up({"easy": [0], "hard": [1], "junk": [2]}, names=("easy", "hard", "junk"))
    hard = evaluate(ds, r, get_protocol("revisited-hard"))
    assert ignored_reasons(hard) == ["junk", "Easy images"]
    ds, r = lined_up({"positive": [0, 1], "junk": [3]}, self_index=1)
    assert ignored_reasons(evaluate(ds, r, JUNK)) == ["junk", "the query itself"]
    # An ignored group with no member (an instance set's junk before any correction) is not
    # named.
    ds, r = lined_up({"positive": [0, 1]}, self_index=1)
    assert ignored_reasons(evaluate(ds, r, JUNK)) == ["the query itself"]


def test_titles_and_tooltips():
    ds, r = lined_up({"positive": [0]}, title="Mona Lisa")
    ev = evaluate(ds, r, JUNK)
    header = query_header(ev, 0)
    assert header.title == "Mona Lisa" and header.name == "q" and "AP <b>100.0</b>" in (
        header.metrics)
    tile = result_list(ev, 0, 3, False).tiles[0]
    assert tile.tooltip().splitlines() == ["g0", "rank 1 · score 1.0000 · relevant"]


def test_a_skipped_query_says_so():
    ds, r = lined_up({"positive": []})
    assert query_header(evaluate(ds, r, JUNK), 0).metrics == "skipped: no positive left"


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.booleans())
def test_tiles_agree_with_the_cores_relevance_and_ranks(seed, depth, show_ignored):
    rng = np.random.default_rng(seed)
    ds = random_dataset(rng, 4, 20, with_self=True)
    ev = evaluate(ds, rank(aligned(sign_vectors(rng, 4), sign_vectors(rng, 20)), ds, k=20),
                  JUNK)
    for q in range(4):
        result = result_list(ev, q, depth, show_ignored)
        idx = np.array([t.index for t in result.tiles], dtype=np.int64)
        assert [t.relevance for t in result.tiles] == ev.relevance(q, idx).tolist()
        ranked = [t for t in result.tiles if t.relevance != IGNORED]
        assert [t.rank for t in ranked] == list(range(1, len(ranked) + 1))
        assert len(ranked) == result.shown <= depth
        assert show_ignored or all(t.relevance != IGNORED for t in result.tiles)
        # Positives within the shown ranks are tiles; the others are the missed ones.
        positives = {t.index for t in ranked if t.relevance == POSITIVE}
        missed = {t.index for t in result.missed}
        assert not positives & missed
        assert len(positives) + len(missed) == int(ev.positives.n_positives[q])
        assert all(not math.isnan(t.score) for t in result.missed if t.rank is not None)


def test_summary_puts_the_protocols_headline_first():
    ds, r = lined_up({"positive": [0, 3]})
    ev = evaluate(ds, r, get_protocol("instance"))
    s = summary(ev)
    assert s.headline == "mP@1" and [k for k, _ in s.metrics] == ["mP@1", "mAP"]
    assert s.html().startswith('<span style="font-size:large"><b>mP@1</b> 100.00</span>')
    assert "finite-sum AP, own image removed, ties keep gallery order" in s.html()
    assert summary_keys(get_protocol("market1501")) == ("CMC@1", "mAP", "mP@1", "CMC@5",
                                                        "mINP")
    assert summary_keys(get_protocol("revisited-hard")) == ("mAP", "mP@1",
                                                            "mP@10(revisitop)")


def test_view_state_checks_its_sort_order():
    assert ViewState(sort_column=1, sort_order="descending").sort_order == "descending"
    with pytest.raises(InputError, match="ascending or descending"):
        ViewState(sort_order="up")


def test_a_curators_photo_without_another_view_has_no_ground_truth_to_show(tmp_path):
    """In a collection, the photos of an artwork with two views are judged (✓ for the other
    view); the photo of an artwork with one photo is not: its matches are plain, the
    heading says "more like this", the header says why there is no score, and the legend
    of ✓/✗ goes only when no artwork has two photos."""
    from irviewer.opening.opener import open_now
    from irviewer.opening.request import OpenRequest
    from irviewer.view.result_list import (
        ONLY_PHOTO,
        PLAIN,
        UNJUDGED,
        has_ground_truth,
        judged_anywhere,
    )
    from tests.collection_photos import indexed

    opened = open_now(OpenRequest(indexed(tmp_path / "p", tmp_path / "c",
                                          {"a": 2, "b": 1, "c": 1})))
    ev = opened.evaluation(opened.first.name, next(iter(opened.protocols)))
    two = [q for q in range(ev.dataset.n_queries) if ev.per_query["n_positives"][q] > 0]
    one = [q for q in range(ev.dataset.n_queries) if ev.per_query["n_positives"][q] == 0]
    assert len(two) == 2 and len(one) == 2
    for q in two:
        rl = result_list(ev, q, 5, False)
        assert rl.judged and has_ground_truth(ev, q)
        assert {t.badge for t in rl.tiles} == {POSITIVE, NEGATIVE}
        assert rl.heading().startswith("<b>Ranked results</b>")
    for q in one:
        rl = result_list(ev, q, 5, False)
        assert not rl.judged and not has_ground_truth(ev, q)
        assert {t.badge for t in rl.tiles} == {PLAIN}
        assert {t.relevance for t in rl.tiles} == {UNJUDGED}
        assert rl.heading().startswith("<b>More like this</b>: the 3 artworks most like it")
        assert "not judged: its artwork has no other photo" in rl.tiles[0].tooltip()
        assert query_header(ev, q).metrics == ONLY_PHOTO
    assert judged_anywhere(ev)
    single = open_now(OpenRequest(indexed(tmp_path / "p1", tmp_path / "c1", artworks=3)))
    assert not judged_anywhere(single.evaluation(single.first.name,
                                                 next(iter(single.protocols))))


def test_a_benchmark_query_without_positives_keeps_its_judgement():
    """Outside a curator's collection the ground truth is the benchmark's: a query with no
    positive shows its results as not relevant, as the ground truth says."""
    from irviewer.view.result_list import has_ground_truth

    ds, ranking = lined_up({"positive": [], "junk": []})
    ev = evaluate(ds, ranking, get_protocol("instance"))
    assert has_ground_truth(ev, 0)
    assert {t.badge for t in result_list(ev, 0, 4, False).tiles} == {NEGATIVE}
