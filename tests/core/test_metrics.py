"""Metrics: hand-computed values for every metric, on one query and on a batch, and bad
inputs.

Every expected value is written out as the arithmetic a person does on paper. The running
example: 4 positives, retrieved at 0-based ranks 0, 1, 3, 6 (1-based 1, 2, 4, 7).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from irviewer.core import metrics as m
from irviewer.core.ap_rules import average_precision
from irviewer.core.errors import InputError
from tests.core.reference import interpolated_precision

RANKS, N = [0, 1, 3, 6], 4
NAN = float("nan")


def ap(ranks: list[int], n: int, rule: str) -> float:
    """One query's AP under ``rule``, through the public entry point."""
    return float(average_precision(m.one_query(ranks, n), rule)[0])


def one(ranks: list[int], n: int) -> m.Ragged:
    return m.one_query(ranks, n)


# -- average precision --------------------------------------------------------------------

def test_finite_sum_ap_by_hand():
    assert ap(RANKS, N, "finite") == pytest.approx((1 + 1 + 3 / 4 + 4 / 7) / 4)
    assert ap([0, 1], 2, "finite") == 1.0
    assert ap([2], 1, "finite") == pytest.approx(1 / 3)
    # Truncated list: two positives never retrieved still count in the denominator.
    assert ap([0, 2], 4, "finite") == pytest.approx((1 + 2 / 3) / 4)
    assert ap([], 3, "finite") == 0.0


def test_trapezoid_ap_by_hand():
    # Per positive: (precision just before it + precision at it) / 2, times 1 / n.
    # j=0 at r=0: before = 1 (rank 0), at = 1/1; j=1 at r=1: before = 1/1, at = 2/2;
    # j=2 at r=3: before = 2/3, at = 3/4;        j=3 at r=6: before = 3/6, at = 4/7.
    expected = ((1 + 1) / 2 + (1 + 1) / 2 + (2 / 3 + 3 / 4) / 2 + (3 / 6 + 4 / 7) / 2) / 4
    assert ap(RANKS, N, "trapezoid") == pytest.approx(expected)
    assert ap([1], 1, "trapezoid") == pytest.approx((0 / 1 + 1 / 2) / 2)
    assert ap([0, 1], 2, "trapezoid") == 1.0
    # Truncated: j=0 at r=0 -> (1 + 1)/2; j=1 at r=2 -> (1/2 + 2/3)/2; over 4 positives.
    assert ap([0, 2], 4, "trapezoid") == pytest.approx(((1 + 1) / 2 + (1 / 2 + 2 / 3) / 2) / 4)
    assert ap([], 2, "trapezoid") == 0.0


def test_the_summed_rules_are_finite_and_trapezoid():
    assert m.SUM_AP_RULES == ("finite", "trapezoid")
    assert one(RANKS, N).summed_ap("finite")[0] == ap(RANKS, N, "finite")


def test_the_summed_ap_refuses_a_rule_it_does_not_sum():
    """The internal piece is not an entry point: a rule it cannot sum is a caller's bug,
    and the message points to the one that takes every rule."""
    with pytest.raises(ValueError, match=re.escape("ap_rules.average_precision takes every rule")):
        one(RANKS, N).summed_ap("interpolated")
    with pytest.raises(ValueError, match=re.escape("ap_rules.average_precision takes every rule")):
        m.summed_ap_polyline(RANKS, N, "11point")


# -- precision at k ----------------------------------------------------------------------

def pk(ranks: list[int], n: int, k: int) -> float:
    return float(one(ranks, n).precision_at_k(k)[0])


def pk_revisitop(ranks: list[int], n: int, k: int) -> float:
    return float(one(ranks, n).precision_at_k_revisitop(k)[0])


def test_true_precision_at_k_by_hand():
    assert pk(RANKS, N, 1) == 1 / 1
    assert pk(RANKS, N, 3) == pytest.approx(2 / 3)
    assert pk(RANKS, N, 5) == pytest.approx(3 / 5)
    assert pk(RANKS, N, 10) == pytest.approx(4 / 10)
    # A list shorter than k is padded with non-positives (trec_eval P.k).
    assert pk([0], 1, 5) == pytest.approx(1 / 5)
    assert pk([0, 2], 4, 3) == pytest.approx(2 / 3)
    assert pk([], 2, 1) == 0.0


