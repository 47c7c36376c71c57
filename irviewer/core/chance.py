"""Chance level: what a random ranking would score, and whether a result is clearly above it.

Used to warn when descriptor rows were matched to a dataset by position and the numbers
look like those of a random order (the rows are then probably in another order).

The expected finite-sum AP of a uniformly random order of ``N`` items of which ``n`` are
positive is exact (Bestgen, "Exact expected average precision of the random baseline for
system evaluation", The Prague Bulletin of Mathematical Linguistics 103, 2015)::

    E[AP] = (n - 1)/(N - 1) + (H_N / N) * (N - n)/(N - 1),    H_N = 1 + 1/2 + ... + 1/N

(a positive at rank r has, on average, 1 + (r - 1)(n - 1)/(N - 1) positives at or above
it; averaging that precision over r uniform in 1..N gives the formula). The spread of one
query's random AP is estimated by seeded simulation, so the check is reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from irviewer.core import metrics
from irviewer.core.ap_rules import average_precision
from irviewer.core.convention_names import FINITE
from irviewer.core.errors import InputError

if TYPE_CHECKING:
    from irviewer.core.evaluation import Evaluation

#: Random orders drawn in all, shared among the distinct (n, N) pairs of a dataset.
SIMULATIONS = 4_000
#: A result is clearly above chance when it exceeds the chance mAP by this many standard
#: errors of the random mAP.
Z_ABOVE_CHANCE = 3.0


def expected_random_ap(n_positives: int, n_ranked: int) -> float:
    """Return the expected finite-sum AP of a uniformly random order of ``n_ranked`` items
    with ``n_positives`` positives (Bestgen 2015; formula in the module docstring).

    1.0 when every item is positive; InputError unless 1 <= n_positives <= n_ranked.
    """
    n, big_n = int(n_positives), int(n_ranked)
    if not 1 <= n <= big_n:
        raise InputError(f"a random order needs 1 <= positives <= items, got {n} positives "
                         f"among {big_n} items")
    if big_n == 1:
        return 1.0
    harmonic = float(np.sum(1.0 / np.arange(1, big_n + 1)))
    return (n - 1) / (big_n - 1) + harmonic / big_n * (big_n - n) / (big_n - 1)


def random_ap_variance(n_positives: int, n_ranked: int, draws: int,
                       rng: np.random.Generator) -> float:
    """Return the variance of the finite-sum AP of a random order (``n_positives`` among
    ``n_ranked``), estimated from ``draws`` seeded random orders (0.0 when n = N)."""
    n, big_n = int(n_positives), int(n_ranked)
    if n >= big_n:
        return 0.0
    i = np.arange(1, n + 1)
    values = np.empty(draws)
    for d in range(draws):
        ranks = np.sort(rng.choice(big_n, size=n, replace=False)) + 1
        values[d] = np.mean(i / ranks)
    return float(values.var(ddof=1)) if draws > 1 else 0.0


@dataclass(frozen=True)
class ChanceLevel:
    """A result against a random ranking of the same queries.

    ``observed``: the mean finite-sum AP over the evaluated queries; ``chance``: the mean
    expected AP of a random order; ``standard_error``: the standard error of a random
    order's mean AP; ``decidable``: whether a result can be clearly above chance at all
    (``chance`` plus :data:`Z_ABOVE_CHANCE` standard errors is below 1: not so for a
    handful of queries in a tiny gallery); ``at_chance``: decidable, and ``observed`` is not
    above ``chance`` by :data:`Z_ABOVE_CHANCE` standard errors.
    """

    observed: float
    chance: float
    standard_error: float
    decidable: bool
    at_chance: bool


def chance_level(evaluation: Evaluation, seed: int = 0) -> ChanceLevel:
    """Return how ``evaluation``'s finite-sum mAP compares with a random ranking.

    Each evaluated query is ranked among N = the items its ranking orders minus the items
    its protocol removes, with n = its positives; the random baseline is
    :func:`expected_random_ap` per query, its spread :func:`random_ap_variance` per distinct
    n at the median N of those queries (seeded by ``seed``; :data:`SIMULATIONS` random
    orders shared among them, at least 20 each).
    The finite-sum AP is used whatever the protocol's AP rule (the trapezoid AP is never
    above it, so a trapezoid result at chance is at chance here too).
    """
    from irviewer.core.evaluation import query_roles

    ev = evaluation
    p = ev.positives
    queries = np.flatnonzero(ev.evaluated)
    if not len(queries):
        return ChanceLevel(float("nan"), float("nan"), float("nan"), False, False)
    observed = average_precision(metrics.ragged(p.ranks, p.offsets, p.n_positives), FINITE)
    mask = ev.dataset.ignored_mask
    pairs = []
    for q in queries.tolist():
        _, ignored = query_roles(ev.dataset.queries[q], ev.protocol, mask)
        n = int(p.n_positives[q])
        pairs.append((n, max(n, int(ev.ranking.n_ranked) - len(ignored))))
    expected = {pair: expected_random_ap(*pair) for pair in set(pairs)}
    # The spread depends on n far more than on N: simulate once per n, at its median N.
    by_n: dict[int, list[int]] = {}
    for n, big_n in pairs:
        by_n.setdefault(n, []).append(big_n)
    draws = max(20, SIMULATIONS // len(by_n))
    rng = np.random.default_rng(seed)
    variance = {n: random_ap_variance(n, int(np.median(sizes)), draws, rng)
                for n, sizes in sorted(by_n.items())}
    n_q = len(queries)
    chance = float(np.mean([expected[pair] for pair in pairs]))
    se = float(np.sqrt(np.sum([variance[n] for n, _ in pairs])) / n_q)
    mean_ap = float(np.mean(observed[queries]))
    threshold = chance + Z_ABOVE_CHANCE * se
    decidable = threshold < 1.0
    return ChanceLevel(mean_ap, chance, se, decidable, decidable and mean_ap < threshold)
