"""Metrics: hand-computed cases for every function, batch == per query, and bad inputs."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from irviewer.core import metrics as m
from irviewer.core.errors import InputError

RANKS, N = [0, 1, 3, 6], 4  # positives at 0-based ranks 0, 1, 3, 6 of 4 positives


def test_finite_sum_ap_by_hand():
    assert m.average_precision_finite(RANKS, N) == pytest.approx((1 + 1 + 3 / 4 + 4 / 7) / 4)
    # Two positives never retrieved still count in the denominator.
    assert m.average_precision_finite([0, 2], 4) == pytest.approx((1 + 2 / 3) / 4)


def test_trapezoid_ap_by_hand():
    # (precision before + precision at) / 2 per positive, with precision before = j / r.
    expected = ((1 + 1) / 2 + (1 + 1) / 2 + (2 / 3 + 3 / 4) / 2 + (3 / 6 + 4 / 7) / 2) / 4
    assert m.average_precision_trapezoid(RANKS, N) == pytest.approx(expected)
    assert m.average_precision_trapezoid([1], 1) == pytest.approx((0 / 1 + 1 / 2) / 2)
    assert m.average_precision(RANKS, N, "trapezoid") == pytest.approx(expected)


def test_precision_at_k_true_and_revisitop():
    assert m.precision_at_k(RANKS, N, 1) == 1.0
    assert m.precision_at_k(RANKS, N, 5) == pytest.approx(3 / 5)
    assert m.precision_at_k(RANKS, N, 10) == pytest.approx(4 / 10)
    # revisitop: kq = min(k, rank of last positive = 7) -> P@10 = 4 / 7, P@5 = 3 / 5.
    assert m.precision_at_k_revisitop(RANKS, N, 10) == pytest.approx(4 / 7)
    assert m.precision_at_k_revisitop(RANKS, N, 5) == pytest.approx(3 / 5)
    assert m.precision_at_k_revisitop([], 3, 5) == 0.0


def test_r_precision_inp_first_rank_and_cmc():
    assert m.r_precision(RANKS, N) == pytest.approx(3 / 4)  # 3 positives in the top 4
    assert m.inverse_negative_penalty(RANKS, N) == pytest.approx(4 / 7)
    assert m.inverse_negative_penalty([0, 1], 3) == 0.0  # one positive never found
    assert m.first_positive_rank([2, 5]) == 2 and m.first_positive_rank([]) is None
    np.testing.assert_array_equal(m.cmc_first_match([2, 5], 2, (1, 3, 5)), [0, 1, 1])


def test_no_positive_gives_nan_everywhere():
    for value in (m.average_precision_finite([], 0), m.average_precision_trapezoid([], 0),
                  m.precision_at_k([], 0, 1), m.precision_at_k_revisitop([], 0, 1),
                  m.r_precision([], 0), m.inverse_negative_penalty([], 0)):
        assert math.isnan(value)
    assert np.isnan(m.cmc_first_match([], 0, (1, 5))).all()


def test_pr_points_and_interpolation():
    recall, precision = m.pr_points(RANKS, N)
    np.testing.assert_allclose(recall, [1 / 4, 2 / 4, 3 / 4, 1])
    np.testing.assert_allclose(precision, [1, 1, 3 / 4, 4 / 7])
    levels = np.array([0.0, 0.5, 0.6, 1.0])
    np.testing.assert_allclose(m.interpolated_precision(recall, precision, levels),
                               [1, 1, 3 / 4, 4 / 7])
    np.testing.assert_allclose(m.interpolated_precision(recall[:2], precision[:2], levels),
                               [1, 1, 0, 0])


def test_single_gallery_shot_is_exact_when_every_identity_has_one_image():
    # Valid gallery in rank order: ids 7, 3, 5 (the query's id), 9 -> the match is third.
    rng = np.random.default_rng(0)
    got = m.cmc_single_gallery_shot(np.array([0, 1, 2, 3]), np.array([7, 3, 5, 9]), 5,
                                    (1, 2, 3), repeats=10, rng=rng)
    np.testing.assert_array_equal(got, [0, 0, 1])


def test_single_gallery_shot_matches_its_expectation():
    # Query id 1 has images at ranks 0 and 3; id 2 has one image at rank 1; id 3 at rank 2.
    # Drawing rank 0 (p = 1/2) makes the match first; drawing rank 3 puts it third.
    # Expected CMC@1 = 1/2, CMC@3 = 1.
    rng = np.random.default_rng(1)
    got = m.cmc_single_gallery_shot(np.array([0, 1, 2, 3]), np.array([1, 2, 3, 1]), 1,
                                    (1, 3), repeats=20_000, rng=rng)
    assert got[0] == pytest.approx(0.5, abs=0.02) and got[1] == 1.0
    assert np.isnan(m.cmc_single_gallery_shot(np.array([0]), np.array([2]), 1, (1,), 3,
                                              rng)).all()


def test_nanmean_evaluated_takes_the_mean_last():
    assert m.nanmean_evaluated(np.array([0.5, np.nan, 1.0])) == (0.75, 2, 1)
    mean, n, skipped = m.nanmean_evaluated(np.array([np.nan]))
    assert math.isnan(mean) and (n, skipped) == (0, 1)


def ragged(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.concatenate([[0], np.cumsum([len(x) for x in lists])]).astype(np.int64)
    flat = np.concatenate([np.asarray(x, dtype=np.int64) for x in lists]) if lists else []
    return np.asarray(flat, dtype=np.int64), offsets


def random_queries(seed: int, n_q: int = 40) -> tuple[list[list[int]], np.ndarray]:
    rng = np.random.default_rng(seed)
    lists, n = [], []
    for _ in range(n_q):
        total = int(rng.integers(0, 6))
        got = int(rng.integers(0, total + 1))
        lists.append(sorted(rng.choice(30, size=got, replace=False).tolist()))
        n.append(total)
    return lists, np.array(n, dtype=np.int64)


@pytest.mark.parametrize("seed", range(5))
def test_batch_functions_equal_the_per_query_functions(seed):
    lists, n = random_queries(seed)
    r, o = ragged(lists)
    for rule in ("finite", "trapezoid"):
        want = [m.average_precision(x, k, rule) for x, k in zip(lists, n, strict=True)]
        np.testing.assert_allclose(m.batch_average_precision(r, o, n, rule), want)
    for k in (1, 3, 10):
        np.testing.assert_allclose(m.batch_precision_at_k(r, o, n, k),
                                   [m.precision_at_k(x, c, k) for x, c in zip(lists, n,
                                                                              strict=True)])
        np.testing.assert_allclose(m.batch_precision_at_k_revisitop(r, o, n, k),
                                   [m.precision_at_k_revisitop(x, c, k)
                                    for x, c in zip(lists, n, strict=True)])
    np.testing.assert_allclose(m.batch_r_precision(r, o, n),
                               [m.r_precision(x, c) for x, c in zip(lists, n, strict=True)])
    np.testing.assert_allclose(m.batch_inverse_negative_penalty(r, o, n),
                               [m.inverse_negative_penalty(x, c)
                                for x, c in zip(lists, n, strict=True)])
    np.testing.assert_array_equal(m.batch_first_positive_rank(r, o),
                                  [x[0] if x else -1 for x in lists])
    np.testing.assert_allclose(m.batch_cmc_first_match(r, o, n, (1, 5)),
                               [m.cmc_first_match(x, c, (1, 5))
                                for x, c in zip(lists, n, strict=True)])
    levels = np.linspace(0, 1, 11)
    curves = [m.interpolated_precision(*m.pr_points(x, c), levels)
              for x, c in zip(lists, n, strict=True) if c > 0]
    np.testing.assert_allclose(m.mean_interpolated_pr(r, o, n, levels),
                               np.mean(curves, axis=0))


BAD = [
    (lambda: m.average_precision_finite([2, 1], 3),
     "positive ranks must be sorted ascending without repeats"),
    (lambda: m.average_precision_finite([1, 1], 3),
     "positive ranks must be sorted ascending without repeats"),
    (lambda: m.average_precision_trapezoid([-1, 2], 3),
     "positive ranks must be 0-based and non-negative, got -1"),
    (lambda: m.precision_at_k([0, 1, 2], 2, 1), "3 retrieved positives but only 2 positives"),
    (lambda: m.precision_at_k([0], 1, 0), "the cut-off k must be at least 1, not 0"),
    (lambda: m.average_precision([0], 1, "11point"),
     "unknown AP rule '11point': use finite or trapezoid"),
    (lambda: m.batch_average_precision(np.array([0]), np.array([0, 1]), np.array([1]), "x"),
     "unknown AP rule 'x': use finite or trapezoid"),
    (lambda: m.batch_precision_at_k(np.array([0, 1]), np.array([0, 2]), np.array([1]), 1),
     "a query has more retrieved positives than positives"),
    (lambda: m.batch_precision_at_k(np.array([0]), np.array([0, 2]), np.array([3]), 1),
     "ragged ranks: 2 offsets for 1 queries and 1 ranks do not fit together"),
    (lambda: m.cmc_single_gallery_shot(np.array([0]), np.array([1]), 1, (1,), 0,
                                       np.random.default_rng(0)),
     "the repeat count must be at least 1, not 0"),
]


@pytest.mark.parametrize(("call", "message"), BAD)
def test_bad_inputs_give_one_clear_sentence(call, message):
    with pytest.raises(InputError, match=re.escape(message)):
        call()


@pytest.mark.parametrize("rule", ["finite", "trapezoid"])
@pytest.mark.parametrize(("ranks", "n"), [(RANKS, N), ([0, 2], 4), ([1], 1), ([], 2)])
def test_ap_polyline_area_is_the_ap(rule, ranks, n):
    x, y = m.ap_polyline(ranks, n, rule)
    area = float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2)) if len(x) else 0.0
    assert area == pytest.approx(m.average_precision(ranks, n, rule))
