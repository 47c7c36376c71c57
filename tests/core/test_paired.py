"""Paired comparison statistics: hand-computed cases, today's numbers pinned on seeded inputs,
scipy.stats.ttest_rel and scipy.stats.permutation_test as the references, brute-force
enumeration for the randomization test, and invariants (swapping the methods negates the
delta and keeps every p-value)."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from irviewer.core.errors import InputError
from irviewer.core.paired import (
    PairedComparison,
    bootstrap_interval,
    constant_deltas,
    holm_adjust,
    pair_by_name,
    paired_t_test,
    randomization_test,
)

values = st.floats(0.0, 1.0, allow_nan=False, width=64)


def comparison(base, method, **options) -> PairedComparison:
    names = tuple(f"q{i}" for i in range(len(base)))
    return PairedComparison("base", "new", "AP", names, np.array(base, float),
                            np.array(method, float), **options)


# -- hand-computed ---------------------------------------------------------------------------

def test_means_wins_losses_ties_by_hand():
    c = comparison([0.5, 0.5, 0.2, 1.0], [0.75, 0.25, 0.2, 1.0])
    assert c.mean_baseline == pytest.approx(0.55)
    assert c.mean_method == pytest.approx(0.55)
    assert c.deltas.tolist() == [0.25, -0.25, 0.0, 0.0]
    assert c.mean_delta == 0.0
    assert (c.wins, c.losses, c.ties) == (1, 1, 2)
    assert c.largest_changes(5) == ([0], [1])


def test_largest_changes_orders_by_size_and_stops_at_n():
    c = comparison([0, 0, 0, 0, 0.5], [0.1, 0.4, 0.2, 0, 0.1])
    assert c.largest_changes(2) == ([1, 2], [4])


def test_paired_t_by_hand_df2_and_df1():
    # d = 1, 2, 3: mean 2, s = 1, t = 2 sqrt(3); Student's t with 2 df has
    # P(|T| >= t) = 1 - t / sqrt(t^2 + 2) = 1 - sqrt(6/7).
    r = paired_t_test(np.array([1.0, 2.0, 3.0]))
    assert r.statistic == pytest.approx(2 * math.sqrt(3), rel=1e-14)
    assert r.df == 2
    assert r.p_value == pytest.approx(1 - math.sqrt(6 / 7), rel=1e-13)
    # d = 1, 3: mean 2, s = sqrt 2, t = 2; with 1 df (Cauchy) p = 1 - (2 / pi) atan 2.
    r = paired_t_test(np.array([1.0, 3.0]))
    assert r.statistic == pytest.approx(2.0, rel=1e-14)
    assert r.p_value == pytest.approx(1 - 2 / math.pi * math.atan(2.0), rel=1e-13)


def test_deltas_the_same_to_within_float_rounding_are_constant_and_said_so():
    """The draw that made scipy warn of precision loss: deltas 1 and 1 - 2.22e-16."""
    from scipy import stats
    base, method = np.array([(0.0, 1.0), (2.22e-16, 1.0)]).T
    d = method - base
    assert d[0] != d[1] and constant_deltas(d)
    with pytest.warns(RuntimeWarning, match="Precision loss occurred"):
        stats.ttest_rel(method, base)  # scipy: a t of rounding noise, and a warning
    r = paired_t_test(d)  # no warning (an error under this suite's filterwarnings)
    assert (r.statistic, r.df, r.p_value) == (math.inf, 1, 0.0)
    assert r.note == ("every paired query changes by the same delta (to within float "
                      "rounding): the deltas have no variance, so the paired t-test gives "
                      "t = +inf and p = 0 whatever the number of queries; read the "
                      "randomization test's p")
    assert comparison(base, method).paired_t.note == r.note


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(values, values), min_size=2, max_size=12),
       st.floats(-1.0, 1.0, allow_nan=False), st.integers(0, 3))
def test_constant_deltas_are_where_scipy_loses_the_variance(pairs, shift, ulps):
    """constant_deltas is scipy's own precision-loss bound: scipy warns exactly where the
    deltas count as constant (drawn free, or all one value nudged by a few float steps)."""
    from scipy import stats
    base, method = np.array(pairs).T
    free = method - base
    nudged = np.array([shift] * len(pairs))
    for i in range(min(ulps, len(nudged))):
        nudged[i] = np.nextafter(nudged[i], 2.0)
    for d in (free, nudged):
        with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
            warnings.simplefilter("always")
            stats.ttest_1samp(d, 0.0)
        warned = any("Precision loss" in str(w.message) for w in caught)
        assert warned == constant_deltas(d)


def test_too_few_or_unchanged_queries_are_said_so():
    assert paired_t_test(np.array([0.3])).note == ("the paired t-test needs at least two "
                                                   "paired queries")
    assert paired_t_test(np.zeros(3)).note == ("every paired query has the same value under "
                                               "both methods: the paired t-test is undefined")
    assert paired_t_test(np.array([0.1, 0.3])).note == ""


def test_zero_variance_gives_inf_or_nan():
    up = paired_t_test(np.array([0.25, 0.25, 0.25]))
    assert (up.statistic, up.p_value) == (math.inf, 0.0)
    down = paired_t_test(np.full(7, -0.1))  # a mean of 7 x 0.1 is not exactly 0.1
    assert (down.statistic, down.p_value) == (-math.inf, 0.0)
    same = paired_t_test(np.zeros(4))
    assert math.isnan(same.statistic) and math.isnan(same.p_value)
    one = paired_t_test(np.array([0.3]))
    assert math.isnan(one.statistic) and math.isnan(one.p_value) and one.df == 0


def test_randomization_exact_by_hand():
    # +-1 +-2 +-3: sums 6, 4, 2, 0, 0, -2, -4, -6; |sum| >= 6 for 2 of 8
    r = randomization_test(np.array([1.0, 2.0, 3.0]))
    assert (r.p_value, r.permutations, r.seed) == (0.25, "exact", None)
    assert randomization_test(np.array([1.0, 1.0])).p_value == 0.5
    assert randomization_test(np.array([0.0, 0.0, 0.0])).p_value == 1.0


def test_randomization_float_ties_count_as_equal():
    # The deltas sum to 0 exactly in arithmetic but to 1.1e-16 in floats; every sign
    # assignment is at least as extreme, so p is 1 (0.875 if rounding decided).
    assert randomization_test(np.array([0.1, 0.2, 0.3, -0.6])).p_value == 1.0


def test_randomization_exact_up_to_16_then_monte_carlo():
    d = np.linspace(-0.2, 0.5, 16)
    assert randomization_test(d).permutations == "exact"
    r = randomization_test(np.linspace(-0.2, 0.5, 17), permutations=500, seed=3)
    assert (r.permutations, r.seed) == (500, 3)
    assert r.p_value * 501 == pytest.approx(round(r.p_value * 501))


def test_monte_carlo_p_is_b_plus_one_over_n_plus_one():
    # 20 equal positive deltas: only the two all-equal assignments (2 in 2^20) reach the
    # observed sum, so b = 0 in 999 draws and p = 1 / 1000, never 0.
    assert randomization_test(np.ones(20), permutations=999).p_value == 1 / 1000
    assert randomization_test(np.zeros(20), permutations=999).p_value == 1.0


def test_monte_carlo_estimates_the_exact_p():
    rng = np.random.default_rng(7)
    d = rng.normal(0.05, 0.2, 18)
    codes = np.arange(1 << 18)
    signs = 1.0 - 2.0 * ((codes[:, None] >> np.arange(18)) & 1)
    exact = np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-12)
    r = randomization_test(d, permutations=100_000, seed=0)
    assert abs(r.p_value - exact) < 4 * math.sqrt(exact * (1 - exact) / 100_000)
    assert r.p_value == randomization_test(d, permutations=100_000, seed=0).p_value
    assert r.p_value != randomization_test(d, permutations=100_000, seed=1).p_value


def test_bootstrap_by_hand():
    # d = 0, 1: a resample's mean is 0, 1/2 or 1 with chances 1/4, 1/2, 1/4, so the 2.5 %
    # and 97.5 % quantiles of 10,000 of them are 0 and 1.
    assert bootstrap_interval(np.array([0.0, 1.0])) == (0.0, 1.0)
    assert bootstrap_interval(np.full(5, 0.25)) == (0.25, 0.25)
    d = np.random.default_rng(1).normal(0.1, 0.3, 200)
    lo, hi = bootstrap_interval(d, seed=4)
    se = d.std(ddof=1) / math.sqrt(200)  # the normal interval, as a sanity band
    assert lo == pytest.approx(d.mean() - 1.96 * se, abs=0.2 * se)
    assert hi == pytest.approx(d.mean() + 1.96 * se, abs=0.2 * se)
    assert bootstrap_interval(d, seed=4) == (lo, hi)
    assert bootstrap_interval(d, seed=5) != (lo, hi)


def test_holm_by_hand():
    # sorted 0.005, 0.01, 0.03, 0.04 (m = 4): 0.02, 0.03, 0.06, 0.04 -> running max
    adjusted = holm_adjust([0.01, 0.04, 0.03, math.nan, 0.005])
    assert adjusted[[0, 1, 2, 4]].tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert math.isnan(adjusted[3])
    assert holm_adjust([0.6, 0.7]).tolist() == [1.0, 1.0]
    assert holm_adjust([]).tolist() == []


def test_pairing_by_name_keeps_queries_both_evaluated():
    c = pair_by_name("a", "b", "AP", ["q1", "q2", "q3", "q4"], [0.1, np.nan, 0.3, 0.4],
                     ["q4", "q3", "q2", "q9"], [0.5, 0.2, 0.9, 0.0])
    assert c.queries == ("q3", "q4")
    assert c.baseline_values.tolist() == [0.3, 0.4]
    assert c.method_values.tolist() == [0.2, 0.5]


@pytest.mark.parametrize(("base", "method", "message"), [
    (["q1"], ["q2"], "a and b have no evaluated query in common (AP): nothing to compare"),
    (["q1", "q1"], ["q1"], "a: query names must be unique to pair queries, but q1 appear"),
])
def test_pairing_bad_input(base, method, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        pair_by_name("a", "b", "AP", base, np.ones(len(base)), method, np.ones(len(method)))


def test_bad_counts():
    with pytest.raises(InputError, match="permutations must be a whole number of at least 1"):
        randomization_test(np.ones(20), permutations=0)
    with pytest.raises(InputError, match="bootstrap resamples must be"):
        bootstrap_interval(np.ones(3), resamples=-5)


# -- today's numbers, pinned (the statistics moved to scipy.stats without changing them) -----

def seeded_deltas(n: int) -> np.ndarray:
    return np.random.default_rng(n).normal(0.01, 0.2, n)


@pytest.mark.parametrize(("n", "seed", "interval"), [
    (70, 0, (-0.023179568371010012, 0.062220523965868586)),
    (70, 4, (-0.0223107433359286, 0.0620171661707786)),
    (300, 2, (-0.01029429990189867, 0.030477350086733763)),
    (3368, 0, (-0.0032503554481213117, 0.01065740492265705)),
])
def test_bootstrap_interval_pinned(n, seed, interval):
    # the same resampled queries as before (numpy default_rng(seed), one row of n indices
    # per resample); the quantile may differ in the last bit
    assert bootstrap_interval(seeded_deltas(n), seed=seed) == pytest.approx(interval,
                                                                           rel=1e-14)


@pytest.mark.parametrize(("n", "permutations", "seed", "p"), [
    (16, 1, 0, 0.3087158203125),  # exact: 20,232 of the 2^16 assignments
    (70, 100_000, 0, 0.3739062609373906),
    (70, 100_000, 4, 0.37733622663773364),
    (300, 20_000, 2, 0.3566821658917054),
    (3368, 20_000, 0, 0.2964851757412129),
])
def test_randomization_p_pinned(n, permutations, seed, p):
    # Monte Carlo: the same sign assignments as before for a seed, so the same p exactly
    assert randomization_test(seeded_deltas(n), permutations, seed).p_value == p


@pytest.mark.parametrize(("n", "t", "p"), [
    (70, 0.8879894714337018, 0.3776314432056398),
    (300, 0.9313863834242015, 0.35240514437529347),
    (3368, 1.0469308680370775, 0.29520661216697297),
])
def test_paired_t_pinned(n, t, p):
    r = paired_t_test(seeded_deltas(n))
    assert (r.statistic, r.df) == (pytest.approx(t, rel=1e-14), n - 1)
    assert r.p_value == pytest.approx(p, rel=1e-13)


# -- the reference: scipy --------------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 3, 5, 16, 55, 70, 500, 3368, 20000])
def test_t_test_matches_scipy(n):
    from scipy import stats
    rng = np.random.default_rng(n)
    for _ in range(20):
        base = rng.random(n)
        method = np.clip(base + rng.normal(rng.normal(0, 0.05), 0.2, n), 0, 1)
        ours = paired_t_test(method - base)
        ref = stats.ttest_rel(method, base)
        assert ours.statistic == pytest.approx(float(ref.statistic), rel=1e-12)
        assert abs(ours.p_value - float(ref.pvalue)) <= 1e-12
        assert ours.df == int(ref.df)


@pytest.mark.parametrize("deltas", [[0.25] * 3, [-0.5] * 6, [0.0] * 4, [0.3],
                                    [0.0, 2.2532008785218168e-261]])  # variance underflows
def test_zero_variance_as_scipy(deltas):
    from scipy import stats
    d = np.array(deltas)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        ref = stats.ttest_rel(d, np.zeros(len(d)))
    ours = paired_t_test(d)
    np.testing.assert_equal([ours.statistic, ours.p_value], [ref.statistic, ref.pvalue])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(values, values), min_size=2, max_size=40))
@example([(0.0, 0.0), (0.0, 5e-324)])
@example([(0.0, 1.0), (2.22e-16, 1.0)])  # deltas 1 and 1 - 2.22e-16
def test_t_test_matches_scipy_on_any_pairs(pairs):
    """Where the deltas vary, t and p are scipy's (and scipy has nothing to warn of: a
    warning is an error here); where they are the same to within float rounding, the test
    says so instead of passing on scipy's value of the rounding."""
    from scipy import stats
    base, method = np.array(pairs).T
    d = method - base
    ours = paired_t_test(d)
    if constant_deltas(d):
        assert (abs(ours.statistic), ours.p_value) == (math.inf, 0.0)
        assert "every paired query changes by the same delta" in ours.note
        return
    with np.errstate(all="ignore"):
        ref = stats.ttest_rel(method, base)
    # nan equals nan here: deltas of 5e-324 have a mean of 0 and no variance in floats
    np.testing.assert_allclose(ours.statistic, float(ref.statistic), rtol=1e-9)
    np.testing.assert_allclose(ours.p_value, float(ref.pvalue), rtol=0, atol=1e-12)


