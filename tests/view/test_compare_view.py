"""Compare mode's view models, headless: the ΔAP column is the core's delta placed by query,
the rank marks of a hand-ranked query, the summary line's numbers."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from irviewer.core.evaluation import IGNORED, NEGATIVE, POSITIVE
from irviewer.core.paired import compare_evaluations
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest, demo_paths
from irviewer.view.compare_view import (
    compare_shown,
    compare_summary_html,
    compared_header,
    move_text,
    paired_columns,
    paired_statistics,
    rank_marks,
)
from irviewer.view.result_list import ResultTile, result_list
from tests.figure_case import make_case


@pytest.fixture
def evaluations(tmp_path):
    manifest = make_case(tmp_path)
    opened = open_now(OpenRequest(manifest, (tmp_path / "first.npz", tmp_path / "second.npz")))
    return (opened.evaluation("first.npz", "instance"),
            opened.evaluation("second.npz", "instance"))


def test_columns_hold_the_cores_deltas_by_query(evaluations):
    first, second = evaluations
    c = compare_shown("first", first, "second", second)
    other, delta = paired_columns(c, first.dataset)
    # by hand (tests/figure_case.py): qa 5/6 -> 7/12, qb 1 -> 1
    np.testing.assert_allclose(other, [7 / 12, 1.0])
    np.testing.assert_allclose(delta, [7 / 12 - 5 / 6, 0.0])
    core = compare_evaluations("first", first, "second", second, "AP")
    np.testing.assert_array_equal(delta, core.deltas)


def test_a_query_not_evaluated_by_both_has_no_delta(evaluations):
    first, second = evaluations
    c = compare_shown("first", first, "second", second)
    c = type(c)(c.baseline, c.method, c.metric, c.queries[1:], c.baseline_values[1:],
                c.method_values[1:])
    other, delta = paired_columns(c, first.dataset)
    assert np.isnan(other[0]) and np.isnan(delta[0]) and delta[1] == 0


def test_rank_marks_of_a_hand_ranked_query(evaluations):
    first, second = evaluations
    # qa under first: a1, c1, a2, b1, c2; under second: c1, a1, a2, b1, c2 (by construction):
    # second lifts c1 from 2nd to 1st (one place up) and drops a1 from 1st to 2nd
    here = result_list(first, 0, 5, False).tiles
    assert [t.name for t in here] == ["a1", "c1", "a2", "b1", "c2"]
    marks = rank_marks(here, second, 0, "second")
    assert [m.text for m in marks] == ["↓1", "↑1", "=", "=", "="]
    assert [m.other_rank for m in marks] == [2, 1, 3, 4, 5]
    assert marks[0].tooltip == ("rank 2 under second (here 1): the compared method ranks it "
                                "1 place lower")
    there = result_list(second, 0, 5, False).tiles
    assert [t.name for t in there][:3] == ["c1", "a1", "a2"]
    marks = rank_marks(there, first, 0, "first", compared=True)
    # the same item carries the same move in both columns: c1 up one, a1 down one
    assert [m.text for m in marks][:3] == ["↑1", "↓1", "="]
    assert marks[0].tooltip == ("rank 2 under first (here 1): the compared method ranks it "
                                "1 place higher")
    assert marks[2].tooltip == "rank 3 under first (here 3): the same rank under both methods"


@pytest.mark.parametrize(("shown", "compared", "text"), [
    (5, 4, "↑1"),  # lifted from 5th to 4th: never "↓5"
    (4, 5, "↓1"), (12, 1, "↑11"), (1, 12, "↓11"), (7, 7, "=")])
def test_a_move_reads_from_the_shown_rank_to_the_compared_rank(shown, compared, text):
    assert move_text(shown, compared) == text


def test_a_result_lifted_from_fifth_to_fourth_reads_up_one_in_both_columns():
    # the shown (plain) method ranks g1..g5 in order; the compared (re-ranked) one swaps
    # the 4th and the 5th
    plain = SimpleNamespace(ranking=SimpleNamespace(top_indices=np.array([[1, 2, 3, 4, 5]]),
                                                    has_score_rows=False),
                            relevance=lambda q, items: np.full(len(items), NEGATIVE))
    reranked = SimpleNamespace(ranking=SimpleNamespace(
        top_indices=np.array([[1, 2, 3, 5, 4]]), has_score_rows=False),
        relevance=plain.relevance)
    left = rank_marks([tile(g, g) for g in (1, 2, 3, 4, 5)], reranked, 0, "re-ranked")
    right = rank_marks([tile(g, r) for r, g in enumerate((1, 2, 3, 5, 4), start=1)], plain,
                       0, "plain", compared=True)
    assert [m.text for m in left] == ["=", "=", "=", "↓1", "↑1"]
    assert [m.text for m in right] == ["=", "=", "=", "↑1", "↓1"]
    assert right[3].other_rank == 5 and right[3].tooltip.startswith("rank 5 under plain (here 4)")


def tile(index: int, rank: int | None) -> ResultTile:
    relevance = IGNORED if rank is None else NEGATIVE
    return ResultTile(index, f"g{index}", "", None, rank, rank, 0.5, relevance, relevance)


def test_rank_marks_say_not_in_top_k_and_skip_ignored_items():
    # the other method stores 4 items, the second of them ignored: ranks g7 -> 1, g2 -> 2, g5 -> 3
    other = SimpleNamespace(
        ranking=SimpleNamespace(top_indices=np.array([[7, 9, 2, 5, -1]]),
                                has_score_rows=False),  # a ranking read from a file
        relevance=lambda q, items: np.array(
            [IGNORED if g == 9 else POSITIVE for g in items]))
    marks = rank_marks([tile(5, 1), tile(9, None), tile(3, 2), tile(7, 3)], other, 0, "B")
    # g5: 1st here, 3rd there (two places lower); g7: 3rd here, 1st there (two higher)
    assert [m.text for m in marks] == ["↓2", "", "not in top 3", "↑2"]
    assert marks[2].other_rank is None and marks[2].tooltip == "B does not rank it in its top 3"


def test_rank_marks_beyond_the_stored_list_come_from_the_reranked_rows():
    """Plain against re-ranked with lists of 10: a plain tile the re-ranked method ranks
    beyond its 10 is marked with its exact rank there, from the re-ranked score row (and
    the other way round), as a full sort of that row with the protocol's removals says."""
    manifest, strong = demo_paths()
    spec = "k-reciprocal:k1=6"
    opened = open_now(OpenRequest(manifest, (strong,), rerank=(spec,), k=10))
    plain = opened.evaluation("strong.npz", "instance")
    reranked = opened.evaluation(f"strong.npz + {spec}", "instance")
    beyond = 0
    for here, there in ((plain, reranked), (reranked, plain)):
        for q in range(opened.dataset.n_queries):
            tiles = result_list(here, q, 10, False).tiles
            marks = rank_marks(tiles, there, q, "other", compared=here is reranked)
            row = there.ranking.score_row(q)
            order = np.argsort(-row, kind="stable")
            order = order[np.isfinite(row[order])]
            kept = order[there.relevance(q, order) != IGNORED]
            rank_of = {int(g): r + 1 for r, g in enumerate(kept)}
            for t, m in zip(tiles, marks, strict=True):
                assert m.other_rank == rank_of[t.index], (q, t.name)
                if m.other_rank > 10:
                    beyond += 1
                    assert f"beyond its stored top 10 (here {t.rank}): " in m.tooltip
                    shown, compared = ((m.other_rank, t.rank) if here is reranked
                                       else (t.rank, m.other_rank))
                    assert m.text == move_text(shown, compared)
    assert beyond > 10


