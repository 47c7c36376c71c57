"""Paired comparison of two methods, query by query: deltas, wins / losses / ties, a bootstrap
interval of the mean delta and two significance tests (scipy.stats).

Two methods scored on the same queries give paired values; the question a reviewer asks is
whether the mean difference is more than the noise of which queries happen to be in the
benchmark. Sources:

- Smucker, Allan & Carterette, "A comparison of statistical significance tests for
  information retrieval evaluation", CIKM 2007: the paired randomization (sign-flip) test
  and the paired t-test agree on IR data and are the tests to use; the bootstrap is close.
- Efron & Tibshirani, "An Introduction to the Bootstrap", Chapman & Hall 1993, ch. 13: the
  percentile interval of a bootstrapped statistic (``scipy.stats.bootstrap``,
  ``method="percentile"``).
- Holm, "A simple sequentially rejective multiple test procedure", Scandinavian Journal of
  Statistics 6 (1979) 65-70: adjusted p-values when several methods face one baseline.
- Student's paired t-test: ``scipy.stats.ttest_1samp`` of the deltas against 0 (the same t and
  p as ``scipy.stats.ttest_rel`` of method and baseline).

Deltas are ``method - baseline``; a win is a delta > 0, a loss < 0, a tie exactly 0 (two
methods that rank a query's positives alike get bit-identical values).
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from irviewer.core.errors import InputError, examples

if TYPE_CHECKING:
    from irviewer.core.evaluation import Evaluation

#: Resamples of the bootstrap interval and the Monte Carlo randomization test by default.
BOOTSTRAP_RESAMPLES = 10_000
PERMUTATIONS = 100_000
#: Up to this many queries the randomization test enumerates all 2^n sign assignments.
EXACT_MAX_QUERIES = 16
#: A permuted mean counts as "at least as extreme" when |sum| >= |observed sum| minus this
#: share of sum |delta| (float rounding of equal sums, never a real difference).
TIE_TOLERANCE = 1e-9
#: Deltas that all lie within this many float64 epsilons (relative to their mean) of their
#: mean count as constant: their variance is float rounding, not a spread of the queries.
#: scipy.stats uses the same bound to warn of "catastrophic cancellation".
CONSTANT_EPSILONS = 10

SOURCES = {
    "paired_t": "two-sided paired t-test (Student): scipy.stats.ttest_1samp of the deltas",
    "randomization": "paired randomization test, sign flips of the per-query deltas "
                     "(Smucker, Allan & Carterette, CIKM 2007)",
    "bootstrap": "95 % percentile bootstrap interval of the mean delta, queries resampled "
                 "with replacement (Efron & Tibshirani 1993)",
    "holm": "Holm-Bonferroni step-down adjustment of the randomization p-values over the "
            "methods compared with one baseline (Holm 1979)",
}


@dataclass(frozen=True)
class TTest:
    """The paired t-test: statistic (nan when undefined, +-inf for constant non-zero deltas),
    degrees of freedom n - 1, the two-sided p-value, and a sentence saying why when the test
    cannot weigh the deltas (fewer than two, or all the same), "" otherwise."""

    statistic: float
    df: int
    p_value: float
    note: str = ""


@dataclass(frozen=True)
class RandomizationTest:
    """The paired randomization test: two-sided p-value, ``"exact"`` or the number of
    Monte Carlo sign assignments, and the seed (None when exact)."""

    p_value: float
    permutations: int | str
    seed: int | None


@dataclass(frozen=True)
class PairedComparison:
    """Two methods' values of one metric on the queries both evaluated, in query order.

    ``queries`` names the paired queries; ``baseline_values`` and ``method_values`` hold the
    metric per query. The statistics (interval, tests) are computed on first use and kept.
    """

    baseline: str
    method: str
    metric: str
    queries: tuple[str, ...]
    baseline_values: np.ndarray
    method_values: np.ndarray
    resamples: int = BOOTSTRAP_RESAMPLES
    permutations: int = PERMUTATIONS
    seed: int = 0
    _deltas: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        b = np.asarray(self.baseline_values, dtype=np.float64)
        m = np.asarray(self.method_values, dtype=np.float64)
        if b.shape != m.shape or b.shape != (len(self.queries),):
            raise ValueError("one baseline and one method value per paired query")
        if not len(self.queries):
            raise InputError(f"{self.baseline} and {self.method} have no query in common "
                             f"with a {self.metric} value: nothing to compare")
        object.__setattr__(self, "baseline_values", b)
        object.__setattr__(self, "method_values", m)
        object.__setattr__(self, "_deltas", m - b)

    @property
    def n(self) -> int:
        """Return the number of paired queries."""
        return len(self.queries)

    @property
    def deltas(self) -> np.ndarray:
        """Return method - baseline per paired query."""
        return self._deltas

    @property
    def mean_baseline(self) -> float:
        """Return the baseline's mean over the paired queries."""
        return float(np.mean(self.baseline_values))

    @property
    def mean_method(self) -> float:
        """Return the method's mean over the paired queries."""
        return float(np.mean(self.method_values))

    @property
    def mean_delta(self) -> float:
        """Return the mean of the per-query deltas (= mean_method - mean_baseline)."""
        return float(np.mean(self._deltas))

    @property
    def wins(self) -> int:
        """Return how many queries the method improves (delta > 0)."""
        return int(np.count_nonzero(self._deltas > 0))

    @property
    def losses(self) -> int:
        """Return how many queries the method makes worse (delta < 0)."""
        return int(np.count_nonzero(self._deltas < 0))

    @property
    def ties(self) -> int:
        """Return how many queries are unchanged (delta exactly 0)."""
        return int(np.count_nonzero(self._deltas == 0))

    @cached_property
    def ci95(self) -> tuple[float, float]:
        """Return the 95 % percentile bootstrap interval of the mean delta."""
        return bootstrap_interval(self._deltas, self.resamples, self.seed)

    @cached_property
    def paired_t(self) -> TTest:
        """Return the two-sided paired t-test of the deltas."""
        return paired_t_test(self._deltas)

    @cached_property
    def randomization(self) -> RandomizationTest:
        """Return the paired randomization test (exact for up to 16 queries)."""
        return randomization_test(self._deltas, self.permutations, self.seed)

    def largest_changes(self, n: int) -> tuple[list[int], list[int]]:
        """Return :func:`largest_changes` of the paired queries' deltas."""
        return largest_changes(self._deltas, n)


