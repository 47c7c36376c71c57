"""Metrics: hand-computed values for every function, batch == per query, and bad inputs.

Every expected value is written out as the arithmetic a person does on paper. The running
example: 4 positives, retrieved at 0-based ranks 0, 1, 3, 6 (1-based 1, 2, 4, 7).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from irviewer.core import metrics as m
from irviewer.core.errors import InputError

RANKS, N = [0, 1, 3, 6], 4
NAN = float("nan")


# -- average precision --------------------------------------------------------------------

def test_finite_sum_ap_by_hand():
    assert m.average_precision_finite(RANKS, N) == pytest.approx((1 + 1 + 3 / 4 + 4 / 7) / 4)
    assert m.average_precision_finite([0, 1], 2) == 1.0
    assert m.average_precision_finite([2], 1) == pytest.approx(1 / 3)
    # Truncated list: two positives never retrieved still count in the denominator.
    assert m.average_precision_finite([0, 2], 4) == pytest.approx((1 + 2 / 3) / 4)
    assert m.average_precision_finite([], 3) == 0.0


def test_trapezoid_ap_by_hand():
    # Per positive: (precision just before it + precision at it) / 2, times 1 / n.
    # j=0 at r=0: before = 1 (rank 0), at = 1/1; j=1 at r=1: before = 1/1, at = 2/2;
    # j=2 at r=3: before = 2/3, at = 3/4;        j=3 at r=6: before = 3/6, at = 4/7.
    expected = ((1 + 1) / 2 + (1 + 1) / 2 + (2 / 3 + 3 / 4) / 2 + (3 / 6 + 4 / 7) / 2) / 4
    assert m.average_precision_trapezoid(RANKS, N) == pytest.approx(expected)
    assert m.average_precision_trapezoid([1], 1) == pytest.approx((0 / 1 + 1 / 2) / 2)
    assert m.average_precision_trapezoid([0, 1], 2) == 1.0
    # Truncated: j=0 at r=0 -> (1 + 1)/2; j=1 at r=2 -> (1/2 + 2/3)/2; over 4 positives.
    assert m.average_precision_trapezoid([0, 2], 4) == pytest.approx(
        ((1 + 1) / 2 + (1 / 2 + 2 / 3) / 2) / 4)
    assert m.average_precision_trapezoid([], 2) == 0.0


def test_average_precision_dispatches_by_rule():
    assert m.average_precision(RANKS, N, "finite") == pytest.approx(
        (1 + 1 + 3 / 4 + 4 / 7) / 4)
    assert m.average_precision(RANKS, N, "trapezoid") == pytest.approx(
        ((1 + 1) / 2 + (1 + 1) / 2 + (2 / 3 + 3 / 4) / 2 + (3 / 6 + 4 / 7) / 2) / 4)
    assert m.SUM_AP_RULES == ("finite", "trapezoid")


# -- precision at k ----------------------------------------------------------------------

def test_true_precision_at_k_by_hand():
    assert m.precision_at_k(RANKS, N, 1) == 1 / 1
    assert m.precision_at_k(RANKS, N, 3) == pytest.approx(2 / 3)
    assert m.precision_at_k(RANKS, N, 5) == pytest.approx(3 / 5)
    assert m.precision_at_k(RANKS, N, 10) == pytest.approx(4 / 10)
    # A list shorter than k is padded with non-positives (trec_eval P.k).
    assert m.precision_at_k([0], 1, 5) == pytest.approx(1 / 5)
    assert m.precision_at_k([0, 2], 4, 3) == pytest.approx(2 / 3)
    assert m.precision_at_k([], 2, 1) == 0.0


def test_revisitop_precision_at_k_by_hand():
    # kq = min(k, 1-based rank of the last positive = 7).
    assert m.precision_at_k_revisitop(RANKS, N, 10) == pytest.approx(4 / 7)  # kq = 7
    assert m.precision_at_k_revisitop(RANKS, N, 5) == pytest.approx(3 / 5)  # kq = 5
    assert m.precision_at_k_revisitop(RANKS, N, 1) == 1 / 1
    # The last positive comes before k: divided by its rank, not by k.
    assert m.precision_at_k_revisitop([0, 2], 2, 5) == pytest.approx(2 / 3)  # kq = 3
    assert m.precision_at_k([0, 2], 2, 5) == pytest.approx(2 / 5)
    assert m.precision_at_k_revisitop([1], 1, 10) == pytest.approx(1 / 2)  # kq = 2
    assert m.precision_at_k_revisitop([0, 1, 2, 3], 4, 10) == 4 / 4
    # Truncated list: kq uses the last *retrieved* positive.
    assert m.precision_at_k_revisitop([0, 4], 5, 10) == pytest.approx(2 / 5)  # kq = 5
    # Positives exist but none was retrieved: 0, as the true P@k.
    assert m.precision_at_k_revisitop([], 3, 5) == 0.0


def test_r_precision_by_hand():
    assert m.r_precision(RANKS, N) == pytest.approx(3 / 4)  # ranks 0, 1, 3 are in the top 4
    assert m.r_precision([0, 1], 2) == 2 / 2
    assert m.r_precision([0, 5], 3) == pytest.approx(1 / 3)  # truncated: one never retrieved
    assert m.r_precision([], 2) == 0.0


# -- INP, first match, CMC ---------------------------------------------------------------

def test_inverse_negative_penalty_by_hand():
    assert m.inverse_negative_penalty(RANKS, N) == pytest.approx(4 / 7)
    assert m.inverse_negative_penalty([0, 1], 2) == 2 / 2
    assert m.inverse_negative_penalty([2], 1) == pytest.approx(1 / 3)
    # A positive never retrieved: the hardest positive was not found at all.
    assert m.inverse_negative_penalty([0, 1], 3) == 0.0
    assert m.inverse_negative_penalty([], 1) == 0.0


def test_first_positive_rank():
    assert m.first_positive_rank([2, 5]) == 2
    assert m.first_positive_rank(np.array([0])) == 0
    assert m.first_positive_rank([]) is None


def test_cmc_first_match_by_hand():
    # First positive at 0-based rank 2: within the top k for k >= 3.
    np.testing.assert_array_equal(m.cmc_first_match([2, 5], 2, (1, 2, 3, 5)), [0, 0, 1, 1])
    np.testing.assert_array_equal(m.cmc_first_match([0], 1, [1, 10]), [1, 1])
    np.testing.assert_array_equal(m.cmc_first_match([], 3, (1, 5)), [0, 0])
    assert m.cmc_first_match([0], 1, (1,)).dtype == np.float64


def test_single_gallery_shot_is_exact_when_every_identity_has_one_image():
    # Valid gallery in rank order: ids 7, 3, 5 (the query's id), 9 -> the match is third.
    got = m.cmc_single_gallery_shot(np.array([0, 1, 2, 3]), np.array([7, 3, 5, 9]), 5,
                                    (1, 2, 3, 4), repeats=10, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(got, [0, 0, 1, 1])
    # Only the order of the ranks matters, not the order the items are given in.
    got = m.cmc_single_gallery_shot([30, 2, 11, 7], ["c", "a", "d", "b"], "d", (1, 2, 3, 4),
                                    repeats=3, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(got, [0, 0, 1, 1])  # rank order a, b, d, c
    # k beyond the number of identities: the match is always within.
    got = m.cmc_single_gallery_shot([0, 1], [4, 5], 5, (1, 2, 50), 2, np.random.default_rng(0))
    np.testing.assert_array_equal(got, [0, 1, 1])


def test_single_gallery_shot_matches_its_expectation():
    # Ranks 0..4 hold ids 1, 2, 3, 1, 2; the query is id 1. Each draw keeps one image each.
    # Keep rank 0 (p = 1/2): the match is first. Keep rank 3 (p = 1/2): id 3 (rank 2) is
    # before it, and id 2 is before it when rank 1 is kept (p = 1/2) -> second or third.
    # CMC@1 = 1/2, CMC@2 = 1/2 + 1/2 * 1/2 = 3/4, CMC@3 = 1.
    got = m.cmc_single_gallery_shot(np.arange(5), np.array([1, 2, 3, 1, 2]), 1, (1, 2, 3),
                                    repeats=40_000, rng=np.random.default_rng(1))
    # 40,000 draws: standard error <= sqrt(1/4 / 40,000) = 0.0025; allow 4 of them.
    np.testing.assert_allclose(got, [1 / 2, 1 / 2 + 1 / 2 * 1 / 2, 1], atol=0.01)


def test_single_gallery_shot_is_seeded_and_skips_absent_identities():
    args = (np.arange(6), np.array([1, 2, 1, 2, 3, 1]), 1, (1, 2), 25)
    first = m.cmc_single_gallery_shot(*args, rng=np.random.default_rng(7))
    again = m.cmc_single_gallery_shot(*args, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(first, again)
    rng = np.random.default_rng(0)
    assert np.isnan(m.cmc_single_gallery_shot([0], [2], 1, (1, 5), 3, rng)).all()
    assert np.isnan(m.cmc_single_gallery_shot([], [], 1, (1,), 3, rng)).all()
    assert np.isnan(m.cmc_single_gallery_shot([0, 1], ["a", "b"], 4, (1,), 3, rng)).all()


# -- PR curve ----------------------------------------------------------------------------

def test_pr_points_by_hand():
    recall, precision = m.pr_points(RANKS, N)
    np.testing.assert_allclose(recall, [1 / 4, 2 / 4, 3 / 4, 4 / 4])
    np.testing.assert_allclose(precision, [1 / 1, 2 / 2, 3 / 4, 4 / 7])
    recall, precision = m.pr_points([0, 2], 4)  # truncated: recall never reaches 1
    np.testing.assert_allclose(recall, [1 / 4, 2 / 4])
    np.testing.assert_allclose(precision, [1 / 1, 2 / 3])
    for ranks, n in (([], 3), ([], 0)):
        recall, precision = m.pr_points(ranks, n)
        assert len(recall) == len(precision) == 0


def test_interpolated_precision_by_hand():
    recall, precision = m.pr_points(RANKS, N)
    levels = np.array([0.0, 0.25, 0.5, 0.6, 0.75, 0.8, 1.0])
    np.testing.assert_allclose(m.interpolated_precision(recall, precision, levels),
                               [1, 1, 1, 3 / 4, 3 / 4, 4 / 7, 4 / 7])
    # A level no point reaches gets 0.
    np.testing.assert_allclose(m.interpolated_precision(recall[:2], precision[:2], levels),
                               [1, 1, 1, 0, 0, 0, 0])
    # Interpolation takes the best precision at that recall *or later*.
    np.testing.assert_allclose(
        m.interpolated_precision([0.25, 0.5, 0.75, 1.0], [1.0, 0.5, 0.6, 0.4], [0.5, 0.9]),
        [0.6, 0.4])
    assert len(m.interpolated_precision([], [], [0.0, 1.0])) == 2
    np.testing.assert_array_equal(m.interpolated_precision([], [], [0.0, 1.0]), [0, 0])


def test_interpolated_precision_reaches_levels_despite_float_rounding():
    # 3/10 == 0.3 but np.linspace(0, 1, 11)[3] == 0.30000000000000004.
    recall, precision = m.pr_points([0, 1, 2], 10)
    levels = np.linspace(0, 1, 11)
    assert levels[3] > 3 / 10
    got = m.interpolated_precision(recall, precision, levels)
    np.testing.assert_array_equal(got, [1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0])


def test_ap_polyline_area_is_the_ap():
    x, y = m.ap_polyline(RANKS, N, "trapezoid")
    np.testing.assert_allclose(x, [0, 1 / 4, 1 / 4, 2 / 4, 2 / 4, 3 / 4, 3 / 4, 1])
    np.testing.assert_allclose(y, [1, 1, 1, 1, 2 / 3, 3 / 4, 3 / 6, 4 / 7])
    for rule in m.SUM_AP_RULES:
        for ranks, n in ((RANKS, N), ([0, 2], 4), ([1], 1), ([], 2)):
            x, y = m.ap_polyline(ranks, n, rule)
            area = float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2)) if len(x) else 0.0
            assert area == pytest.approx(m.average_precision(ranks, n, rule))


# -- skipped queries and means -------------------------------------------------------------

def test_no_positive_gives_nan_everywhere():
    for value in (m.average_precision_finite([], 0), m.average_precision_trapezoid([], 0),
                  m.average_precision([], 0, "finite"), m.precision_at_k([], 0, 1),
                  m.precision_at_k_revisitop([], 0, 1), m.r_precision([], 0),
                  m.inverse_negative_penalty([], 0)):
        assert math.isnan(value)
    assert np.isnan(m.cmc_first_match([], 0, (1, 5))).all()


# -- batch -------------------------------------------------------------------------------

def ragged(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.concatenate([[0], np.cumsum([len(x) for x in lists])]).astype(np.int64)
    flat = np.concatenate([np.asarray(x, dtype=np.int64) for x in lists]) if lists else []
    return np.asarray(flat, dtype=np.int64), offsets


# Four queries: the running example, one skipped (no positive), one with 1 of 3 positives
# retrieved at rank 2, one with 2 positives and none retrieved.
BATCH = [RANKS, [], [2], []]
BATCH_N = np.array([N, 0, 3, 2])


def test_batch_values_by_hand():
    r, o = ragged(BATCH)
    np.testing.assert_allclose(m.ragged(r, o, BATCH_N).average_precision("finite"),
                               [(1 + 1 + 3 / 4 + 4 / 7) / 4, NAN, (1 / 3) / 3, 0])
    np.testing.assert_allclose(
        m.ragged(r, o, BATCH_N).average_precision("trapezoid"),
        [((1 + 1) / 2 + (1 + 1) / 2 + (2 / 3 + 3 / 4) / 2 + (3 / 6 + 4 / 7) / 2) / 4, NAN,
         ((0 / 2 + 1 / 3) / 2) / 3, 0])
    np.testing.assert_allclose(m.ragged(r, o, BATCH_N).precision_at_k(5),
                               [3 / 5, NAN, 1 / 5, 0])
    np.testing.assert_allclose(m.ragged(r, o, BATCH_N).precision_at_k_revisitop(10),
                               [4 / 7, NAN, 1 / 3, 0])
    np.testing.assert_allclose(m.ragged(r, o, BATCH_N).r_precision(), [3 / 4, NAN, 1 / 3, 0])
    np.testing.assert_allclose(m.ragged(r, o, BATCH_N).inverse_negative_penalty(),
                               [4 / 7, NAN, 0, 0])
    first = m.ragged(r, o, None).first_positive_rank()
    np.testing.assert_array_equal(first, [0, -1, 2, -1])
    assert first.dtype == np.int64
    np.testing.assert_array_equal(m.ragged(r, o, BATCH_N).cmc_first_match((1, 3)),
                                  [[1, 1], [NAN, NAN], [0, 1], [0, 0]])
    # Mean interpolated precision over the 3 evaluated queries at recall 0, 1/2 and 1:
    # query 0 -> 1, 1, 4/7; query 2 (recall 1/3 at precision 1/3) -> 1/3, 0, 0; query 3 -> 0.
    np.testing.assert_allclose(m.mean_interpolated_pr(r, o, BATCH_N, [0, 0.5, 1]),
                               [(1 + 1 / 3 + 0) / 3, (1 + 0 + 0) / 3, (4 / 7 + 0 + 0) / 3])
    assert np.isnan(m.mean_interpolated_pr(*ragged([[]]), [0])).all()
    assert len(m.mean_interpolated_pr(r, o, BATCH_N)) == 11  # the TREC levels by default


def test_batch_handles_no_queries_and_no_ranks():
    r, o = np.zeros(0, np.int64), np.zeros(1, np.int64)
    n = np.zeros(0, np.int64)
    assert m.ragged(r, o, n).average_precision("finite").shape == (0,)
    assert m.ragged(r, o, None).first_positive_rank().shape == (0,)
    assert m.ragged(r, o, n).cmc_first_match((1, 5)).shape == (0, 2)
    assert np.isnan(m.mean_interpolated_pr(r, o, n)).all()


def test_batch_accepts_a_rank_lower_than_the_previous_query_s_last():
    # [5] then [0]: the drop crosses a query boundary, which is not an unsorted query.
    got = m.ragged(np.array([5, 0]), np.array([0, 1, 2]), np.array([1, 1])).precision_at_k(1)
    np.testing.assert_array_equal(got, [0, 1])


def random_queries(seed: int, n_q: int = 60) -> tuple[list[list[int]], np.ndarray]:
    rng = np.random.default_rng(seed)
    lists, n = [], []
    for _ in range(n_q):
        total = int(rng.integers(0, 8))
        got = int(rng.integers(0, total + 1))
        lists.append(sorted(rng.choice(30, size=got, replace=False).tolist()))
        n.append(total)
    return lists, np.array(n, dtype=np.int64)


@pytest.mark.parametrize("seed", range(5))
def test_batch_functions_equal_the_per_query_functions(seed):
    lists, n = random_queries(seed)
    r, o = ragged(lists)
    pairs = list(zip(lists, n.tolist(), strict=True))
    for rule in m.SUM_AP_RULES:
        np.testing.assert_allclose(m.ragged(r, o, n).average_precision(rule),
                                   [m.average_precision(x, c, rule) for x, c in pairs])
    for k in (1, 3, 10, 40):
        np.testing.assert_allclose(m.ragged(r, o, n).precision_at_k(k),
                                   [m.precision_at_k(x, c, k) for x, c in pairs])
        np.testing.assert_allclose(m.ragged(r, o, n).precision_at_k_revisitop(k),
                                   [m.precision_at_k_revisitop(x, c, k) for x, c in pairs])
    np.testing.assert_allclose(m.ragged(r, o, n).r_precision(),
                               [m.r_precision(x, c) for x, c in pairs])
    np.testing.assert_allclose(m.ragged(r, o, n).inverse_negative_penalty(),
                               [m.inverse_negative_penalty(x, c) for x, c in pairs])
    np.testing.assert_array_equal(m.ragged(r, o, None).first_positive_rank(),
                                  [-1 if m.first_positive_rank(x) is None
                                   else m.first_positive_rank(x) for x, _ in pairs])
    np.testing.assert_array_equal(m.ragged(r, o, n).cmc_first_match((1, 5, 20)),
                                  [m.cmc_first_match(x, c, (1, 5, 20)) for x, c in pairs])
    for levels in (np.linspace(0, 1, 11), np.array([0.0, 1 / 3, 0.5, 2 / 3, 0.99])):
        curves = [m.interpolated_precision(*m.pr_points(x, c), levels) for x, c in pairs if c]
        np.testing.assert_allclose(m.mean_interpolated_pr(r, o, n, levels),
                                   np.mean(curves, axis=0), rtol=1e-12)


@pytest.mark.parametrize("n", [3, 7, 10, 25])
def test_batch_interpolation_agrees_on_levels_at_the_tolerance_edge(n):
    # Levels just around i/n + RECALL_TOLERANCE, where float rounding decides whether the
    # i-th point reaches the level: batch and per query must decide alike, bit for bit.
    edge = np.arange(n + 1) / n + m.RECALL_TOLERANCE
    levels = np.concatenate([edge, np.nextafter(edge, 2), np.nextafter(edge, -1),
                             edge + 1e-12, edge - 2e-12])
    ranks = np.sort(np.random.default_rng(n).choice(3 * n, size=n, replace=False))
    for got in (n, n - 1):  # every positive retrieved, and one never retrieved
        want = m.interpolated_precision(*m.pr_points(ranks[:got], n), levels)
        r, o = ragged([ranks[:got].tolist()])
        np.testing.assert_array_equal(m.mean_interpolated_pr(r, o, [n], levels), want)


# -- bad inputs --------------------------------------------------------------------------

def _batch(ranks: list[int], offsets: list[int], n: list[int]):
    return np.array(ranks, dtype=np.int64), np.array(offsets, dtype=np.int64), np.array(n)


BAD = [
    ("unsorted", lambda: m.average_precision_finite([2, 1], 3),
     "positive ranks must be sorted ascending without repeats"),
    ("repeated", lambda: m.average_precision_finite([1, 1], 3),
     "positive ranks must be sorted ascending without repeats"),
    ("negative", lambda: m.average_precision_trapezoid([-1, 2], 3),
     "positive ranks must be 0-based and non-negative, got -1"),
    ("fractional", lambda: m.average_precision_finite([0.5], 1),
     "positive ranks must be whole numbers, got float64 values"),
    ("2-D", lambda: m.average_precision_finite([[0]], 1),
     "positive ranks must be a 1-D list, got 2 dimensions"),
    ("too many", lambda: m.precision_at_k([0, 1, 2], 2, 1),
     "3 retrieved positives but only 2 positives in all"),
    ("too many, 1", lambda: m.r_precision([0, 4], 1),
     "2 retrieved positives but only 1 positive in all"),
    ("n negative", lambda: m.inverse_negative_penalty([], -1),
     "the number of positives cannot be negative (-1)"),
    ("n fractional", lambda: m.average_precision_finite([0], 1.5),
     "the number of positives must be a whole number, not 1.5"),
    ("k zero", lambda: m.precision_at_k([0], 1, 0), "the cut-off k must be at least 1, not 0"),
    ("k revisitop", lambda: m.precision_at_k_revisitop([0], 1, -3),
     "the cut-off k must be at least 1, not -3"),
    ("k fractional", lambda: m.precision_at_k([0], 1, 2.5),
     "the cut-off k must be a whole number, not 2.5"),
    ("cmc k", lambda: m.cmc_first_match([0], 1, (1, 0)),
     "the cut-off k must be at least 1, not 0"),
    ("rule", lambda: m.average_precision([0], 1, "11point"),
     "unknown AP rule '11point': use finite or trapezoid"),
    ("polyline rule", lambda: m.ap_polyline([0], 1, "area"),
     "unknown AP rule 'area': use finite or trapezoid"),
    ("first unsorted", lambda: m.first_positive_rank([3, 2]),
     "positive ranks must be sorted ascending without repeats"),
    ("batch rule", lambda: m.ragged(*_batch([0], [0, 1], [1])).average_precision("x"),
     "unknown AP rule 'x': use finite or trapezoid"),
    ("batch k", lambda: m.ragged(*_batch([0], [0, 1], [1])).precision_at_k(0),
     "the cut-off k must be at least 1, not 0"),
    ("batch too many", lambda: m.ragged(*_batch([0, 0, 1], [0, 1, 3], [1, 1])).precision_at_k(1),
     "query 1: 2 retrieved positives but only 1 positive in all"),
    ("batch offsets", lambda: m.ragged(*_batch([0], [0, 2], [3])).r_precision(),
     "ragged ranks: 2 offsets for 1 query and 1 rank do not fit together"),
    ("batch offsets short", lambda: m.ragged(*_batch([0, 1], [0, 2], [2, 2])).r_precision(),
     "ragged ranks: 2 offsets for 2 queries and 2 ranks do not fit together"),
    ("batch decreasing",
     lambda: m.ragged(*_batch([0, 1, 2], [0, 2, 1, 3], [3, 3, 3])).inverse_negative_penalty(),
     "ragged ranks: offsets must not decrease, but query 1 ends before it starts"),
    ("batch unsorted",
     lambda: m.ragged(*_batch([0, 5, 3], [0, 1, 3], [1, 2])).average_precision("finite"),
     "query 1: positive ranks must be sorted ascending without repeats"),
    ("batch repeated",
     lambda: m.ragged(np.array([4, 4]), np.array([0, 0, 2]), None).first_positive_rank(),
     "query 1: positive ranks must be sorted ascending without repeats"),
    ("batch negative",
     lambda: m.ragged(*_batch([0, -2], [0, 1, 2], [1, 1])).cmc_first_match((1,)),
     "query 1: positive ranks must be 0-based and non-negative, got -2"),
    ("batch n negative", lambda: m.ragged(*_batch([], [0, 0], [-1])).precision_at_k_revisitop(1),
     "query 0: the number of positives cannot be negative (-1)"),
    ("batch fractional", lambda: m.mean_interpolated_pr(np.array([0.0]), [0, 1], [1]),
     "positive ranks must be whole numbers, got float64 values"),
    ("repeats", lambda: m.cmc_single_gallery_shot([0], [1], 1, (1,), 0,
                                                  np.random.default_rng(0)),
     "the repeat count must be at least 1, not 0"),
    ("sgs lengths", lambda: m.cmc_single_gallery_shot([0, 1], [1], 1, (1,), 2,
                                                      np.random.default_rng(0)),
     "2 valid gallery ranks but 1 gallery identity"),
    ("sgs repeated", lambda: m.cmc_single_gallery_shot([0, 3, 0], [1, 2, 3], 1, (1,), 2,
                                                       np.random.default_rng(0)),
     "valid gallery ranks must not repeat"),
    ("sgs negative", lambda: m.cmc_single_gallery_shot([-1], [1], 1, (1,), 2,
                                                       np.random.default_rng(0)),
     "valid gallery ranks must be 0-based and non-negative, got -1"),
    ("sgs k", lambda: m.cmc_single_gallery_shot([0], [1], 1, (0,), 2,
                                                np.random.default_rng(0)),
     "the cut-off k must be at least 1, not 0"),
    ("interpolation", lambda: m.interpolated_precision([0.5, 1.0], [1.0], [0.5]),
     "2 recall values but 1 precision value: one of each per point"),
]


@pytest.mark.parametrize(("call", "message"), [(c, msg) for _, c, msg in BAD],
                         ids=[name for name, _, _ in BAD])
def test_bad_inputs_give_one_clear_sentence(call, message):
    with pytest.raises(InputError, match=re.escape(message)):
        call()


def test_input_error_is_a_value_error():
    with pytest.raises(ValueError, match="unknown AP rule"):
        m.average_precision([0], 1, "x")
