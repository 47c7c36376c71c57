"""Tied scores: the best and worst orders of a query's ties, and AP's expected value over
all of them.

Where scores are equal, AP depends on an order nobody chose. irviewer ranks equal scores in
gallery order (stable); this module says how far that choice moves each number.

What is tied
------------
Two scores are tied when they differ by less than :data:`TIE_TOLERANCE` (float32 cosines
that are equal can differ in their last bits; the order inside a tie is
:mod:`irviewer.core.ranking.settle`'s); a ranking file's scores are tied when they are
equal as written (tolerance 0). A query's tie *groups* are built
around its positives: each positive's window holds every ranked gallery item whose score is
tied with it, and windows that share an item merge, so the groups are disjoint blocks of
consecutive ranks.
Within a group every order is possible; outside, the order is fixed. When scores take a
few distinct values (binary or quantised descriptors, rounded scores in a ranking file) a
group is exactly the items of one score; only when tied scores chain (0.0 ~ 0.7e-6 ~ 1.4e-6)
is a group wider than one window.

What is computed
----------------
- the *best* order puts the query's positives first within each group, the *worst* order
  last; both are whole orders of the ranking, so every metric that a positive can only lose
  by moving down (AP under every rule, P@k, CMC, INP) is computed on them unchanged and
  bounds the reported value;
- the expected finite-sum and trapezoid AP over all orders of the groups, uniformly, in
  closed form: McSherry & Najork, "Computing Information Retrieval Performance Measures
  Efficiently in the Presence of Tied Scores", ECIR 2008, section 3 (their AP is the
  finite-sum one; the trapezoid term follows from the same linearity of expectation).

Input: for every ranked item of interest that the protocol marks (positive or removed),
its query, its 0-based rank in the raw ranking (before removals), whether it is positive,
and its window in raw ranks: ``above`` the number of ranked items whose score lies above
the window, ``through`` the number whose score lies above the window's lower edge (so the
window is raw ranks ``above .. through - 1``, the item's own rank among them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irviewer.core.convention_names import SUM_AP_RULES, TRAPEZOID

#: Scores closer than this are tied (cosine rankings); a ranking file's ties are exact.
TIE_TOLERANCE = 1e-6

#: What each tie-bound summary key's suffix means, for the sentence naming its convention.
TIE_ORDERS = {
    "best": f"tied scores ordered positives first (scores within {TIE_TOLERANCE:g} tie; a "
            "ranking file's when equal as written)",
    "worst": f"tied scores ordered positives last (scores within {TIE_TOLERANCE:g} tie; a "
             "ranking file's when equal as written)",
    "expected": "mean over every order of tied scores (McSherry & Najork, ECIR 2008)",
}


def tie_conventions(keys: list[str]) -> dict[str, str]:
    """Return the sentence naming the convention of each tie-bound summary key (``mAP_best``
    -> "tied scores ordered positives first ..."), the metric's own convention aside."""
    return {k: TIE_ORDERS[k.rsplit("_", 1)[1]] for k in keys
            if "_" in k and k.rsplit("_", 1)[1] in TIE_ORDERS}


_EULER = 0.57721566490153286061
#: Harmonic numbers below this are summed exactly (a table); above, the asymptotic series.
_TABLE = 1024
_HARMONIC = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, _TABLE, dtype=np.float64))])


@dataclass(frozen=True)
class TieGroups:
    """A batch of queries' tie groups that hold a positive, in query then rank order.

    Per group: ``query``; ``start`` the number of items ranked before it after the
    protocol's removals (0-based rank of its first place); ``size`` its number of items
    after removals; ``positives`` the positives in it; ``before`` the query's positives
    ranked before it. ``group_of`` gives, for every retrieved positive in the order of the
    evaluation's positive ranks (query, then rank), its group.
    """

    query: np.ndarray
    start: np.ndarray
    size: np.ndarray
    positives: np.ndarray
    before: np.ndarray
    group_of: np.ndarray

    def order_ranks(self, which: str) -> np.ndarray:
        """Return every retrieved positive's rank after removals in the ``best`` order
        (positives first within each group) or the ``worst`` (positives last), aligned with
        the evaluation's positive ranks and, like them, ascending within each query."""
        g = self.group_of
        first = np.searchsorted(g, g)  # each positive's group starts at its first positive
        within = np.arange(len(g), dtype=np.int64) - first
        if which == "best":
            return self.start[g] + within
        return self.start[g] + self.size[g] - self.positives[g] + within

    def tied(self) -> np.ndarray:
        """Return, per group, whether its order matters: it holds a positive and a
        non-positive."""
        return self.size > self.positives


