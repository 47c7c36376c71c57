"""Invariants of the metrics, checked by hypothesis on random rankings.

A query is drawn as sorted unique 0-based ranks of its retrieved positives plus a number of
positives never retrieved (a truncated list).
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from irviewer.core import metrics as m
from irviewer.core.ap_rules import average_precision
from irviewer.core.convention_names import AP_RULES
from tests.core.reference import ap_finite, ap_trapezoid, interpolated_precision

FEW = settings(max_examples=150, deadline=None)
TOL = 1e-12


@st.composite
def query(draw, max_rank: int = 60, min_positives: int = 0):
    """A query: (sorted retrieved positive ranks, total number of positives)."""
    ranks = sorted(draw(st.sets(st.integers(0, max_rank), max_size=12)))
    missing = draw(st.integers(0, 3))
    assume(len(ranks) + missing >= min_positives)
    return np.array(ranks, dtype=np.int64), len(ranks) + missing


def ap(ranks: np.ndarray, n: int, rule: str) -> float:
    """One query's AP under ``rule``, through the public entry point."""
    return float(average_precision(m.one_query(ranks, n), rule)[0])


def relevance_list(ranks: np.ndarray, depth: int = 70) -> list[bool]:
    """The ranked list as relevance flags, as a person would write it down."""
    flags = [False] * depth
    for r in ranks:
        flags[int(r)] = True
    return flags


@FEW
@given(query(min_positives=1))
def test_ap_agrees_with_a_walk_down_the_ranked_list(q):
    ranks, n = q
    flags = relevance_list(ranks)
    assert abs(ap(ranks, n, "finite") - ap_finite(flags, n)) < 1e-9
    assert abs(ap(ranks, n, "trapezoid") - ap_trapezoid(flags, n)) < 1e-9


@FEW
@given(query(min_positives=1))
def test_ap_is_a_fraction_and_trapezoid_never_exceeds_finite(q):
    ranks, n = q
    finite = ap(ranks, n, "finite")
    trapezoid = ap(ranks, n, "trapezoid")
    assert 0.0 <= trapezoid <= finite + TOL
    assert finite <= 1.0 + TOL


@FEW
@given(query(min_positives=1))
def test_ap_is_one_exactly_when_all_positives_come_first(q):
    ranks, n = q
    all_first = len(ranks) == n and np.array_equal(ranks, np.arange(n))
    for rule in AP_RULES:
        value = ap(ranks, n, rule)
        assert (value == 1.0) if all_first else (value < 1.0)


@FEW
@given(st.integers(1, 12), st.sampled_from(AP_RULES))
def test_ap_is_one_for_the_perfect_ranking(n, rule):
    assert ap(np.arange(n), n, rule) == 1.0


@FEW
@given(query(min_positives=1), st.data())
def test_moving_a_positive_to_an_earlier_free_rank_never_lowers_ap(q, data):
    ranks, n = q
    assume(len(ranks) > 0)
    i = data.draw(st.integers(0, len(ranks) - 1))
    free = sorted(set(range(int(ranks[i]))) - set(ranks.tolist()))
    assume(free)
    moved = ranks.copy()
    moved[i] = data.draw(st.sampled_from(free))
    moved.sort()
    for rule in AP_RULES:
        assert ap(moved, n, rule) >= ap(ranks, n, rule) - TOL


@FEW
@given(query(min_positives=1), st.integers(0, 80))
def test_finding_a_missing_positive_never_lowers_ap(q, rank):
    ranks, n = q
    assume(len(ranks) < n and rank not in ranks)
    found = np.sort(np.append(ranks, rank))
    for rule in AP_RULES:
        assert ap(found, n, rule) >= ap(ranks, n, rule) - TOL


@FEW
@given(query(min_positives=1), st.integers(1, 80))
def test_precision_bounds_and_revisitop_never_below_true_pk(q, k):
    ranks, n = q
    q = m.one_query(ranks, n)
    true_pk = q.precision_at_k(k)[0]
    revisitop = q.precision_at_k_revisitop(k)[0]
    assert 0.0 <= true_pk <= 1.0
    assert true_pk - TOL <= revisitop <= 1.0
    assert 0.0 <= q.r_precision()[0] <= 1.0
    assert 0.0 <= q.inverse_negative_penalty()[0] <= 1.0


@FEW
@given(query(min_positives=1), st.integers(1, 80))
def test_revisitop_pk_is_true_pk_when_a_positive_lies_at_or_after_k(q, k):
    ranks, n = q
    assume(len(ranks) and ranks[-1] + 1 >= k)
    q = m.one_query(ranks, n)
    assert q.precision_at_k_revisitop(k)[0] == q.precision_at_k(k)[0]


@FEW
@given(query(min_positives=1), st.lists(st.floats(0, 1), min_size=1, max_size=8))
def test_interpolated_precision_never_rises_with_recall(q, levels):
    ranks, n = q
    levels = np.sort(np.array(levels))
    offsets = np.array([0, len(ranks)])
    curve = m.mean_interpolated_pr(ranks, offsets, np.array([n]), levels)
    assert np.all(np.diff(curve) <= 0)
    assert np.all((curve >= 0) & (curve <= 1))


@settings(max_examples=60, deadline=None)
@given(st.lists(query(), min_size=1, max_size=15), st.integers(1, 30))
def test_a_batch_equals_each_of_its_queries_alone(queries, k):
    lists = [r for r, _ in queries]
    n = np.array([c for _, c in queries], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in lists])]).astype(np.int64)
    flat = np.concatenate(lists).astype(np.int64)
    batch = m.ragged(flat, offsets, n)
    alone = [m.one_query(r, c) for r, c in queries]
    for rule in AP_RULES:
        np.testing.assert_allclose(average_precision(batch, rule),
                                   [ap(r, c, rule) for r, c in queries])
    np.testing.assert_array_equal(batch.precision_at_k(k),
                                  [q.precision_at_k(k)[0] for q in alone])
    np.testing.assert_array_equal(batch.precision_at_k_revisitop(k),
                                  [q.precision_at_k_revisitop(k)[0] for q in alone])
    np.testing.assert_array_equal(batch.r_precision(), [q.r_precision()[0] for q in alone])
    np.testing.assert_array_equal(batch.inverse_negative_penalty(),
                                  [q.inverse_negative_penalty()[0] for q in alone])
    np.testing.assert_array_equal(batch.cmc_first_match((1, k)),
                                  [q.cmc_first_match((1, k))[0] for q in alone])
    np.testing.assert_array_equal(m.ragged(flat, offsets, None).first_positive_rank(),
                                  [r[0] if len(r) else -1 for r in lists])
    levels = np.linspace(0, 1, 11)
    curves = [interpolated_precision(*m.pr_points(r, c), levels) for r, c in queries if c]
    want = np.mean(curves, axis=0) if curves else np.full(len(levels), np.nan)
    np.testing.assert_allclose(m.mean_interpolated_pr(flat, offsets, n, levels), want,
                               rtol=1e-12)
