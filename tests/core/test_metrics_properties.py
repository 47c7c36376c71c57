"""Invariants of the metrics, checked by hypothesis on random rankings."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from irviewer.core import metrics as m


@st.composite
def query(draw):
    """A query: sorted retrieved positive ranks and its total number of positives."""
    ranks = sorted(draw(st.sets(st.integers(0, 60), max_size=12)))
    missing = draw(st.integers(0, 3))
    return np.array(ranks, dtype=np.int64), len(ranks) + missing


@settings(max_examples=200, deadline=None)
@given(query())
def test_ap_is_a_fraction_and_trapezoid_never_exceeds_finite(q):
    ranks, n = q
    assume(n > 0)
    finite = m.average_precision_finite(ranks, n)
    trap = m.average_precision_trapezoid(ranks, n)
    assert 0.0 <= trap <= finite + 1e-12 <= 1.0 + 1e-12


@settings(max_examples=200, deadline=None)
@given(query())
def test_ap_is_one_exactly_when_all_positives_come_first(q):
    ranks, n = q
    assume(n > 0)
    first = len(ranks) == n and np.array_equal(ranks, np.arange(n))
    for rule in ("finite", "trapezoid"):
        assert (m.average_precision(ranks, n, rule) == pytest.approx(1.0)) == first


@settings(max_examples=200, deadline=None)
@given(query(), st.integers(1, 30))
def test_precision_bounds_and_revisitop_never_below_true_pk(q, k):
    ranks, n = q
    assume(n > 0)
    true_pk = m.precision_at_k(ranks, n, k)
    assert 0.0 <= true_pk <= 1.0
    assert m.precision_at_k_revisitop(ranks, n, k) >= true_pk - 1e-12


@settings(max_examples=200, deadline=None)
@given(query(), st.data())
def test_moving_a_positive_earlier_never_lowers_ap(q, data):
    ranks, n = q
    assume(n > 0 and len(ranks) > 0)
    i = data.draw(st.integers(0, len(ranks) - 1))
    floor = ranks[i - 1] + 1 if i > 0 else 0
    assume(ranks[i] > floor)
    earlier = ranks.copy()
    earlier[i] = data.draw(st.integers(floor, int(ranks[i]) - 1))
    for rule in ("finite", "trapezoid"):
        assert m.average_precision(earlier, n, rule) >= m.average_precision(ranks, n, rule) - 1e-12


@settings(max_examples=50, deadline=None)
@given(st.lists(query(), min_size=1, max_size=15))
def test_batch_equals_per_query(queries):
    lists = [r for r, _ in queries]
    n = np.array([c for _, c in queries], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in lists])]).astype(np.int64)
    flat = np.concatenate(lists).astype(np.int64)
    for rule in ("finite", "trapezoid"):
        want = [m.average_precision(r, c, rule) for r, c in queries]
        np.testing.assert_allclose(m.batch_average_precision(flat, offsets, n, rule), want)
