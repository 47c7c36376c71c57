"""What the window says about ties, from the core's tie bounds (hand-made evaluations)."""

from __future__ import annotations

import numpy as np

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import ranking_from_lists
from irviewer.view.conventions_view import OWN_MARK, convention_lines
from irviewer.view.ties_view import ap_tie_tooltip, tie_summary, within_tie_range


def scored(scores: list[list[float]], order: list[int] = [0, 1, 2, 3, 4]):  # noqa: B006
    """Two queries over g0..g4, positives g1 and g3 for both; the lists rank ``order``
    with the given scores (equal scores tie as written)."""
    ds = Dataset(name="t", format="test", path=None, gallery=tuple(f"g{i}" for i in range(5)),
                 queries=tuple(build_query(f"q{i}", f"i{i}", {"positive": [1, 3]})
                               for i in range(2)),
                 groups=("positive",), protocols=("instance",))
    ranking = ranking_from_lists(ds, np.array([order] * 2), np.array(scores),
                                 "run")
    return evaluate(ds, ranking, get_protocol("instance"))


def test_tied_query_sentence_and_summary():
    ev = scored([[5, 4, 4, 2, 1], [5, 4, 3, 2, 1]])  # q0: g1 ties with g2
    assert ev.ties.tied.tolist() == [True, False]
    # q0 reported: g1 at 1, g3 at 3 -> (1/2 + 2/4)/2 = 50.0; worst: g1 at 2 -> (1/3+1/2)/2
    tip = ap_tie_tooltip(ev, 0)
    assert "41.7 with the positives last, 50.0 with them first" in tip
    assert ap_tie_tooltip(ev, 1) == ""
    assert tie_summary(ev).startswith("≈ ties: mAP 45.83–50.00")
    assert tie_summary(scored([[5, 4, 3, 2, 1]] * 2)) == ""


def test_a_difference_within_the_tie_ranges_is_explained_by_ties():
    shown = scored([[5, 4, 4, 2, 1], [5, 4, 3, 2, 1]])
    other = scored([[5, 4, 3, 2, 1]] * 2, [0, 2, 1, 3, 4])  # g2 above g1: worse, no tie
    # q0: shown 50.0 (41.7-50.0), other 41.7 exactly: within; q1: 50.0 vs 41.7, no ties
    assert within_tie_range(shown, other, shown.dataset).tolist() == [True, False]


def test_convention_lines_mark_the_protocols_own():
    lines = convention_lines(scored([[5, 4, 3, 2, 1]] * 2))
    own = [line for line in lines if line.own]
    assert own[0].convention.startswith(OWN_MARK) and own[0].metric == "AP"
    assert all(not line.convention.startswith(OWN_MARK) for line in lines if not line.own)
