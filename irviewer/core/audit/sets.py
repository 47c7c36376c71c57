"""Set-level evidence for the label audit: positive sets shared by queries, per-set class
histograms, and the probability that a label is wrong (see ``docs/audit.md``).

Whether a (query, item) label is wrong is a question about the item and the query's positive
set, not only the query image. The audit therefore works per *positive set*: the queries whose
protocol positives (with the query's own image) and removed items are the same pool their
evidence (Oxford's five queries of a landmark share their lists; so do the queries of one
instance label). For each set and item the evidence is a share in [0, 1]:

* ``u``, from the rankings: the share of the set's other positives the item outranks, averaged
  over the set's queries (0 where the item is beyond the stored lists);
* ``v``, from the descriptors: the share of the item's nearest labelled gallery images that
  are in the positive set (neighbours the protocol removes for the set abstain).

Each share is *calibrated against the set's own labels*: the set's positives and negatives
are counted in histograms of the share (Sturges' number of bins from the positive set's size,
Laplace's add-one smoothing, the item itself left out), and the evidence of an item is the
likelihood ratio f_pos(bin) / f_neg(bin), a quantity with the same meaning for every query,
whatever its descriptor's scale or its set's size. The ratios of the two shares multiply
(naive Bayes), and the probability that the label is wrong follows from the prior error rate
of its direction, estimated from the dataset at hand as confident learning's confident joint
does (Northcutt, Jiang & Chuang, JAIR 2021): the share of labelled negatives whose evidence
reaches the mean evidence of their set's positives, and of labelled positives whose evidence
is at most the mean of their set's negatives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def sorted_unique(x: np.ndarray) -> np.ndarray:
    """Return the distinct values of ``x``, ascending (by one sort: numpy's hashing unique is
    tens of times slower on the audit's million keys)."""
    s = np.sort(np.asarray(x).ravel())
    return s[np.r_[True, s[1:] != s[:-1]]] if len(s) else s


def unique_inverse(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (distinct values ascending, the index of each element's value, counts)."""
    x = np.asarray(x).ravel()
    order = np.argsort(x)  # equal values get one group whatever their order: no stable sort
    s = x[order]
    first = np.r_[True, s[1:] != s[:-1]] if len(s) else np.zeros(0, dtype=bool)
    group = np.cumsum(first) - 1
    inverse = np.empty(len(x), dtype=np.int64)
    inverse[order] = group
    starts = np.flatnonzero(first)
    return s[first], inverse, np.diff(np.r_[starts, len(s)])


@dataclass(frozen=True)
class PositiveSets:
    """The distinct positive sets of a dataset's queries.

    ``of_query``: the set of each query; ``query_order``/``query_starts``: the queries of set
    ``s`` are ``query_order[query_starts[s]:query_starts[s + 1]]`` (ascending). ``pos_keys`` /
    ``rem_keys``: sorted ``s * n_g + g`` of the set's positives (the queries' own images
    included) and of the gallery images its protocol removes (the queries' own images aside);
    ``n_pos`` / ``n_neg``: active positives and labelled negatives per set.
    """

    of_query: np.ndarray
    query_order: np.ndarray
    query_starts: np.ndarray
    pos_keys: np.ndarray
    rem_keys: np.ndarray
    n_pos: np.ndarray
    n_neg: np.ndarray
    n_g: int

    @property
    def n_sets(self) -> int:
        """Return the number of distinct positive sets."""
        return len(self.n_pos)

    def queries(self, s: int) -> np.ndarray:
        """Return the queries sharing set ``s``, ascending."""
        return self.query_order[self.query_starts[s]:self.query_starts[s + 1]]

    def members(self, s: int) -> np.ndarray:
        """Return the positives of set ``s`` (gallery indices, ascending)."""
        lo, hi = np.searchsorted(self.pos_keys, [s * self.n_g, (s + 1) * self.n_g])
        return self.pos_keys[lo:hi] - s * self.n_g

    def sets_of(self, keys: np.ndarray, gallery: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return (index into ``gallery``, set) of every pair where ``gallery[i]`` is in a set
        listed by ``keys`` (``pos_keys`` or ``rem_keys``): the sets each image belongs to."""
        by_image = np.sort((keys % self.n_g) * self.n_sets + keys // self.n_g)
        g = np.asarray(gallery, dtype=np.int64)
        lo = np.searchsorted(by_image, g * self.n_sets)
        hi = np.searchsorted(by_image, (g + 1) * self.n_sets)
        counts = hi - lo
        which = np.repeat(np.arange(len(g)), counts)
        at = np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
        return which, by_image[at] % self.n_sets


def positive_sets(pos_keys: np.ndarray, removed_keys: np.ndarray, selves: np.ndarray,
                  active: np.ndarray) -> PositiveSets:
    """Return the :class:`PositiveSets` of the queries.

    ``pos_keys`` / ``removed_keys``: sorted ``q * n_g + g`` of each query's positives and of the
    items its protocol removes; ``selves``: each query's own gallery image (-1: none);
    ``active``: gallery images ranked at all. A query's set is its positives plus its own
    image (an image is relevant to its own query) with the items removed for it, its own image
    aside: so Holidays' queries of one group, whose own image is removed, share one set.
    """
    n_q, n_g = len(selves), len(active)
    pos_by_q = np.split(pos_keys % n_g, np.searchsorted(pos_keys, np.arange(1, n_q) * n_g))
    rem_by_q = np.split(removed_keys % n_g,
                        np.searchsorted(removed_keys, np.arange(1, n_q) * n_g))
    index: dict[tuple[bytes, bytes], int] = {}
    of_query = np.empty(n_q, dtype=np.int64)
    pos_parts: list[np.ndarray] = []
    rem_parts: list[np.ndarray] = []
    for q in range(n_q):
        own = int(selves[q])
        pos = pos_by_q[q]
        if own >= 0 and active[own]:
            pos = np.union1d(pos, [own])
        rem = rem_by_q[q][rem_by_q[q] != own]
        key = (pos.tobytes(), rem.tobytes())
        s = index.setdefault(key, len(index))
        of_query[q] = s
        if s == len(pos_parts):
            pos_parts.append(pos)
            rem_parts.append(rem)
    n_sets = len(pos_parts)
    n_pos = np.array([len(p) for p in pos_parts], dtype=np.int64)
    n_rem = np.array([len(r) for r in rem_parts], dtype=np.int64)
    n_active = int(np.count_nonzero(active))
    query_order = np.argsort(of_query, kind="stable")
    query_starts = np.searchsorted(of_query[query_order], np.arange(n_sets + 1))

    def keys(parts: list[np.ndarray]) -> np.ndarray:
        if not parts:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([s * n_g + p.astype(np.int64) for s, p in enumerate(parts)])

    return PositiveSets(of_query, query_order, query_starts, keys(pos_parts), keys(rem_parts),
                        n_pos, np.maximum(n_active - n_pos - n_rem, 0), n_g)


def sturges_bins(n_positives: np.ndarray) -> np.ndarray:
    """Return the number of histogram bins for sets of ``n_positives`` positives: one bin for
    a share of exactly 0 (no evidence at all, where the bulk of a set's negatives is) and
    Sturges' ceil(log2 n) + 1 equal bins over (0, 1] (Sturges, JASA 1926) — the smaller class
    sets the resolution its histogram can carry."""
    n = np.maximum(np.asarray(n_positives, dtype=np.float64), 1.0)
    return np.ceil(np.log2(n)).astype(np.int64) + 2


def to_bins(share: np.ndarray, n_bins: np.ndarray) -> np.ndarray:
    """Return the bin of each share in [0, 1]: 0 for a share of 0, else one of the
    ``n_bins - 1`` equal bins over (0, 1] (1, ..., n_bins - 1; each bin closed on the right)."""
    x = np.clip(np.asarray(share, dtype=np.float64), 0.0, 1.0)
    width = np.asarray(n_bins) - 1
    b = np.ceil(np.round(x * width, 9)).astype(np.int64)
    return np.clip(b, 0, width)


def histogram_log_lr(c_pos: np.ndarray, t_pos: np.ndarray, c_neg: np.ndarray,
                     t_neg: np.ndarray, own: np.ndarray, n_bins: np.ndarray) -> np.ndarray:
    """Return log(f_pos / f_neg) of each item's bin: ``c_pos`` / ``c_neg`` the counts of the
    positives' and negatives' histograms at the item's bin, ``t_pos`` / ``t_neg`` their
    totals, ``n_bins`` the number of bins. Each frequency is smoothed by Laplace's rule,
    f = (count + 1) / (total + bins), with the item's own count left out: ``own`` is +1 when
    the item is counted among the positives, -1 among the negatives, 0 in neither."""
    is_pos = (np.asarray(own) > 0).astype(np.float64)
    is_neg = (np.asarray(own) < 0).astype(np.float64)
    f_pos = (c_pos - is_pos + 1.0) / (t_pos - is_pos + n_bins)
    f_neg = (c_neg - is_neg + 1.0) / (t_neg - is_neg + n_bins)
    return np.log(f_pos) - np.log(f_neg)


def set_log_lr(item_set: np.ndarray, item_bin: np.ndarray, item_own: np.ndarray,
               pos_hist: np.ndarray, neg_hist: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Return each item's log likelihood ratio "positive / negative" under its set's histograms.

    ``pos_hist`` / ``neg_hist``: the sets' histograms laid end to end, set ``s`` at
    ``offsets[s]:offsets[s + 1]``; ``item_set``, ``item_bin``: each item's set and bin;
    ``item_own``: +1 when the item is one of the counted positives, -1 one of the counted
    negatives, 0 neither (left out of its own class, so a set's lone outlier is not its own
    evidence). Laplace smoothing: f(b) = (count(b) + 1) / (total + bins).
    """
    sizes = np.diff(offsets)
    pos_total = np.add.reduceat(pos_hist, offsets[:-1]) if len(pos_hist) else pos_hist
    neg_total = np.add.reduceat(neg_hist, offsets[:-1]) if len(neg_hist) else neg_hist
    # One value per (bin, own): the items are many, the sets' bins few.
    bin_set = np.repeat(np.arange(len(sizes)), sizes)
    with np.errstate(divide="ignore", invalid="ignore"):  # an own item's empty bin: unused
        table = np.stack([histogram_log_lr(pos_hist, pos_total[bin_set], neg_hist,
                                           neg_total[bin_set], np.full(len(bin_set), own),
                                           sizes[bin_set])
                          for own in (-1, 0, 1)], axis=1)
    return table[offsets[item_set] + item_bin, np.asarray(item_own) + 1]


def confident_prior(log_lr: np.ndarray, is_pos: np.ndarray, item_set: np.ndarray,
                    weight: np.ndarray, n_sets: int) -> tuple[float, float]:
    """Return (rho_neg, rho_pos): the estimated share of labelled negatives that are positives
    and of labelled positives that are negatives, by confident learning's confident joint
    (Northcutt et al., JAIR 2021) on the evidence ``log_lr``.

    Per set, the threshold of a class is its members' mean evidence; a negative whose
    evidence reaches its set's positives' mean counts as a missed positive, a positive whose
    evidence is at most its negatives' mean as a wrong one. ``weight`` counts items standing
    for many (the bulk of negatives with no evidence). Laplace: (count + 1) / (total + 2).
    """
    w_pos = np.where(is_pos, weight, 0.0)
    w_neg = np.where(is_pos, 0.0, weight)
    sum_pos = np.bincount(item_set, w_pos * log_lr, minlength=n_sets)
    sum_neg = np.bincount(item_set, w_neg * log_lr, minlength=n_sets)
    n_pos = np.bincount(item_set, w_pos, minlength=n_sets)
    n_neg = np.bincount(item_set, w_neg, minlength=n_sets)
    with np.errstate(invalid="ignore", divide="ignore"):
        t_pos = np.where(n_pos > 0, sum_pos / n_pos, np.inf)
        t_neg = np.where(n_neg > 0, sum_neg / n_neg, -np.inf)
    missed = float(np.sum(w_neg[log_lr >= t_pos[item_set]]))
    wrong = float(np.sum(w_pos[log_lr <= t_neg[item_set]]))
    return (missed + 1.0) / (float(n_neg.sum()) + 2.0), (wrong + 1.0) / (float(n_pos.sum()) + 2.0)


def error_log_odds(log_lr: np.ndarray, is_pos: np.ndarray, rho_neg: float,
                   rho_pos: float) -> np.ndarray:
    """Return the log odds that each label is wrong: for a labelled negative, the prior log
    odds log(rho_neg / (1 - rho_neg)) plus the log likelihood ratio "positive / negative";
    for a labelled positive, log(rho_pos / (1 - rho_pos)) minus it (Bayes' rule on the odds;
    each direction with its own prior)."""
    prior_neg = np.log(rho_neg) - np.log1p(-rho_neg)
    prior_pos = np.log(rho_pos) - np.log1p(-rho_pos)
    return np.where(is_pos, prior_pos - log_lr, prior_neg + log_lr)


def probability(log_odds: np.ndarray) -> np.ndarray:
    """Return the probability of each log odds: the logistic function 1 / (1 + e^-x), as
    exp(-log(1 + e^-x)) so that it neither overflows nor loses the digits near 0 and 1.
    (numpy's, not scipy.special's expit: importing scipy.special costs 0.2 s, a sixth of an
    Oxford5k audit, for one line.)"""
    x = np.asarray(log_odds, dtype=np.float64)
    return np.exp(-np.logaddexp(0.0, -x))


def error_probability(log_lr: np.ndarray, is_pos: np.ndarray, rho_neg: float,
                      rho_pos: float) -> np.ndarray:
    """Return the probability that each label is wrong (:func:`error_log_odds`)."""
    return probability(error_log_odds(log_lr, is_pos, rho_neg, rho_pos))