def test_summary_line_shows_the_comparisons_numbers(evaluations):
    first, second = evaluations
    c = compare_shown("first", first, "second", second)
    pending = compare_summary_html(c, None)
    assert "ΔmAP -12.50" in pending  # (7/12 - 5/6) / 2
    assert "0</b> better, <b>1</b> worse, <b>1</b> tied" in pending
    assert "95 % CI … " in pending and "randomization p …" in pending
    stats = paired_statistics(c)
    assert stats.permutations == "exact" and stats.ci95 == c.ci95
    done = compare_summary_html(c, stats)
    lo, hi = c.ci95
    assert f"[{100 * lo:+.2f}, {100 * hi:+.2f}]" in done
    assert f"randomization p = {c.randomization.p_value:.4f} exact" in done
    assert f"paired t p = {c.paired_t.p_value:.4f}," in done


@pytest.mark.parametrize(("name", "header"), [
    ("weak.npz", "AP weak.npz"),
    ("strong.npz + aqe:n=2,alpha=3 + k-reciprocal",
     "AP strong.npz\n+ aqe:n=2,alpha=3\n+ k-reciprocal")])
def test_the_compared_header_keeps_the_whole_name(name, header):
    assert compared_header(name) == header


def test_the_summary_line_says_why_the_t_test_has_no_variance(evaluations):
    """A method compared with itself: every delta 0, so the t-test is undefined; the
    window's line says why in the core's sentence, as compare's table does."""
    first, _ = evaluations
    c = compare_shown("first.npz", first, "again", first)
    stats = paired_statistics(c)
    assert stats.t_note and stats.t_note == c.paired_t.note
    assert f"({stats.t_note})" in compare_summary_html(c, stats).replace("&#x27;", "'")