@pytest.mark.parametrize("n", [17, 70, 400])
def test_monte_carlo_agrees_with_scipy_permutation_test(n):
    # scipy flips the deltas' signs itself (other random draws): the two estimates of one p
    # differ by Monte Carlo noise only
    from scipy import stats
    d = np.random.default_rng(n).normal(0.02, 0.2, n)
    ref = stats.permutation_test((d,), lambda x, axis=-1: np.abs(x.sum(axis=axis)),
                                 permutation_type="samples", vectorized=True,
                                 n_resamples=20_000, alternative="greater", batch=500,
                                 rng=np.random.default_rng(1)).pvalue
    ours = randomization_test(d, permutations=20_000, seed=0).p_value
    assert abs(ours - ref) < 5 * math.sqrt(2 * ref * (1 - ref) / 20_000)


def test_bootstrap_is_scipy_percentile_interval():
    from scipy import stats
    d = seeded_deltas(90)
    ref = stats.bootstrap((d,), np.mean, n_resamples=2000, method="percentile",
                          rng=np.random.default_rng(3)).confidence_interval
    assert bootstrap_interval(d, 2000, 3) == pytest.approx((ref.low, ref.high), rel=1e-14)
    assert bootstrap_interval(np.array([0.4]), 50) == (0.4, 0.4)


