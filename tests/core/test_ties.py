"""Tie bounds and the expected AP over tie orders, against a brute force over every order.

A query is drawn as a short ranked list of items with integer scores (equal = tied), each
positive, negative or removed by the protocol. The brute force orders every tie group in
every way, removes the removed items, and computes AP with the metrics module itself.
"""

from __future__ import annotations

from itertools import permutations, product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.core import metrics
from irviewer.core.ap_rules import average_precision
from irviewer.core.ties import expected_ap, tie_groups

FEW = settings(max_examples=200, deadline=None)
NEG, POS, GONE = 0, 1, 2


@st.composite
def tied_list(draw, max_items: int = 9):
    """A ranked list: (scores, roles), scores integer (equal = tied), at least one positive."""
    n = draw(st.integers(1, max_items))
    scores = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    roles = draw(st.lists(st.sampled_from([NEG, NEG, POS, POS, GONE]), min_size=n,
                          max_size=n))
    if POS not in roles:
        roles[draw(st.integers(0, n - 1))] = POS
    return np.array(scores, dtype=np.int64), np.array(roles, dtype=np.int64)


def windows(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (raw rank in the stable order, above, through) of every item: exact ties."""
    order = np.argsort(-scores, kind="stable")
    raw = np.empty(len(scores), dtype=np.int64)
    raw[order] = np.arange(len(scores))
    above = np.array([np.count_nonzero(scores > s) for s in scores], dtype=np.int64)
    through = np.array([np.count_nonzero(scores >= s) for s in scores], dtype=np.int64)
    return raw, above, through


def groups_of(scores, roles):
    raw, above, through = windows(scores)
    marked = roles != NEG
    return tie_groups(np.zeros(int(marked.sum()), dtype=np.int64), raw[marked],
                      roles[marked] == POS, above[marked], through[marked])


def reported_ranks(scores, roles) -> np.ndarray:
    order = np.argsort(-scores, kind="stable")
    kept = [i for i in order if roles[i] != GONE]
    return np.array([j for j, i in enumerate(kept) if roles[i] == POS], dtype=np.int64)


def every_order(scores, roles):
    """Yield the positive ranks (after removals) of every order of the equal-score groups."""
    levels = sorted(set(scores.tolist()), reverse=True)
    members = [np.flatnonzero(scores == s) for s in levels]
    for choice in product(*(permutations(m) for m in members)):
        kept = [i for block in choice for i in block if roles[i] != GONE]
        yield np.array([j for j, i in enumerate(kept) if roles[i] == POS], dtype=np.int64)


def ap(ranks: np.ndarray, n: int, rule: str) -> float:
    """One query's AP under ``rule``, through the metrics' one entry point."""
    return float(average_precision(metrics.one_query(ranks, n), rule)[0])


def aps(scores, roles, rule):
    n = int(np.count_nonzero(roles == POS))
    return [ap(r, n, rule) for r in every_order(scores, roles)]


@FEW
@given(tied_list(), st.sampled_from(["finite", "trapezoid"]))
def test_bounds_are_the_extremes_over_every_order_and_are_attained(case, rule):
    scores, roles = case
    n = int(np.count_nonzero(roles == POS))
    g = groups_of(scores, roles)
    best = ap(g.order_ranks("best"), n, rule)
    worst = ap(g.order_ranks("worst"), n, rule)
    every = aps(scores, roles, rule)
    assert best == pytest.approx(max(every), abs=1e-12)
    assert worst == pytest.approx(min(every), abs=1e-12)
    reported = ap(reported_ranks(scores, roles), n, rule)
    assert worst - 1e-12 <= reported <= best + 1e-12


@FEW
@given(tied_list(), st.sampled_from(["finite", "trapezoid"]))
def test_expected_ap_is_the_mean_over_every_order(case, rule):
    scores, roles = case
    n = int(np.count_nonzero(roles == POS))
    g = groups_of(scores, roles)
    expected = expected_ap(g, np.array([n]), rule)[0]
    assert expected == pytest.approx(float(np.mean(aps(scores, roles, rule))), abs=1e-12)


@FEW
@given(tied_list(), st.integers(1, 6))
def test_expected_ap_within_a_depth_counts_only_the_first_places(case, depth):
    scores, roles = case
    n = int(np.count_nonzero(roles == POS))
    g = groups_of(scores, roles)
    brute = np.mean([ap(r[r < depth], n, "finite")
                     for r in every_order(scores, roles)])
    assert expected_ap(g, np.array([n]), "finite", depth)[0] == pytest.approx(brute,
                                                                             abs=1e-12)


@FEW
@given(st.lists(st.sampled_from([NEG, POS, GONE]), min_size=1, max_size=12),
       st.sampled_from(["finite", "trapezoid"]))
def test_without_ties_best_worst_expected_and_reported_are_equal(roles, rule):
    roles = np.array(roles, dtype=np.int64)
    roles[0] = POS
    scores = np.arange(len(roles), 0, -1)  # all distinct
    n = int(np.count_nonzero(roles == POS))
    g = groups_of(scores, roles)
    reported = reported_ranks(scores, roles)
    assert np.array_equal(g.order_ranks("best"), reported)
    assert np.array_equal(g.order_ranks("worst"), reported)
    assert not g.tied().any()
    value = ap(reported, n, rule)
    assert expected_ap(g, np.array([n]), rule)[0] == pytest.approx(value, abs=1e-12)


def test_hand_computed_two_way_tie():
    # Scores 5 (positive), 3 (negative), 3 (positive): the tie is the last two places.
    # Best order P P N: AP 1; worst P N P: (1 + 2/3) / 2; expected their mean.
    scores, roles = np.array([5, 3, 3]), np.array([POS, NEG, POS])
    g = groups_of(scores, roles)
    assert g.order_ranks("best").tolist() == [0, 1]
    assert g.order_ranks("worst").tolist() == [0, 2]
    assert expected_ap(g, np.array([2]), "finite")[0] == pytest.approx((1 + 5 / 6) / 2)


def test_several_queries_in_one_batch_equal_each_alone():
    rng = np.random.default_rng(3)
    cases = [(rng.integers(0, 3, 8), rng.choice([NEG, POS, GONE], 8)) for _ in range(20)]
    cases = [(s, np.where(np.arange(8) == 0, POS, r)) for s, r in cases]
    parts = []
    for q, (scores, roles) in enumerate(cases):
        raw, above, through = windows(scores)
        marked = roles != NEG
        parts.append((np.full(int(marked.sum()), q), raw[marked], roles[marked] == POS,
                      above[marked], through[marked]))
    joined = [np.concatenate(col) for col in zip(*parts, strict=True)]
    perm = rng.permutation(len(joined[0]))  # any order in
    g = tie_groups(*(col[perm] for col in joined))
    n = np.array([np.count_nonzero(r == POS) for _, r in cases])
    best = g.order_ranks("best")
    offsets = np.concatenate([[0], np.cumsum(n)])
    for q, (scores, roles) in enumerate(cases):
        alone = groups_of(scores, roles)
        assert best[offsets[q]:offsets[q + 1]].tolist() == alone.order_ranks("best").tolist()
        assert expected_ap(g, n, "trapezoid")[q] == pytest.approx(
            expected_ap(alone, n[q:q + 1], "trapezoid")[0], abs=1e-12)


@pytest.mark.parametrize("rule", ["finite", "trapezoid"])
def test_expected_ap_of_a_large_tie_equals_the_sum_place_by_place(rule):
    # 900 distinct negatives, then one tie of 3,000 items holding 7 positives: the
    # harmonic numbers cross from the table to the series; summed here place by place.
    scores = np.concatenate([np.arange(2000, 1100, -1), np.zeros(3000, dtype=np.int64)])
    roles = np.zeros(len(scores), dtype=np.int64)
    roles[900 + np.array([3, 50, 700, 1500, 2000, 2500, 2999])] = POS
    g = groups_of(scores, roles)
    skip, t, r = 900, 3000, 7
    c = (r - 1) / (t - 1)
    total = 0.0
    for i in range(skip + 1, skip + t + 1):
        mean_before = (i - skip - 1) * c  # positives of the group expected before place i
        at = (mean_before + 1) / i
        prior = mean_before / (i - 1)
        total += r / t * (at if rule == "finite" else (at + prior) / 2)
    assert expected_ap(g, np.array([r]), rule)[0] == pytest.approx(total / r, abs=1e-12)
