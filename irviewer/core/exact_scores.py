"""Scores computed so that they do not depend on the machine: the cosine (and the squared
Euclidean distance) of two float32 vectors from their exact dot products, each rounded once
to float64.

A float32 matrix multiply sums its products in an order that depends on the BLAS kernel,
the CPU and the number of threads, so scores that are equal in exact arithmetic (binarised
or quantised descriptors, duplicates) come out a few units of the last place apart, and
which one ranks first depends on the machine. The ranking orders such near ties again by
the scores of this module (:mod:`irviewer.core.ranking.settle`).

How a sum is made exact, whatever its order: every product of two float32 values is exact
in float64 (24 + 24 significant bits). Each product is split onto a fixed grid of three
levels below the row's largest product (Demmel & Nguyen's pre-rounding, "Fast reproducible
floating-point summation", ARITH 2013; Rump, Ogita & Oishi's ``ExtractVector``): at each
level the part of every product that is a multiple of the level's unit is taken out by
adding and subtracting ``1.5 * 2**52`` units, which rounds exactly; the parts of one level
are whole multiples of its unit small enough that their float64 sum is exact in any order.
The three level sums together are the exact sum whenever the row's products span less than
about ``2**75`` in magnitude (every descriptor anyone ranks), and they are rounded to the
nearest float64 once; a row whose smallest products reach below the third level (a part is
left over) is summed by :func:`math.fsum` instead, which is exact and correctly rounded too,
only slower.

So the dot product and the squared norms are the correctly rounded float64 of their exact
values, and the cosine ``dot / sqrt(|g|^2) / sqrt(|q|^2)`` is three more correctly rounded
operations: a deterministic function of the vectors on every IEEE machine, equal for two
gallery vectors whose exact dot products and norms are equal (duplicates, permutations,
binary and quantised codes of the same norm). Two vectors whose exact cosines are equal but
whose norms differ by a factor other than a power of two may still differ in the last bit
of the float64 cosine, as may exact cosines closer than about 1e-16 relative.
"""

from __future__ import annotations

import math

import numpy as np

#: Float64 values of products handled at a time (512 KiB: the passes over them stay in the cache).
_PAIR_VALUES = 1 << 16
#: Grid levels: three levels of W bits below the largest product (W about 40).
_LEVELS = 3


def exact_sums(terms: np.ndarray) -> np.ndarray:
    """Return, per row of the (m, n) float64 array ``terms``, its exact sum rounded once to
    the nearest float64 (ties to even), whatever the order of the terms.

    Vectorised when each row's terms span less than about 2**75 in magnitude below its
    largest (see the module); a wider row is summed by :func:`math.fsum`. Terms must be
    finite.
    """
    t = np.asarray(terms, dtype=np.float64)
    m, n = t.shape
    if m == 0:
        return np.zeros(0, dtype=np.float64)
    if n == 0:
        return np.zeros(m, dtype=np.float64)
    width = 52 - max(1, int(np.ceil(np.log2(max(n, 2)))))  # n parts of width bits sum exactly
    _, top = np.frexp(np.abs(t).max(axis=1))  # |term| < 2**top
    top = top.astype(np.int64)
    rest = t.copy()
    part = np.empty_like(rest)
    sums = np.zeros((_LEVELS, m), dtype=np.float64)
    for level in range(_LEVELS):
        unit = np.ldexp(1.0, top - (level + 1) * width)[:, None]
        shift = 1.5 * 2.0**52 * unit  # adding and subtracting it rounds to a multiple of unit
        np.add(rest, shift, out=part)
        part -= shift
        rest -= part
        sums[level] = part.sum(axis=1)
        if level < _LEVELS - 1 and not rest.any():
            break  # every term is whole at this level (binary, integer codes)
    s1, s2, s3 = sums
    u2 = np.ldexp(1.0, top - 2 * width)
    # The lowest level's sum in [0, u2): the rest carried into the middle one (exact).
    carry = np.floor(s3 / u2) * u2
    s3 = s3 - carry
    s2 = s2 + carry
    out = _round_three(s1, s2, s3)
    for row in np.flatnonzero(rest.any(axis=1)):
        out[row] = math.fsum(t[row])  # terms below the third level: summed exactly there
    return out


