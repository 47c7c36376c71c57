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
    # qa under first: a1, c1, a2, b1, c2; under second: c1, a1, a2, b1, c2 (by construction)
    here = result_list(first, 0, 5, False).tiles
    assert [t.name for t in here] == ["a1", "c1", "a2", "b1", "c2"]
    marks = rank_marks(here, second, 0, "second")
    assert [m.text for m in marks] == ["↓2", "↑1", "=3", "=4", "=5"]
    assert marks[0].tooltip == "rank 2 under second (here 1)"
    there = result_list(second, 0, 5, False).tiles
    assert [m.text for m in rank_marks(there, first, 0, "first")][:3] == ["↓2", "↑1", "=3"]


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
    assert [m.text for m in marks] == ["↓3", "", "not in top 3", "↑1"]
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
            marks = rank_marks(tiles, there, q, "other")
            row = there.ranking.score_row(q)
            order = np.argsort(-row, kind="stable")
            order = order[np.isfinite(row[order])]
            kept = order[there.relevance(q, order) != IGNORED]
            rank_of = {int(g): r + 1 for r, g in enumerate(kept)}
            for t, m in zip(tiles, marks, strict=True):
                assert m.other_rank == rank_of[t.index], (q, t.name)
                if m.other_rank > 10:
                    beyond += 1
                    assert m.tooltip.endswith(f"beyond its stored top 10 (here {t.rank})")
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
