"""Set-level evidence of the label audit (irviewer.core.audit.sets): positive sets shared by
queries, histogram bins, the calibrated likelihood ratio with Laplace smoothing and the item
left out, the confident-joint priors and the probability that a label is wrong — each on a case
computed by hand, with properties where invariants exist."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.core.audit.sets import (
    confident_prior,
    error_probability,
    histogram_log_lr,
    positive_sets,
    set_log_lr,
    sturges_bins,
    to_bins,
)


def test_queries_with_the_same_positives_share_a_set_their_own_images_included():
    """q0 and q1 are views of one group (each one's own image removed for itself, as
    Holidays does), q2 and q3 two queries outside the gallery with one list."""
    n_g = 6
    pos = np.array([0 * n_g + 1, 0 * n_g + 2, 1 * n_g + 0, 1 * n_g + 2, 2 * n_g + 4, 3 * n_g + 4])
    removed = np.array([0 * n_g + 0, 1 * n_g + 1, 2 * n_g + 5, 3 * n_g + 5])
    sets = positive_sets(pos, removed, np.array([0, 1, -1, -1]), np.ones(n_g, bool))
    assert sets.of_query.tolist() == [0, 0, 1, 1]
    assert sets.queries(0).tolist() == [0, 1] and sets.queries(1).tolist() == [2, 3]
    assert sets.members(0).tolist() == [0, 1, 2] and sets.members(1).tolist() == [4]
    assert sets.n_pos.tolist() == [3, 1]
    assert sets.n_neg.tolist() == [3, 4]  # 6 - 3 - 0, 6 - 1 - 1 (image 5 removed)
    which, s = sets.sets_of(sets.pos_keys, np.array([2, 4, 5, 0]))
    assert sorted(zip(which.tolist(), s.tolist(), strict=True)) == [(0, 0), (1, 1), (3, 0)]
    which, s = sets.sets_of(sets.rem_keys, np.array([5, 1]))
    assert (which.tolist(), s.tolist()) == ([0], [1])


def test_queries_with_other_lists_or_removals_do_not_share():
    n_g = 4
    pos = np.array([0 * n_g + 1, 1 * n_g + 1, 2 * n_g + 1])
    removed = np.array([1 * n_g + 2])
    sets = positive_sets(pos, removed, np.array([-1, -1, -1]), np.array([1, 1, 1, 0], bool))
    assert sets.of_query.tolist() == [0, 1, 0]  # q1 removes image 2, the others do not
    assert sets.n_neg.tolist() == [2, 1]  # image 3 is not ranked at all


def test_bins_a_zero_share_alone_then_sturges_equal_bins():
    assert sturges_bins(np.array([1, 2, 5, 8, 78, 221])).tolist() == [2, 3, 5, 5, 9, 10]
    shares = np.array([0.0, 0.1, 0.25, 0.26, 0.5, 0.75, 1.0])
    assert to_bins(shares, np.full(7, 5)).tolist() == [0, 1, 1, 2, 2, 3, 4]
    assert to_bins(np.array([0.0, 1e-9, 1.0]), np.full(3, 2)).tolist() == [0, 1, 1]


def test_likelihood_ratio_by_hand_with_laplace_and_the_item_left_out():
    # 3 of 5 positives and 1 of 20 negatives in the item's bin, 4 bins
    c_pos, t_pos, c_neg, t_neg, bins = 3.0, 5.0, 1.0, 20.0, 4
    got = histogram_log_lr(np.array([c_pos] * 3), np.array([t_pos] * 3), np.array([c_neg] * 3),
                           np.array([t_neg] * 3), np.array([0, 1, -1]), np.array([bins] * 3))
    assert got[0] == math.log((4 / 9) / (2 / 24))  # not counted: (3+1)/(5+4) over (1+1)/(20+4)
    assert got[1] == math.log((3 / 8) / (2 / 24))  # one of the 3 positives: (2+1)/(4+4)
    assert got[2] == math.log((4 / 9) / (1 / 23))  # the one negative: (0+1)/(19+4)


def test_each_set_is_calibrated_against_its_own_histograms():
    """Set 0 (3 bins) has well-clustered positives, set 1 (2 bins) has not: the same top bin
    is strong evidence in the first, none in the second."""
    offsets = np.array([0, 3, 5])
    pos = np.array([0, 1, 9, 5, 5], dtype=float)  # set 0: 9 of 10 positives in bin 2
    neg = np.array([90, 9, 1, 50, 50], dtype=float)  # set 1: positives like negatives
    item_set, item_bin, own = np.array([0, 1]), np.array([2, 1]), np.array([0, 0])
    got = set_log_lr(item_set, item_bin, own, pos, neg, offsets)
    assert got[0] == math.log(((9 + 1) / (10 + 3)) / ((1 + 1) / (100 + 3)))
    assert got[1] == math.log(((5 + 1) / (10 + 2)) / ((50 + 1) / (100 + 2)))
    assert got[0] > 3.5 and got[1] == 0.0


def test_confident_joint_priors_by_hand():
    """Set 0: positives with evidence 2 and 0 (mean 1); negatives 1.5 (reaches 1: a missed
    positive), -3, and a bulk of 10 at -4 (mean -41.5 / 12); no positive is at most that."""
    log_lr = np.array([2.0, 0.0, 1.5, -3.0, -4.0])
    is_pos = np.array([True, True, False, False, False])
    weight = np.array([1, 1, 1, 1, 10], dtype=float)
    rho_neg, rho_pos = confident_prior(log_lr, is_pos, np.zeros(5, np.int64), weight, 1)
    assert rho_neg == (1 + 1) / (12 + 2)
    assert rho_pos == (0 + 1) / (2 + 2)


def test_error_probability_by_hand():
    p = error_probability(np.array([math.log(3), math.log(3)]), np.array([False, True]),
                          rho_neg=0.25, rho_pos=0.5)
    np.testing.assert_allclose(p, [0.5, 0.25], rtol=0, atol=1e-15)  # odds 1/3 x 3, 1 / 3


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-30, 30), min_size=1, max_size=20), st.floats(1e-4, 0.5),
       st.floats(1e-4, 0.5))
def test_error_probability_is_a_probability_monotone_in_the_evidence(values, rho_n, rho_p):
    lr = np.sort(np.array(values))
    neg = error_probability(lr, np.zeros(len(lr), bool), rho_n, rho_p)
    pos = error_probability(lr, np.ones(len(lr), bool), rho_n, rho_p)
    assert ((neg >= 0) & (neg <= 1) & (pos >= 0) & (pos <= 1)).all()
    assert (np.diff(neg) >= 0).all() and (np.diff(pos) <= 0).all()


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 50), st.integers(0, 50), st.integers(1, 500), st.integers(0, 500),
       st.sampled_from([-1, 0, 1]), st.integers(2, 12))
def test_swapping_the_classes_negates_the_evidence(c_pos, extra_pos, c_neg, extra_neg, own,
                                                   bins):
    t_pos, t_neg = c_pos + extra_pos, c_neg + extra_neg
    a = histogram_log_lr(np.array([c_pos]), np.array([t_pos]), np.array([c_neg]),
                         np.array([t_neg]), np.array([own]), np.array([bins]))
    b = histogram_log_lr(np.array([c_neg]), np.array([t_neg]), np.array([c_pos]),
                         np.array([t_pos]), np.array([-own]), np.array([bins]))
    np.testing.assert_allclose(a, -b, rtol=0, atol=1e-12)


def random_histograms(rng: np.random.Generator, n_sets: int, n_items: int,
                      least: int) -> tuple[np.ndarray, ...]:
    """Return (bins, offsets, positives' and negatives' histograms laid end to end with counts
    from ``least``, each item's set and bin) of ``n_sets`` random sets."""
    bins = rng.integers(2, 7, n_sets)
    offsets = np.concatenate([[0], np.cumsum(bins)])
    pos = rng.integers(least, 20, offsets[-1]).astype(float)
    neg = rng.integers(least, 200, offsets[-1]).astype(float)
    item_set = rng.integers(0, n_sets, n_items)
    return bins, offsets, pos, neg, item_set, rng.integers(0, bins[item_set])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 6))