def _round_three(s1: np.ndarray, s2: np.ndarray, s3: np.ndarray) -> np.ndarray:
    """Return the nearest float64 to s1 + s2 + s3 (exactly), where s1 + s2 is a multiple of
    a unit u and 0 <= s3 < u: s1 + s2 as a float and its error (Knuth's two-sum), then s3,
    which only decides a tie (it is under half a unit of the last place) unless s1 + s2
    was exact."""
    hi = s1 + s2
    back = hi - s1
    lo = (s1 - (hi - back)) + (s2 - back)
    out = np.where(lo == 0, hi + s3, hi)
    up = np.nextafter(hi, np.inf)
    tie = (lo > 0) & (2 * lo == up - hi) & (s3 > 0)  # up - hi: exact (Sterbenz)
    out[tie] = up[tie]
    return out


def exact_dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return the dot product of each row pair (a[i], b[i]) of two (m, dim) arrays of
    float32 values (any dtype that float32 holds exactly), exact and rounded once to float64
    (:func:`exact_sums`)."""
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    m, dim = a.shape
    out = np.empty(m, dtype=np.float64)
    step = max(1, _PAIR_VALUES // max(dim, 1))
    for s in range(0, m, step):
        products = a[s:s + step].astype(np.float64)
        products *= b[s:s + step]  # float32 x float32: exact in float64
        out[s:s + step] = exact_sums(products)
    return out


def exact_squared_norms(a: np.ndarray) -> np.ndarray:
    """Return the squared L2 norm of each row of ``a`` (float32 values), exact and rounded
    once to float64."""
    return exact_dots(a, a)


def exact_pair_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return the float64 cosine of each row pair (a[i], b[i]) of float32 vectors:
    ``dot / sqrt(|b|^2) / sqrt(|a|^2)`` from the exact dot product and squared norms, each
    operation correctly rounded, so the value depends only on the vectors, never on the
    machine (see the module). An all-zero row gives nan."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (exact_dots(a, b) / np.sqrt(exact_squared_norms(b))
                / np.sqrt(exact_squared_norms(a)))


def exact_negative_squared_distances(query: np.ndarray, gallery: np.ndarray) -> np.ndarray:
    """Return ``-|q - g|^2`` of one float32 ``query`` (dim,) and each row of ``gallery``
    (m, dim), exact and rounded once to float64: the terms ``-q_d^2 + 2 q_d g_d - g_d^2``
    are exact products, summed exactly together."""
    q = np.asarray(query, dtype=np.float32).reshape(1, -1).astype(np.float64)
    g = np.asarray(gallery, dtype=np.float32)
    m, dim = g.shape
    out = np.empty(m, dtype=np.float64)
    step = max(1, _PAIR_VALUES // max(3 * dim, 1))
    for s in range(0, m, step):
        rows = g[s:s + step].astype(np.float64)
        terms = np.concatenate([np.broadcast_to(-q * q, rows.shape), 2 * q * rows,
                                -rows * rows], axis=1)
        out[s:s + step] = exact_sums(terms)
    return out


def small_integer_unit(values: np.ndarray, bits: int) -> tuple[float, int] | None:
    """Return (u, b) when every value is a whole multiple of the power of two ``u`` and
    ``|value| / u < 2**b`` with ``b <= bits`` (sign-binarised, 0/1 or small quantised
    codes, in any float or integer dtype); None otherwise. All zero: (1.0, 0)."""
    v = np.asarray(values, dtype=np.float32).reshape(-1)
    nonzero = v[v != 0]
    if not len(nonzero):
        return 1.0, 0
    mantissa, exponent = np.frexp(nonzero)
    whole = (mantissa.astype(np.float64) * 2.0**24).astype(np.int64)  # exact: 24 bits
    lowest = np.frexp((whole & -whole).astype(np.float64))[1] - 1  # trailing zero bits
    unit = int((exponent.astype(np.int64) - 24 + lowest).min())
    top = int(np.frexp(np.float64(np.abs(nonzero).max()))[1])  # |v| < 2**top
    if top - unit > bits:
        return None
    return float(2.0**unit), top - unit