def tie_groups(query: np.ndarray, raw: np.ndarray, positive: np.ndarray, above: np.ndarray,
               through: np.ndarray) -> TieGroups:
    """Return the :class:`TieGroups` of the ranked marked items given (see the module).

    ``query``, ``raw``, ``positive``, ``above``, ``through`` are per item, any order; items
    not ranked (raw -1) must be left out by the caller. A removed item takes no place.
    """
    query = np.asarray(query, dtype=np.int64)
    raw = np.asarray(raw, dtype=np.int64)
    positive = np.asarray(positive, dtype=bool)
    order = np.lexsort((raw, query))
    q, r, pos = query[order], raw[order], positive[order]
    lo = np.minimum(np.asarray(above, dtype=np.int64)[order], r)
    hi = np.maximum(np.asarray(through, dtype=np.int64)[order], r + 1)
    pq, plo, phi = q[pos], lo[pos], hi[pos]
    if not len(pq):
        empty = np.zeros(0, dtype=np.int64)
        return TieGroups(empty, empty, empty, empty, empty, empty)
    # Merge a positive into the group before it when its window starts before the group's
    # windows end (a running maximum of ``hi`` within the query, exact in int64).
    span = int(max(hi.max(), r.max(), 1)) + 1  # above every rank: keys never collide
    run_hi = np.maximum.accumulate(phi + pq * span) - pq * span
    new = np.ones(len(pq), dtype=bool)
    new[1:] = (pq[1:] != pq[:-1]) | (plo[1:] >= run_hi[:-1])
    group_of = np.cumsum(new) - 1
    heads = np.flatnonzero(new)
    ends = np.append(heads[1:], len(pq))
    g_query = pq[heads]
    g_lo = np.minimum.reduceat(plo, heads)
    g_hi = np.maximum.reduceat(phi, heads)
    # Removed items of the query ranked before the group's first place and inside it.
    keys = q * (span + 1) + r
    ign_keys = keys[~pos]
    n_before_lo = _count_below(ign_keys, g_query * (span + 1) + g_lo)
    n_before_hi = _count_below(ign_keys, g_query * (span + 1) + g_hi)
    n_query_start = _count_below(ign_keys, g_query * (span + 1))
    removed_lo = n_before_lo - n_query_start
    removed_in = n_before_hi - n_before_lo
    start = g_lo - removed_lo
    size = (g_hi - g_lo) - removed_in
    positives = (ends - heads).astype(np.int64)
    p_first = np.searchsorted(pq, g_query)
    before = heads - p_first
    return TieGroups(g_query, start.astype(np.int64), size.astype(np.int64), positives,
                     before.astype(np.int64), group_of.astype(np.int64))


def _count_below(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    return np.searchsorted(sorted_keys, keys, side="left").astype(np.int64)


def _harmonic(n: np.ndarray) -> np.ndarray:
    """Return the harmonic numbers H(n) = 1 + 1/2 + ... + 1/n (H(0) = 0) of whole numbers
    ``n``, float64: summed below 1024; above, ln n + gamma + 1/2n - 1/12n^2 + 1/120n^4 -
    1/252n^6, whose error is below 1/240n^8 (1e-26). (No scipy: the window imports this
    module and must not wait for scipy.)"""
    m = np.asarray(n, dtype=np.float64)
    small = m < _TABLE
    out = np.empty(m.shape)
    out[small] = _HARMONIC[np.maximum(m[small], 0).astype(np.int64)]
    big = m[~small]
    inv2 = 1.0 / (big * big)
    out[~small] = (np.log(big) + _EULER + 0.5 / big
                   - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 / 252)))
    return out