def largest_changes(deltas: np.ndarray, n: int) -> tuple[list[int], list[int]]:
    """Return (positions of the ``n`` largest gains, largest first; positions of the ``n``
    largest losses, largest first) among ``deltas``; ties (a delta of exactly 0) are never
    listed. Equal deltas keep their order (a stable sort)."""
    deltas = np.asarray(deltas, dtype=np.float64)
    order = np.argsort(-deltas, kind="stable")
    gains = [int(i) for i in order if deltas[i] > 0][:n]
    order = np.argsort(deltas, kind="stable")
    losses = [int(i) for i in order if deltas[i] < 0][:n]
    return gains, losses


def pair_by_name(baseline: str, method: str, metric: str,
                 baseline_queries: tuple[str, ...] | list[str], baseline_values: np.ndarray,
                 method_queries: tuple[str, ...] | list[str], method_values: np.ndarray,
                 **options: int) -> PairedComparison:
    """Return the :class:`PairedComparison` of the queries both sides name and both scored
    (a nan value means not evaluated), in the baseline's query order.

    ``options`` are ``resamples``, ``permutations`` and ``seed``. InputError when a side
    names a query twice or no query is shared.
    """
    b_vals = np.asarray(baseline_values, dtype=np.float64)
    m_vals = np.asarray(method_values, dtype=np.float64)
    for label, names in ((baseline, baseline_queries), (method, method_queries)):
        twice = [q for q, count in Counter(names).items() if count > 1]
        if twice:
            raise InputError(f"{label}: query names must be unique to pair queries, but "
                             f"{examples(twice)} appear twice")
    where = {q: i for i, q in enumerate(method_queries)}
    rows = [(q, i, where[q]) for i, q in enumerate(baseline_queries) if q in where
            and not np.isnan(b_vals[i]) and not np.isnan(m_vals[where[q]])]
    if not rows:
        raise InputError(f"{baseline} and {method} have no evaluated query in common "
                         f"({metric}): nothing to compare")
    names = tuple(q for q, _, _ in rows)
    b_idx = np.array([i for _, i, _ in rows], dtype=np.int64)
    m_idx = np.array([j for _, _, j in rows], dtype=np.int64)
    return PairedComparison(baseline, method, metric, names, b_vals[b_idx], m_vals[m_idx],
                            **options)


