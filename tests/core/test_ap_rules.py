"""The one AP entry point (ap_rules.average_precision): every AP rule against a naive walk
down the ranked list written from the evaluators' definitions (tests/core/reference.py), on
random queries and in a batch, and the curves whose area is the AP."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.core import metrics
from irviewer.core.ap_rules import ap_polyline, average_precision
from irviewer.core.convention_names import AP_RULES
from irviewer.core.errors import InputError
from tests.core.reference import (
    ap_finite,
    ap_trapezoid,
    ap_voc_11_points,
    ap_voc_all_points,
    interpolated_precision,
)

FEW = settings(max_examples=150, deadline=None)
REFERENCE = {"finite": ap_finite, "trapezoid": ap_trapezoid,
             "interpolated": ap_voc_all_points, "11point": ap_voc_11_points}


@st.composite
def batch(draw):
    """A few queries: sorted positive ranks plus positives never retrieved."""
    queries = []
    for _ in range(draw(st.integers(1, 6))):
        ranks = sorted(draw(st.sets(st.integers(0, 40), max_size=10)))
        queries.append((ranks, len(ranks) + draw(st.integers(0, 3))))
    return queries


def flags(ranks: list[int], depth: int = 45) -> list[bool]:
    out = [False] * depth
    for r in ranks:
        out[r] = True
    return out


def ragged(queries):
    ranks = np.array([r for q, _ in queries for r in q], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum([len(q) for q, _ in queries])])
    return metrics.ragged(ranks, offsets, np.array([n for _, n in queries]))


@FEW
@given(batch(), st.sampled_from(AP_RULES))
def test_each_rule_equals_its_evaluator_walked_by_hand(queries, rule):
    got = average_precision(ragged(queries), rule)
    for value, (ranks, n) in zip(got, queries, strict=True):
        if n == 0:
            assert np.isnan(value)
        else:
            assert value == pytest.approx(REFERENCE[rule](flags(ranks), n), abs=1e-12)


@FEW
@given(batch(), st.sampled_from(AP_RULES))
def test_within_the_list_divides_by_the_positives_listed(queries, rule):
    got = average_precision(ragged(queries), rule, "retrieved")
    for value, (ranks, n) in zip(got, queries, strict=True):
        if n == 0:
            assert np.isnan(value)
        elif not ranks:
            assert value == 0.0
        else:
            assert value == pytest.approx(REFERENCE[rule](flags(ranks), len(ranks)),
                                          abs=1e-12)


@FEW
@given(batch())
def test_interpolation_never_lowers_ap_and_11_points_agree_with_the_curve_function(queries):
    b = ragged(queries)
    finite = average_precision(b, "finite")
    interpolated = average_precision(b, "interpolated")
    eleven = average_precision(b, "11point")
    for q, (ranks, n) in enumerate(queries):
        if n == 0:
            continue
        assert interpolated[q] >= finite[q] - 1e-12
        rec, prec = metrics.pr_points(np.array(ranks, dtype=np.int64), n)
        curve = interpolated_precision(rec, prec, np.linspace(0, 1, 11))
        assert eleven[q] == pytest.approx(curve.mean(), abs=1e-12)


def test_hand_computed_case():
    # Positives at ranks 1 and 2 of 3 (0-based), 3 positives in all (one never retrieved).
    # Precisions 1/2, 2/3: finite (1/2 + 2/3)/3; interpolated (2/3 + 2/3)/3;
    # 11-point: levels 0..0.3 reach 2/3 (recall 1/3 reaches up to 0.333, 2/3 up to 0.667),
    # levels 0.4..0.6 reach 2/3, levels 0.7..1 none: 7 x 2/3 / 11.
    b = metrics.ragged(np.array([1, 2]), np.array([0, 2]), np.array([3]))
    assert average_precision(b, "finite")[0] == pytest.approx((1 / 2 + 2 / 3) / 3)
    assert average_precision(b, "interpolated")[0] == pytest.approx(4 / 9)
    assert average_precision(b, "11point")[0] == pytest.approx(7 * (2 / 3) / 11)


@FEW
@given(batch(), st.sampled_from(AP_RULES))
def test_the_drawn_curve_s_area_is_the_ap(queries, rule):
    """The polyline the window fills has the trapezoid area of the query's AP."""
    for ranks, n in queries:
        x, y = ap_polyline(np.array(ranks, dtype=np.int64), n, rule)
        ap = average_precision(ragged([(ranks, n)]), rule)[0]
        if n == 0 or not ranks:
            assert len(x) == len(y) == 0
        else:
            assert np.all(np.diff(x) >= -1e-15) and x[0] >= 0 and x[-1] <= 1 + 1e-12
            assert np.trapezoid(y, x) == pytest.approx(ap, abs=1e-12)


def test_hand_computed_interpolated_curves():
    # Positives at 0-based ranks 1 and 2, 3 positives: precisions 1/2, 2/3, interpolated to
    # 2/3 and 2/3 over recall steps [0, 1/3] and [1/3, 2/3]; 11 points: 2/3 at levels 0..0.6.
    x, y = ap_polyline(np.array([1, 2]), 3, "interpolated")
    assert x.tolist() == pytest.approx([0, 1 / 3, 1 / 3, 2 / 3])
    assert y.tolist() == pytest.approx([2 / 3] * 4)
    x, y = ap_polyline(np.array([1, 2]), 3, "11point")
    assert x.tolist() == pytest.approx([v for i in range(11) for v in (i / 11, (i + 1) / 11)])
    assert y.tolist() == pytest.approx([2 / 3] * 14 + [0.0] * 8)



@pytest.mark.parametrize(("rule", "expected"), [
    # Positives at 0-based ranks 1 and 2, 3 positives: precisions 1/2 and 2/3.
    ("finite", (1 / 2 + 2 / 3) / 3),
    # Trapezoids: (0/1 + 1/2) / 2 and (1/2 + 2/3) / 2, over 3 positives.
    ("trapezoid", ((0 / 1 + 1 / 2) / 2 + (1 / 2 + 2 / 3) / 2) / 3),
    ("interpolated", (2 / 3 + 2 / 3) / 3),
    ("11point", 7 * (2 / 3) / 11),
])
def test_one_query_under_every_rule_through_the_one_entry_point(rule, expected):
    """One function takes every rule irviewer supports, for one query as for a batch."""
    assert average_precision(metrics.one_query([1, 2], 3), rule)[0] == pytest.approx(expected)


def test_an_unknown_rule_is_refused_naming_every_rule():
    every = "use finite, trapezoid, interpolated or 11point"
    with pytest.raises(InputError, match=f"unknown AP rule 'area': {every}"):
        average_precision(metrics.one_query([0], 1), "area")
    with pytest.raises(InputError, match=f"unknown AP rule 'area': {every}"):
        ap_polyline(np.array([0]), 1, "area")
    with pytest.raises(InputError, match="unknown AP denominator 'some': use all, retrieved, "
                       "depth or list"):
        average_precision(metrics.one_query([0], 1), "finite", "some")