def test_revisitop_precision_at_k_by_hand():
    # kq = min(k, 1-based rank of the last positive = 7).
    assert pk_revisitop(RANKS, N, 10) == pytest.approx(4 / 7)  # kq = 7
    assert pk_revisitop(RANKS, N, 5) == pytest.approx(3 / 5)  # kq = 5
    assert pk_revisitop(RANKS, N, 1) == 1 / 1
    # The last positive comes before k: divided by its rank, not by k.
    assert pk_revisitop([0, 2], 2, 5) == pytest.approx(2 / 3)  # kq = 3
    assert pk([0, 2], 2, 5) == pytest.approx(2 / 5)
    assert pk_revisitop([1], 1, 10) == pytest.approx(1 / 2)  # kq = 2
    assert pk_revisitop([0, 1, 2, 3], 4, 10) == 4 / 4
    # Truncated list: kq uses the last *retrieved* positive.
    assert pk_revisitop([0, 4], 5, 10) == pytest.approx(2 / 5)  # kq = 5
    # Positives exist but none was retrieved: 0, as the true P@k.
    assert pk_revisitop([], 3, 5) == 0.0


def test_r_precision_by_hand():
    assert one(RANKS, N).r_precision()[0] == pytest.approx(3 / 4)  # 0, 1, 3 in the top 4
    assert one([0, 1], 2).r_precision()[0] == 2 / 2
    assert one([0, 5], 3).r_precision()[0] == pytest.approx(1 / 3)  # one never retrieved
    assert one([], 2).r_precision()[0] == 0.0


# -- INP, first match, CMC ---------------------------------------------------------------

def test_inverse_negative_penalty_by_hand():
    assert one(RANKS, N).inverse_negative_penalty()[0] == pytest.approx(4 / 7)
    assert one([0, 1], 2).inverse_negative_penalty()[0] == 2 / 2
    assert one([2], 1).inverse_negative_penalty()[0] == pytest.approx(1 / 3)
    # A positive never retrieved: the hardest positive was not found at all.
    assert one([0, 1], 3).inverse_negative_penalty()[0] == 0.0
    assert one([], 1).inverse_negative_penalty()[0] == 0.0


def test_first_positive_rank():
    assert one([2, 5], 2).first_positive_rank().tolist() == [2]
    assert one(np.array([0]), 1).first_positive_rank().tolist() == [0]
    assert one([], 1).first_positive_rank().tolist() == [-1]


def test_cmc_first_match_by_hand():
    # First positive at 0-based rank 2: within the top k for k >= 3.
    np.testing.assert_array_equal(one([2, 5], 2).cmc_first_match((1, 2, 3, 5)), [[0, 0, 1, 1]])
    np.testing.assert_array_equal(one([0], 1).cmc_first_match([1, 10]), [[1, 1]])
    np.testing.assert_array_equal(one([], 3).cmc_first_match((1, 5)), [[0, 0]])
    assert one([0], 1).cmc_first_match((1,)).dtype == np.float64


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


def interpolated_curve(ranks: list[int], n: int, levels) -> np.ndarray:
    """One query's interpolated precision at ``levels``: the mean curve of a batch of one."""
    r, o = ragged([ranks])
    return m.mean_interpolated_pr(r, o, np.array([n]), levels)