def compare_evaluations(baseline: str, baseline_ev: Evaluation, method: str,
                        method_ev: Evaluation,
                        metric: str = "AP", **options: int) -> PairedComparison:
    """Return the :class:`PairedComparison` of two :class:`~irviewer.core.evaluation.Evaluation`
    objects on ``metric`` (a key of ``per_query``), over the queries both evaluated (paired
    by query name). InputError for a metric the evaluations do not have."""
    for ev in (baseline_ev, method_ev):
        if metric not in ev.per_query or metric in ("first_positive_rank", "n_positives"):
            keys = [k for k in ev.per_query if k not in ("first_positive_rank", "n_positives")]
            raise InputError(f"no metric {metric!r} under protocol {ev.protocol.name}; "
                             f"choose one of {', '.join(keys)}")

    def values(ev: Evaluation) -> np.ndarray:
        v = np.asarray(ev.per_query[metric], dtype=np.float64).copy()
        v[~ev.evaluated] = np.nan
        return v

    return pair_by_name(baseline, method, metric,
                        [q.name for q in baseline_ev.dataset.queries], values(baseline_ev),
                        [q.name for q in method_ev.dataset.queries], values(method_ev),
                        **options)


# -- the statistics ------------------------------------------------------------------------

def statistics_loaded() -> bool:
    """Return True once scipy.stats, which computes the interval and the tests, is imported
    (the first computation imports it: 0.3 s on a quiet machine, seconds from a cold disk;
    the window computes that one off its GUI thread)."""
    return "scipy.stats" in sys.modules