def expected_ap(groups: TieGroups, denominators: np.ndarray, rule: str,
                depth: int | None = None) -> np.ndarray:
    """Return each query's AP averaged over every order of its tie groups, uniformly.

    McSherry & Najork (ECIR 2008): place i (1-based) of a group that starts after T items,
    holds t items of which r are positive and has R positives before it, holds a positive
    with probability r / t, and then the positives at or before it number, in expectation,
    ``R + 1 + (i - T - 1)(r - 1)/(t - 1)``. The finite-sum AP's term at place i is that over
    i; the trapezoid's (Oxford ``compute_ap``) is the mean of it and the precision just
    before, ``(R + (i - T - 1)(r - 1)/(t - 1)) / (i - 1)`` (1 at the first place), both
    linear in the count, so the expectation is exact; sums of 1/i are harmonic numbers.
    Places beyond ``depth`` (a protocol that scores only the first results) add nothing.

    ``denominators`` per query: its number of positives (0 gives nan). ``rule``:
    ``finite`` or ``trapezoid``.
    """
    den = np.asarray(denominators, dtype=np.float64)
    n_q = len(den)
    skip = groups.start.astype(np.float64)  # T: items before the group
    t = groups.size.astype(np.float64)
    r = groups.positives.astype(np.float64)
    ahead = groups.before.astype(np.float64)  # R: positives before the group
    last = skip + t if depth is None else np.minimum(skip + t, float(depth))
    ok = last > skip
    skip, t, r, ahead, last = skip[ok], t[ok], r[ok], ahead[ok], last[ok]
    c = np.where(t > 1, (r - 1) / np.maximum(t - 1, 1), 0.0)
    places = last - skip
    # Sum over places i = T+1 .. last of (R + 1 + (i - T - 1) c) / i.
    s1 = _harmonic(last) - _harmonic(skip)
    at = (ahead + 1) * s1 + c * (places - (skip + 1) * s1)
    if rule == TRAPEZOID:
        # Sum over u = i - 1 = T .. last - 1 of (R + (u - T) c) / u, the u = 0 term being 1.
        first = skip == 0
        u0 = np.where(first, 1.0, skip)
        s0 = _harmonic(last - 1) - _harmonic(u0 - 1)
        rest = (ahead - skip * c) * s0 + c * (last - u0)
        prior = np.where(first, 1.0 + c * (last - 1) + ahead * s0, rest)
        total = (at + prior) / 2
    else:
        total = at
    contribution = r / t * total
    out = np.bincount(groups.query[ok], weights=contribution, minlength=n_q)
    with np.errstate(invalid="ignore", divide="ignore"):
        ap = out / den
    ap[den == 0] = np.nan
    return ap


#: The per-query metrics whose best and worst tie orders bound them: each can only fall
#: when a positive moves down (revisitop's mP@k can rise, so it is not bounded this way).
BOUNDED = ("AP", "P@", "CMC@", "Recall@")


@dataclass(frozen=True)
class TieBounds:
    """How far tied scores move one evaluation's numbers.

    ``per_query`` maps ``AP_best``, ``AP_worst``, ``AP_expected`` and, where the protocol
    has them, ``P@k_best`` / ``P@k_worst``, ``CMC@k_best`` / ``CMC@k_worst`` (likewise
    ``AP@R`` and ``Recall@k``) to arrays
    over queries (nan for a skipped query; ``AP_expected`` also nan where no closed form
    exists: an interpolated AP rule, or a tie group cut by the protocol's list depth under
    a denominator of listed positives). ``summary`` has their means over the evaluated
    queries (``mAP_best``, ``mAP_worst``, ``mAP_expected``, ``mP@k_best``, ...). ``tied``
    marks the queries whose AP depends on the order of their ties.
    """

    per_query: dict[str, np.ndarray]
    summary: dict[str, float]
    tied: np.ndarray

    @property
    def n_tied(self) -> int:
        """Return the number of queries whose AP depends on the order of their ties."""
        return int(np.count_nonzero(self.tied))

    def moves_map(self) -> bool:
        """Return True when the best and worst tie orders give different mAPs."""
        best, worst = self.summary.get("mAP_best"), self.summary.get("mAP_worst")
        return best is not None and worst is not None and bool(best - worst > AP_EPSILON)


#: AP values closer than this are the same AP (floating-point sums of the same terms).
AP_EPSILON = 1e-12


def bounded_keys(keys: list[str]) -> list[str]:
    """Return the per-query keys among ``keys`` that the tie orders bound (:data:`BOUNDED`,
    without revisitop's variant)."""
    return [k for k in keys if k.startswith(BOUNDED) and not k.endswith("(revisitop)")]


def protocol_expected_ap(groups: TieGroups, n_positives: np.ndarray, listed: np.ndarray,
                         rule: str, denominator: str, depth: int | None) -> np.ndarray:
    """Return AP's expected value over tie orders per query under a protocol's ``rule``,
    AP ``denominator`` (``all`` positives; those ``retrieved`` within the list, of which
    each query has ``listed`` in the reported order; ``depth``: min(positives, depth);
    ``list``: the depth) and list ``depth``; nan where there
    is no closed form: an interpolated rule, or, dividing by the positives listed, a tie
    group cut by the list's end (the count itself then depends on the order)."""
    n = np.asarray(n_positives)
    if rule not in SUM_AP_RULES:
        return np.full(len(n), np.nan)
    if denominator == "all":
        return expected_ap(groups, n, rule, depth)
    if denominator in ("depth", "list") and depth is not None:  # fixed by the ground truth
        fixed = np.minimum(n, depth) if denominator == "depth" else np.where(n > 0, depth, 0)
        return expected_ap(groups, fixed, rule, depth)
    out = expected_ap(groups, np.maximum(listed, 1), rule, depth)
    out[listed == 0] = 0.0
    if depth is not None:
        cut = (groups.start < depth) & (groups.start + groups.size > depth)
        out[np.unique(groups.query[cut])] = np.nan
    out[n == 0] = np.nan
    return out