def test_interpolated_precision_by_hand():
    levels = np.array([0.0, 0.25, 0.5, 0.6, 0.75, 0.8, 1.0])
    np.testing.assert_allclose(interpolated_curve(RANKS, N, levels),
                               [1, 1, 1, 3 / 4, 3 / 4, 4 / 7, 4 / 7])
    # A level no point reaches gets 0 (two of four positives never retrieved).
    np.testing.assert_allclose(interpolated_curve(RANKS[:2], N, levels),
                               [1, 1, 1, 0, 0, 0, 0])
    # Interpolation takes the best precision at that recall *or later*: precisions 1, 2/4,
    # 3/5, 4/10 at recalls 1/4 .. 1; at recall 1/2 the best later one is 3/5.
    np.testing.assert_allclose(interpolated_curve([0, 3, 4, 9], 4, [0.5, 0.9]), [3 / 5, 4 / 10])
    # Nothing retrieved: 0 at every level.
    np.testing.assert_array_equal(interpolated_curve([], 2, [0.0, 1.0]), [0, 0])


def test_interpolated_precision_reaches_levels_despite_float_rounding():
    # 3/10 == 0.3 but np.linspace(0, 1, 11)[3] == 0.30000000000000004.
    levels = np.linspace(0, 1, 11)
    assert levels[3] > 3 / 10
    got = interpolated_curve([0, 1, 2], 10, levels)
    np.testing.assert_array_equal(got, [1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0])


def test_summed_ap_polyline_area_is_the_ap():
    x, y = m.summed_ap_polyline(RANKS, N, "trapezoid")
    np.testing.assert_allclose(x, [0, 1 / 4, 1 / 4, 2 / 4, 2 / 4, 3 / 4, 3 / 4, 1])
    np.testing.assert_allclose(y, [1, 1, 1, 1, 2 / 3, 3 / 4, 3 / 6, 4 / 7])
    for rule in m.SUM_AP_RULES:
        for ranks, n in ((RANKS, N), ([0, 2], 4), ([1], 1), ([], 2)):
            x, y = m.summed_ap_polyline(ranks, n, rule)
            area = float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2)) if len(x) else 0.0
            assert area == pytest.approx(ap(ranks, n, rule))


# -- skipped queries and means -------------------------------------------------------------