def test_an_items_evidence_depends_on_its_own_set_only(seed, n_sets):
    """Calibration is per set: reordering the sets, or adding another set with any
    histograms, leaves every item's likelihood ratio as it was."""
    rng = np.random.default_rng(seed)
    bins, offsets, pos, neg, item_set, item_bin = random_histograms(rng, n_sets, 30, least=1)
    own = rng.choice([-1, 0, 1], 30)
    base = set_log_lr(item_set, item_bin, own, pos, neg, offsets)
    perm = rng.permutation(n_sets)  # set s becomes perm[s]
    new_bins = np.empty_like(bins)
    new_bins[perm] = bins
    new_off = np.concatenate([[0], np.cumsum(new_bins)])
    new_pos, new_neg = np.empty_like(pos), np.empty_like(neg)
    for s in range(n_sets):
        new_pos[new_off[perm[s]]:new_off[perm[s] + 1]] = pos[offsets[s]:offsets[s + 1]]
        new_neg[new_off[perm[s]]:new_off[perm[s] + 1]] = neg[offsets[s]:offsets[s + 1]]
    extra = rng.integers(2, 7)
    new_off = np.concatenate([new_off, [new_off[-1] + extra]])
    new_pos = np.concatenate([new_pos, rng.integers(1, 20, extra).astype(float)])
    new_neg = np.concatenate([new_neg, rng.integers(1, 200, extra).astype(float)])
    moved = set_log_lr(perm[item_set], item_bin, own, new_pos, new_neg, new_off)
    np.testing.assert_allclose(moved, base, rtol=0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 6))
def test_set_log_lr_is_each_items_own_histogram_ratio(seed, n_sets):
    """The sets' log ratios are looked up per (bin, own) in a table: every item's value is
    exactly the one of its own bin's counts, totals and own flag."""
    rng = np.random.default_rng(seed)
    bins, offsets, pos, neg, item_set, item_bin = random_histograms(rng, n_sets, 40, least=0)
    at = offsets[item_set] + item_bin
    # an item counted in its class lies in a bin that class has counts in
    own = np.where(pos[at] > 0, rng.choice([-1, 0, 1], 40), rng.choice([-1, 0], 40))
    own = np.where((own < 0) & (neg[at] == 0), 0, own)
    totals_p = np.add.reduceat(pos, offsets[:-1])[item_set]
    totals_n = np.add.reduceat(neg, offsets[:-1])[item_set]
    expect = histogram_log_lr(pos[at], totals_p, neg[at], totals_n, own, bins[item_set])
    got = set_log_lr(item_set, item_bin, own, pos, neg, offsets)
    assert got.tolist() == expect.tolist()