def bootstrap_interval(deltas: np.ndarray, resamples: int = BOOTSTRAP_RESAMPLES,
                       seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Return the percentile bootstrap interval (Efron & Tibshirani 1993, 13.3) of the mean
    of ``deltas``: ``scipy.stats.bootstrap`` with ``method="percentile"`` resamples the
    queries with replacement ``resamples`` times (numpy ``default_rng(seed)``, one row of n
    query indices per resample), takes each resample's mean and returns the
    (1 - level) / 2 and (1 + level) / 2 quantiles of those means (linear interpolation).

    One query: its delta twice (every resample is that query). Resamples are drawn in
    batches of about 2^21 indices, so 10,000 resamples of 20,000 queries never hold more
    than 16 MB of them at once (the batches draw the same indices as one call would).
    """
    d = np.asarray(deltas, dtype=np.float64)
    n = len(d)
    if n == 0:
        return float("nan"), float("nan")
    _check_count(resamples, "bootstrap resamples")
    if n == 1:  # scipy wants two observations; one query's resamples are all that query
        return float(d[0]), float(d[0])
    from scipy import stats  # imported on first use: the window opens without it

    result = stats.bootstrap((d,), np.mean, n_resamples=resamples, batch=_batch(1 << 21, n),
                             vectorized=True, confidence_level=level, method="percentile",
                             rng=np.random.default_rng(seed))
    interval = result.confidence_interval
    return float(interval.low), float(interval.high)


def paired_t_test(deltas: np.ndarray) -> TTest:
    """Return the two-sided paired t-test of ``deltas`` (Student): ``scipy.stats.ttest_1samp``
    of the deltas against 0 (what ``scipy.stats.ttest_rel`` of method and baseline computes),
    t = mean / (s / sqrt(n)) with the n - 1 standard deviation s, p = 2 P(T_{n-1} >= |t|).

    Fewer than two queries, or all deltas 0: t and p are nan. All deltas the same and
    non-zero (:func:`constant_deltas`: equal, or within float rounding of their mean, where
    the variance scipy would divide by is rounding noise and it warns of precision loss):
    t = +-inf and p = 0, as scipy gives for exactly equal deltas. Each of these cases says
    so in the test's ``note``.
    """
    d = np.asarray(deltas, dtype=np.float64)
    n = len(d)
    if n < 2:
        return TTest(float("nan"), max(n - 1, 0), float("nan"),
                     "the paired t-test needs at least two paired queries")
    if np.all(d == 0):
        return TTest(float("nan"), n - 1, float("nan"),
                     "every paired query has the same value under both methods: the paired "
                     "t-test is undefined")
    if constant_deltas(d):
        exact = "" if np.all(d == d[0]) else " (to within float rounding)"
        sign = "+" if d[0] > 0 else "-"
        return TTest(math.copysign(math.inf, d[0]), n - 1, 0.0,
                     f"every paired query changes by the same delta{exact}: the deltas have "
                     f"no variance, so the paired t-test gives t = {sign}inf and p = 0 "
                     "whatever the number of queries; read the randomization test's p")
    from scipy import stats  # imported on first use: the window opens without it

    with np.errstate(all="ignore"):  # a variance that underflows gives scipy's nan or inf
        result = stats.ttest_1samp(d, 0.0)
    return TTest(float(result.statistic), n - 1, float(result.pvalue))


def constant_deltas(deltas: np.ndarray) -> bool:
    """Return whether at least two ``deltas``, not all 0, are all the same: equal, or every
    one within :data:`CONSTANT_EPSILONS` float64 epsilons (relative to their mean) of their
    mean, which is the bound under which ``scipy.stats`` warns that the variance is lost to
    catastrophic cancellation (``_demean``)."""
    d = np.asarray(deltas, dtype=np.float64)
    if len(d) < 2 or np.all(d == 0):
        return False
    if np.all(d == d[0]):
        return True
    mean = np.mean(d)
    with np.errstate(divide="ignore"):  # a mean of 0 with deltas that differ: not constant
        relative = np.max(np.abs(d - mean)) / abs(mean)
    return bool(relative < np.finfo(np.float64).eps * CONSTANT_EPSILONS)


def randomization_test(deltas: np.ndarray, permutations: int = PERMUTATIONS,
                       seed: int = 0) -> RandomizationTest:
    """Return the two-sided paired randomization test of ``deltas`` (Smucker, Allan &
    Carterette, CIKM 2007; Fisher's sign-flip test).

    Under the null hypothesis each query's delta is as likely to have either sign. Up to
    :data:`EXACT_MAX_QUERIES` queries, p is the share of all 2^n sign assignments whose
    |mean| is at least the observed |mean delta| (exact:
    ``scipy.stats.permutation_test(..., permutation_type="samples")`` enumerates them).
    Beyond, ``scipy.stats.monte_carlo_test`` draws ``permutations`` random assignments
    (``default_rng(seed)``) and gives p = (b + 1) / (N + 1), b counting those at least as
    extreme (never 0). Sums within ``TIE_TOLERANCE * sum |delta|`` of the observed one count
    as equal, so float rounding of equal sums never decides.
    """
    d = np.asarray(deltas, dtype=np.float64)
    n = len(d)
    if n == 0:
        return RandomizationTest(float("nan"), "exact", None)
    observed = abs(float(d.sum()))
    threshold = observed - TIE_TOLERANCE * float(np.abs(d).sum())
    if n <= EXACT_MAX_QUERIES:
        return RandomizationTest(_exact_p(d, threshold), "exact", None)
    _check_count(permutations, "permutations")
    return RandomizationTest(_monte_carlo_p(d, threshold, permutations, seed),
                             permutations, seed)


def _exact_p(d: np.ndarray, threshold: float) -> float:
    """Return the exact p of the sign-flip test: ``scipy.stats.permutation_test`` with
    ``permutation_type="samples"`` (one sample: every one of the 2^n sign assignments of the
    deltas), the statistic |sum| capped at ``threshold`` so that sums within the tie
    tolerance of the observed one count as equal to it. One delta's two assignments have the
    same |sum|, so its p is 1 (scipy wants two observations)."""
    if len(d) == 1:
        return 1.0
    from scipy import stats  # imported on first use: the window opens without it

    def capped_abs_sum(x: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.minimum(np.abs(x.sum(axis=axis)), threshold)

    result = stats.permutation_test((d,), capped_abs_sum, permutation_type="samples",
                                    vectorized=True, n_resamples=np.inf,
                                    alternative="greater")
    return float(result.pvalue)


def _monte_carlo_p(d: np.ndarray, threshold: float, permutations: int, seed: int) -> float:
    """Return the Monte Carlo p of the sign-flip test: ``scipy.stats.monte_carlo_test`` of
    the sign assignment, whose observed value flips nothing and which under the null
    hypothesis is one fair random bit per query (a set bit flips that query's delta).

    The bits are drawn a byte per 8 queries (``rng.integers(0, 256, dtype=uint8)``), and the
    flipped part of a sum is looked up per byte in a table of the 256 partial sums of each
    group of 8 deltas: 1/8 of the additions and memory of a +-1 matrix product, and 10 to
    40 times faster than ``scipy.stats.permutation_test`` flipping the deltas themselves
    (``tests/benchmarks/bench_paired.py``). An assignment's statistic is its |sum| capped at
    ``threshold``, so those within the tie tolerance of the observed |sum| equal it. The
    batches of draws depend only on the number of queries, so a seed gives the same p on
    every machine.
    """
    from scipy import stats  # imported on first use: the window opens without it

    n = len(d)
    groups = (n + 7) // 8
    padded = np.zeros(groups * 8)
    padded[:n] = d
    bit_of = (np.arange(256)[:, None] >> (7 - np.arange(8))) & 1  # first query = high bit
    table = (padded.reshape(groups, 8) @ bit_of.T.astype(np.float64)).ravel()
    offsets = np.arange(groups, dtype=np.intp) * 256
    total = float(d.sum())

    def capped_abs_sum(flips: np.ndarray, axis: int = -1) -> np.ndarray:
        flipped = table[offsets + flips].sum(axis=axis)
        return np.minimum(np.abs(total - 2.0 * flipped), threshold)

    rng = np.random.default_rng(seed)

    def fair_bytes(size: tuple[int, ...]) -> np.ndarray:
        return rng.integers(0, 256, size=size, dtype=np.uint8)

    result = stats.monte_carlo_test(np.zeros(groups, dtype=np.uint8), fair_bytes,
                                    capped_abs_sum, vectorized=True, axis=-1,
                                    n_resamples=permutations, batch=_batch(1 << 22, groups),
                                    alternative="greater")
    return float(result.pvalue)


def holm_adjust(p_values: list[float] | np.ndarray) -> np.ndarray:
    """Return Holm's (1979) step-down adjusted p-values, in the input order: sorted
    ascending, the i-th (from 0) becomes max over j <= i of min(1, (m - j) p_(j)). A nan
    p-value stays nan and does not count in m."""
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(len(p), np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    order = ok[np.argsort(p[ok], kind="stable")]
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(scaled) if m else scaled
    return out


# -- internals -----------------------------------------------------------------------------

def _batch(elements: int, row: int) -> int:
    """Return how many rows of ``row`` values make about ``elements`` values (at least 1)."""
    return max(1, elements // row)


def _check_count(n: int, what: str) -> None:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise InputError(f"the number of {what} must be a whole number of at least 1, "
                         f"not {n!r}")