def test_no_positive_gives_nan_everywhere():
    q = one([], 0)
    for value in (ap([], 0, "finite"), ap([], 0, "trapezoid"), ap([], 0, "interpolated"),
                  ap([], 0, "11point"), q.precision_at_k(1)[0],
                  q.precision_at_k_revisitop(1)[0], q.r_precision()[0],
                  q.inverse_negative_penalty()[0]):
        assert np.isnan(value)
    assert np.isnan(q.cmc_first_match((1, 5))).all()


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
    np.testing.assert_allclose(average_precision(m.ragged(r, o, BATCH_N), "finite"),
                               [(1 + 1 + 3 / 4 + 4 / 7) / 4, NAN, (1 / 3) / 3, 0])
    np.testing.assert_allclose(
        average_precision(m.ragged(r, o, BATCH_N), "trapezoid"),
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
    for rule in ("finite", "trapezoid", "interpolated", "11point"):
        assert average_precision(m.ragged(r, o, n), rule).shape == (0,)
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
def test_a_batch_equals_each_of_its_queries_alone(seed):
    """The vectorised metrics keep every query to itself: a batch gives what each query
    gives in a batch of one, and the mean interpolated curve is the mean of the reference
    curves of its evaluated queries."""
    lists, n = random_queries(seed)
    r, o = ragged(lists)
    batch = m.ragged(r, o, n)
    alone = [m.one_query(x, c) for x, c in zip(lists, n.tolist(), strict=True)]

    def each(metric) -> np.ndarray:
        return np.concatenate([metric(q) for q in alone])

    for rule in ("finite", "trapezoid", "interpolated", "11point"):
        np.testing.assert_allclose(average_precision(batch, rule),
                                   each(lambda q, rule=rule: average_precision(q, rule)))
        np.testing.assert_allclose(average_precision(batch, rule, "retrieved"),
                                   each(lambda q, rule=rule: average_precision(q, rule,
                                                                               "retrieved")))
    for k in (1, 3, 10, 40):
        np.testing.assert_allclose(batch.precision_at_k(k),
                                   each(lambda q, k=k: q.precision_at_k(k)))
        np.testing.assert_allclose(batch.precision_at_k_revisitop(k),
                                   each(lambda q, k=k: q.precision_at_k_revisitop(k)))
    np.testing.assert_allclose(batch.r_precision(), each(lambda q: q.r_precision()))
    np.testing.assert_allclose(batch.inverse_negative_penalty(),
                               each(lambda q: q.inverse_negative_penalty()))
    np.testing.assert_array_equal(batch.first_positive_rank(),
                                  each(lambda q: q.first_positive_rank()))
    np.testing.assert_array_equal(batch.cmc_first_match((1, 5, 20)),
                                  np.vstack([q.cmc_first_match((1, 5, 20)) for q in alone]))
    for levels in (np.linspace(0, 1, 11), np.array([0.0, 1 / 3, 0.5, 2 / 3, 0.99])):
        curves = [interpolated_precision(*m.pr_points(x, c), levels)
                  for x, c in zip(lists, n.tolist(), strict=True) if c]
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
        want = interpolated_precision(*m.pr_points(ranks[:got], n), levels)
        r, o = ragged([ranks[:got].tolist()])
        np.testing.assert_array_equal(m.mean_interpolated_pr(r, o, [n], levels), want)


# -- bad inputs --------------------------------------------------------------------------

def _batch(ranks: list[int], offsets: list[int], n: list[int]):
    return np.array(ranks, dtype=np.int64), np.array(offsets, dtype=np.int64), np.array(n)


BAD = [
    ("unsorted", lambda: m.one_query([2, 1], 3),
     "positive ranks must be sorted ascending without repeats"),
    ("repeated", lambda: m.one_query([1, 1], 3),
     "positive ranks must be sorted ascending without repeats"),
    ("negative", lambda: m.one_query([-1, 2], 3),
     "positive ranks must be 0-based and non-negative, got -1"),
    ("fractional", lambda: m.one_query([0.5], 1),
     "positive ranks must be whole numbers, got float64 values"),
    ("2-D", lambda: m.one_query([[0]], 1),
     "positive ranks must be a 1-D list, got 2 dimensions"),
    ("too many", lambda: m.one_query([0, 1, 2], 2),
     "3 retrieved positives but only 2 positives in all"),
    ("too many, 1", lambda: m.pr_points([0, 4], 1),
     "2 retrieved positives but only 1 positive in all"),
    ("n negative", lambda: m.one_query([], -1),
     "the number of positives cannot be negative (-1)"),
    ("n fractional", lambda: m.one_query([0], 1.5),
     "the number of positives must be a whole number, not 1.5"),
    ("k zero", lambda: one([0], 1).precision_at_k(0), "the cut-off k must be at least 1, not 0"),
    ("k revisitop", lambda: one([0], 1).precision_at_k_revisitop(-3),
     "the cut-off k must be at least 1, not -3"),
    ("k fractional", lambda: one([0], 1).precision_at_k(2.5),
     "the cut-off k must be a whole number, not 2.5"),
    ("cmc k", lambda: one([0], 1).cmc_first_match((1, 0)),
     "the cut-off k must be at least 1, not 0"),
    ("rule", lambda: average_precision(one([0], 1), "area"),
     "unknown AP rule 'area': use finite, trapezoid, interpolated or 11point"),
    ("denominator", lambda: average_precision(one([0], 1), "finite", "listed"),
     "unknown AP denominator 'listed': use all, retrieved, depth or list"),
    ("batch rule", lambda: average_precision(m.ragged(*_batch([0], [0, 1], [1])), "x"),
     "unknown AP rule 'x': use finite, trapezoid, interpolated or 11point"),
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
     lambda: m.ragged(*_batch([0, 5, 3], [0, 1, 3], [1, 2])).summed_ap("finite"),
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
]


@pytest.mark.parametrize(("call", "message"), [(c, msg) for _, c, msg in BAD],
                         ids=[name for name, _, _ in BAD])
def test_bad_inputs_give_one_clear_sentence(call, message):
    with pytest.raises(InputError, match=re.escape(message)):
        call()


def test_input_error_is_a_value_error():
    with pytest.raises(ValueError, match="unknown AP rule"):
        average_precision(one([0], 1), "x")