def test_the_window_opens_without_scipy():
    # scipy.stats takes 0.3 s (3 s from a cold disk) to import: the statistics import it
    # when first computed, not when the comparison module is imported
    code = ("import sys, numpy, irviewer.core.paired as p, irviewer.view.compare_view; "
            "assert 'scipy' not in sys.modules, 'scipy imported'; "
            "assert not p.statistics_loaded(); p.paired_t_test(numpy.array([1.0, 2.0, 4.0])); "
            "assert p.statistics_loaded()")
    subprocess.run([sys.executable, "-c", code], check=True)


# -- invariants --------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(values, values), min_size=1, max_size=24))
def test_swapping_the_methods_negates_the_delta_and_keeps_p(pairs):
    base, method = (list(v) for v in zip(*pairs, strict=True))
    ab = comparison(base, method, permutations=300, resamples=300)
    ba = comparison(method, base, permutations=300, resamples=300)
    assert ba.mean_delta == pytest.approx(-ab.mean_delta, abs=1e-15)
    assert (ba.wins, ba.losses, ba.ties) == (ab.losses, ab.wins, ab.ties)
    assert ba.randomization.p_value == ab.randomization.p_value
    np.testing.assert_equal(ba.paired_t.p_value, ab.paired_t.p_value)
    np.testing.assert_allclose(ba.paired_t.statistic, -ab.paired_t.statistic, rtol=1e-12)
    lo, hi = ab.ci95
    assert ba.ci95 == pytest.approx((-hi, -lo), abs=1e-12)
    assert ba.largest_changes(3) == tuple(reversed(ab.largest_changes(3)))


@settings(max_examples=40, deadline=None)
@given(st.lists(values, min_size=1, max_size=30))
def test_identical_methods_have_delta_zero_and_p_one(v):
    c = comparison(v, v, permutations=200, resamples=200)
    assert c.mean_delta == 0.0 and c.ties == len(v) and c.wins == c.losses == 0
    assert c.randomization.p_value == 1.0
    assert c.ci95 == (0.0, 0.0)
    assert math.isnan(c.paired_t.p_value)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=9))
def test_exact_randomization_equals_brute_force(d):
    d = np.array(d)
    sums = [abs(sum(s * x for s, x in zip(signs, d, strict=True)))
            for signs in itertools.product((1, -1), repeat=len(d))]
    tol = 1e-9 * np.abs(d).sum()
    expected = sum(s >= abs(d.sum()) - tol for s in sums) / len(sums)
    assert randomization_test(d).p_value == expected


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=8).map(np.array),
       st.integers(0, 7))
def test_holm_adjusted_is_at_least_raw_and_monotone(p, _):
    adjusted = holm_adjust(p)
    assert np.all(adjusted >= p - 1e-15) and np.all(adjusted <= 1.0)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adjusted[order]) >= 0)
