"""Exact sums, dot products and cosines of float32 vectors, against rational arithmetic."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.core.exact_scores import (
    exact_dots,
    exact_negative_squared_distances,
    exact_pair_cosines,
    exact_sums,
    small_integer_unit,
)


def rational_sum(terms: np.ndarray) -> Fraction:
    return sum((Fraction(float(t)) for t in terms), Fraction(0))


def vectors(rng: np.random.Generator, kind: str, n: int) -> np.ndarray:
    """float32 values of one kind: gaussian, rounded to one decimal, or of mixed scales."""
    if kind == "gaussian":
        return rng.standard_normal(n).astype(np.float32)
    if kind == "decimal":
        return np.round(rng.standard_normal(n), 1).astype(np.float32)
    return (rng.standard_normal(n) * 10.0 ** rng.integers(-6, 6, n)).astype(np.float32)


@pytest.mark.parametrize("kind", ["gaussian", "decimal", "scales"])
@pytest.mark.parametrize("seed", range(40))
def test_a_dot_product_is_its_exact_value_rounded_once_in_any_order(kind, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    a, b = vectors(rng, kind, n), vectors(rng, kind, n)
    products = a.astype(np.float64) * b
    expected = float(rational_sum(products))  # Fraction -> float rounds to nearest, even
    assert exact_sums(products[None, :])[0] == expected
    assert exact_sums(products[None, rng.permutation(n)])[0] == expected
    assert exact_dots(a[None, :], b[None, :])[0] == expected


def test_ties_of_the_rounding_go_to_even_and_a_tiny_term_breaks_them():
    """Sums exactly halfway between two floats round to the even one; a term far below the
    last place decides the rounding when it breaks the tie (double rounding would not)."""
    big = 2.0**53
    cases = [[big, 1.0], [big, 1.0, 2.0**-60], [big, 1.0, -(2.0**-60)], [big, 3.0],
             [-big, -1.0, -(2.0**-60)], [big + 2, 1.0], [1.0, 2.0**-53], [1.0, 2.0**-53, 2**-100]]
    for terms in cases:
        t = np.array([terms])
        assert exact_sums(t)[0] == float(rational_sum(t[0])), terms
    assert exact_sums(np.array([[big, 1.0, 2.0**-60]]))[0] == big + 2


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=64), st.randoms())
def test_a_sum_of_float32_products_is_exact_whatever_the_order(values, random):
    a = np.array(values, dtype=np.float32)
    products = a.astype(np.float64) * a[::-1]
    shuffled = products.copy()
    random.shuffle(shuffled)
    expected = float(rational_sum(products))
    assert exact_sums(products[None, :])[0] == expected
    assert exact_sums(shuffled[None, :])[0] == expected


def test_a_tiny_product_far_below_the_largest_still_breaks_a_tie():
    """Products spanning more than the three levels (1e-38 beside 1e11): the exact sum lies
    halfway between two floats but for the tiny term, which must round it up."""
    values = np.zeros(25, dtype=np.float32)
    values[[0, 9, 12, 15, 24]] = [887863.0, -1.0, 113378.0546875, -1.1754943508222875e-38,
                                   302356.0]
    products = values.astype(np.float64) * values[::-1]
    expected = float(rational_sum(products))
    assert expected == math.fsum(products) != float(rational_sum(products[products > 1e-30]))
    assert exact_sums(products[None, :])[0] == expected
    assert exact_sums(np.stack([products, products[::-1]])).tolist() == [expected] * 2


def test_rows_are_summed_independently_and_empty_rows_are_zero():
    t = np.array([[1.0, 2.0**-60, 0.0], [0.0, 0.0, 0.0], [-3.0, 2.0**40, -(2.0**40)]])
    assert exact_sums(t).tolist() == [1.0 + 2.0**-60, 0.0, -3.0]
    assert exact_sums(np.zeros((2, 0))).tolist() == [0.0, 0.0]
    assert exact_sums(np.zeros((0, 3))).shape == (0,)


def test_equal_cosines_in_exact_arithmetic_are_equal_floats():
    """A gallery vector, its copy with two coordinates swapped where the query's values are
    equal, and its double (a power of two) all have the same exact cosine with the query:
    the computed cosines are equal, which plain float64 sums in a fixed order do not
    promise."""
    rng = np.random.default_rng(0)
    q = np.round(rng.uniform(-1, 1, 64), 1).astype(np.float32)
    q[7] = q[40]
    g = np.round(rng.uniform(-1, 1, 64), 1).astype(np.float32)
    swapped = g.copy()
    swapped[[7, 40]] = g[[40, 7]]
    gallery = np.stack([g, swapped, 2 * g])
    in_order = np.cumsum(q.astype(np.float64) * gallery[:2], axis=1)[:, -1]
    assert in_order[0] != in_order[1]  # the same products summed in another order
    cos = exact_pair_cosines(np.broadcast_to(q, gallery.shape), gallery)
    assert cos[0] == cos[1] == cos[2]
    exact = (rational_sum(q.astype(np.float64) * g)
             / np.sqrt(float(rational_sum(g.astype(np.float64) ** 2)))
             / np.sqrt(float(rational_sum(q.astype(np.float64) ** 2))))
    assert cos[0] == pytest.approx(float(exact), rel=1e-15)
    np.testing.assert_array_equal(exact_pair_cosines(np.stack([q, q, q]), gallery), cos)


def test_negative_squared_distance_is_exact():
    rng = np.random.default_rng(2)
    q = vectors(rng, "decimal", 32)
    g = np.stack([vectors(rng, "decimal", 32) for _ in range(5)])
    got = exact_negative_squared_distances(q, g)
    for row, value in zip(g, got, strict=True):
        diff = [Fraction(float(x)) - Fraction(float(y)) for x, y in zip(q, row, strict=True)]
        assert value == float(-sum(d * d for d in diff))


def test_small_integer_units_are_found_and_real_numbers_refused():
    assert small_integer_unit(np.array([[1, -1], [-1, 1]], dtype=np.float32), 11) == (1.0, 1)
    assert small_integer_unit(np.array([0.5, 0.25, -0.75]), 11) == (0.25, 2)
    assert small_integer_unit(np.array([0, 255], dtype=np.uint8), 11) == (1.0, 8)
    assert small_integer_unit(np.zeros(3), 11) == (1.0, 0)
    assert small_integer_unit(np.array([0.1], dtype=np.float32), 11) is None
    assert small_integer_unit(np.array([1, 4096], dtype=np.float32), 11) is None
    assert small_integer_unit(np.array([1, 4096], dtype=np.float32), 13) == (1.0, 13)
