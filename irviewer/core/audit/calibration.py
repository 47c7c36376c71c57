"""Calibration of one method's set evidence against each set's own labels: the likelihood
ratio that an item is one of the set's positives rather than one of its negatives, and the
probability that its label is wrong (see ``docs/audit.md``, "Pair evidence").

Two measurements, each turned into a likelihood ratio by histograms of the set's positives
and negatives (Sturges' bins, Laplace's add-one smoothing, the item left out of its class),
multiplied since neither tells the other:

* **nearness**, the shares that say who is near the item: u (where the set's queries rank it
  among their positives), v (how many of its nearest gallery images are the set's positives)
  and, where the sets are lists, x (how many of them any list names). They measure one thing
  three ways, so where the sets are lists they are counted once, as one share, their mean (a
  negative the queries rank among the positives has positives for neighbours too:
  multiplying the three ratios would count that evidence three times, which made the
  negatives that look positive look surer than they are). An item whose neighbours were not
  computed has the ratio of u alone; in image-label sets u and v keep a histogram each (the
  synthetic sets' figures, ``docs/audit.md``).
* **likeness**, w (lists only, :mod:`irviewer.core.audit.likeness`): the item's place among
  the set's own negatives by how much it looks like the set's positives. The negatives'
  places are uniform by construction; the positives' histogram is pooled over every set, w
  meaning the same in each: a set's own twenty positives cannot show how rare a place below
  most of its negatives is, eight hundred can.

Positives the first pass doubts (``doubted``: a wrong label more probable than not) are left
out of their set's positives' histograms in the second (:func:`~irviewer.core.audit.pairs.
set_scores`): two images wrongly put into one list would otherwise vouch for each other.

The probability follows from the prior error rate of the label's direction, estimated from the
dataset at hand by confident learning's confident joint (:func:`~irviewer.core.audit.sets.
confident_prior`).
"""

from __future__ import annotations

import numpy as np

from irviewer.core.audit.context import Context, SetEvidence
from irviewer.core.audit.sets import (
    confident_prior,
    error_log_odds,
    probability,
    set_log_lr,
    sturges_bins,
    to_bins,
)

Hist = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def score(ctx: Context, ev: SetEvidence) -> None:
    """Calibrate one method's shares against each set's own labels and set ``log_lr``,
    ``parts`` (nearness, likeness), ``prob``, ``log_odds``, the bulk's, the priors ``rho`` and
    the histograms the evidence sentences quote on ``ev``."""
    sets, n_g = ctx.sets, ctx.n_g
    assert sets is not None
    n_sets = sets.n_sets
    s = ev.keys // n_g
    labelled = np.isfinite(ev.u)  # every negative; the positives some query labels
    bins = sturges_bins(np.bincount(s[ev.is_pos & labelled], minlength=n_sets))
    offsets = np.concatenate([[0], np.cumsum(bins)])
    bulk = np.maximum(sets.n_neg - np.bincount(s[~ev.is_pos], minlength=n_sets), 0)
    # u alone: every labelled positive and every negative of a set (the bulk at 0)
    ub = to_bins(np.where(labelled, ev.u, 0.0), bins[s])
    counted_pos = ev.is_pos & labelled
    u_pos = _counts(offsets, s, ub, counted_pos)
    u_neg = _counts(offsets, s, ub, ~ev.is_pos)
    u_neg[offsets[:-1]] += bulk
    own = np.where(counted_pos, 1, np.where(ev.is_pos, 0, -1))
    near_lr = np.where(labelled, set_log_lr(s, ub, own, u_pos, u_neg, offsets), 0.0)
    no_bin = np.zeros(n_sets, dtype=np.int64)
    bulk_own = -(bulk > 0).astype(np.int64)  # a bulk negative is one of the counted
    bulk_near = set_log_lr(np.arange(n_sets), no_bin, bulk_own, u_pos, u_neg, offsets)
    like_lr = np.zeros(len(s))
    bulk_like = np.zeros(n_sets)
    ev.v_hist = None
    if ev.ref_neg is not None:
        ev.v_hist = _marginal(ev, ev.v, s, bins, offsets, ev.ref_neg)
        if ev.x is not None:  # lists: u, v and x as one share, their mean
            measured, lr, bulk_lr = _nearness(ev, s, bins, offsets, labelled,
                                              ctx.grades(ev.keys, ev.is_pos))
            near_lr = np.where(measured, lr, near_lr)
            if ev.whole:
                bulk_near = bulk_lr
        else:  # image labels: u and v each by its own histogram
            v_pos, v_neg, _, vb, v_own = ev.v_hist
            seen = np.isfinite(ev.v)
            near_lr = near_lr + np.where(seen, set_log_lr(s, vb, v_own, v_pos, v_neg,
                                                          offsets), 0.0)
            if ev.whole:
                bulk_near = bulk_near + set_log_lr(np.arange(n_sets), no_bin, bulk_own, v_pos,
                                                   v_neg, offsets)
    if ev.w is not None and ev.like_neg is not None:
        like_lr, bulk_like = _likeness(ev, s, n_sets)
    log_lr = near_lr + like_lr
    bulk_total = bulk_near + bulk_like
    items_lr = np.concatenate([log_lr, bulk_total])
    rho = confident_prior(items_lr, np.concatenate([ev.is_pos, np.zeros(n_sets, bool)]),
                          np.concatenate([s, np.arange(n_sets)]),
                          np.concatenate([np.ones(len(s)), bulk.astype(float)]), n_sets)
    ev.parts = np.stack([near_lr, like_lr], axis=1)
    ev.log_lr, ev.rho = log_lr, rho
    ev.log_odds = error_log_odds(log_lr, ev.is_pos, *rho)
    ev.bulk_log_odds = error_log_odds(bulk_total, np.zeros(n_sets, bool), *rho)
    ev.prob, ev.bulk_prob = probability(ev.log_odds), probability(ev.bulk_log_odds)


def _counts(offsets: np.ndarray, s: np.ndarray, b: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Return the sets' histograms laid end to end: how many masked items are in each bin."""
    return np.bincount((offsets[s] + b)[mask], minlength=offsets[-1]).astype(float)


def _marginal(ev: SetEvidence, share: np.ndarray, s: np.ndarray, bins: np.ndarray,
              offsets: np.ndarray, ref_neg: np.ndarray) -> Hist:
    """Return the histograms of one share measured on the gallery images (NaN where not
    measured), the set's negatives counted on the reference rows (the unmeasured and those
    without a key at 0): positives', negatives', offsets, each key's bin, whether it is
    counted (+1 / -1 / 0). The evidence sentences quote them."""
    n_sets = len(offsets) - 1
    seen = np.isfinite(share)
    b = to_bins(np.where(seen, share, 0.0), bins[s])
    keyed_neg = seen & ~ev.is_pos & ev.v_ref
    counted_pos = seen & ev.is_pos
    counted_neg = keyed_neg
    pos = _counts(offsets, s, b, counted_pos)
    neg = _counts(offsets, s, b, counted_neg)
    neg[offsets[:-1]] += np.maximum(ref_neg - np.bincount(s[keyed_neg], minlength=n_sets), 0)
    return pos, neg, offsets, b, np.where(counted_pos, 1, np.where(counted_neg, -1, 0))


def _likeness(ev: SetEvidence, s: np.ndarray, n_sets: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (log LR per key, the bulk's mean log LR per set) of the likeness share w: the
    positives of every set pooled in one histogram (Sturges' bins for their number), each
    set's negatives from their places among its reference negatives (uniform by
    construction: the i-th least alike of N has w = i / (N - 1)), Laplace's rule for both,
    the item left out of its class."""
    assert ev.w is not None and ev.like_neg is not None
    seen = np.isfinite(ev.w)
    counted_pos = seen & ev.is_pos & ~_doubted(ev)
    n_bins = int(sturges_bins(np.array([max(int(counted_pos.sum()), 1)]))[0])
    # a place, not a count: no bin of its own for 0 (the least alike negative is one of many)
    b = to_bins(np.maximum(np.where(seen, ev.w, 0.0), 1e-6), np.full(len(s), n_bins))
    pos = np.bincount(b[counted_pos], minlength=n_bins).astype(float)
    neg = np.zeros((n_sets, n_bins))
    for k in range(n_sets):
        n = int(ev.like_neg[k])
        if n:
            places = to_bins(np.maximum(np.arange(n) / max(n - 1, 1), 1e-6), np.full(n, n_bins))
            neg[k] = np.bincount(places, minlength=n_bins)
    counted_neg = seen & ~ev.is_pos & ev.v_ref
    own_pos, own_neg = counted_pos.astype(float), counted_neg.astype(float)
    f_pos = (pos[b] - own_pos + 1.0) / (pos.sum() - own_pos + n_bins)
    f_neg = (neg[s, b] - own_neg + 1.0) / (neg.sum(axis=1)[s] - own_neg + n_bins)
    lr = np.where(seen, np.log(f_pos) - np.log(f_neg), 0.0)
    bulk = np.zeros(n_sets)
    ratios = np.log((pos + 1.0) / (pos.sum() + n_bins))
    for k in range(n_sets):
        if neg[k].sum() > 1:  # a bulk negative is one of the counted
            held = neg[k] > 0
            own = np.log((neg[k][held] - 1.0 + 1.0) / (neg[k].sum() - 1.0 + n_bins))
            bulk[k] = float(np.average(ratios[held] - own, weights=neg[k][held]))
    return lr, bulk


def _doubted(ev: SetEvidence) -> np.ndarray:
    """Return which keys the first pass doubts (positives only; none before it ran)."""
    return ev.doubted if ev.doubted is not None else np.zeros(len(ev.keys), dtype=bool)


def _mean_ratio(k: int, width: int, held: np.ndarray, pos: np.ndarray, neg: np.ndarray,
                offsets: np.ndarray) -> float:
    """Return the mean log likelihood ratio of set ``k``'s first ``width`` cells, weighted by
    how many negatives each holds (each counted one of them); 0 when they hold none."""
    full = np.flatnonzero(held > 0)
    if not len(full):
        return 0.0
    ratios = set_log_lr(np.full(len(full), k), full, np.full(len(full), -1), pos, neg, offsets)
    return float(np.average(ratios, weights=held[full]))



def _nearness(ev: SetEvidence, s: np.ndarray, bins: np.ndarray, offsets: np.ndarray,
              labelled: np.ndarray, grade: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (measured, log LR, the bulk's mean log LR per set) of the nearness share, the
    mean of u, v and x, by the set's histograms: its labelled positives whose neighbours were
    computed (those the first pass doubts left out), its negatives among the reference rows
    (those without a key, u = 0 and v = 0, at x / 3 as their neighbours say). With ``grade``
    (:meth:`~irviewer.core.audit.context.Context.grades`), a positive's ratio is against the
    set's positives of its own group: the label is the group, and a ``good`` label (a clear
    view of the object) far from the list is rarer than an ``ok`` one (only part of it
    visible, often from another side); a negative's, against all of them."""
    assert ev.ref_neg is not None and ev.x is not None and ev.x_ref is not None
    n_sets = len(bins)
    measured = np.isfinite(ev.v) & np.isfinite(ev.x) & labelled
    share = np.where(measured, (np.where(labelled, ev.u, 0.0) + np.nan_to_num(ev.v)
                                + np.nan_to_num(ev.x)) / 3, 0.0)
    b = to_bins(share, bins[s])
    keyed_neg = measured & ~ev.is_pos & ev.v_ref
    counted_pos = measured & ev.is_pos & ~_doubted(ev)
    pos = _counts(offsets, s, b, counted_pos)
    neg = _counts(offsets, s, b, keyed_neg)
    unkeyed = np.maximum(ev.ref_neg - np.bincount(s[keyed_neg], minlength=n_sets), 0)
    for k in range(n_sets):
        spread = np.bincount(to_bins(ev.x_ref[k] / 3, np.full(len(ev.x_ref[k]), bins[k])),
                             minlength=bins[k]).astype(float)
        mine = keyed_neg & (s == k)
        keyed = to_bins(ev.x[mine] / 3, np.full(int(mine.sum()), bins[k]))
        spread = np.maximum(spread - np.bincount(keyed, minlength=bins[k]), 0)
        if spread.sum() > 0:
            neg[offsets[k]:offsets[k + 1]] += spread * unkeyed[k] / spread.sum()
    own = np.where(counted_pos, 1, np.where(keyed_neg, -1, 0))
    lr = set_log_lr(s, b, own, pos, neg, offsets)
    if grade is not None:  # a positive against the positives of its own group
        for k in range(int(grade.max(initial=-1)) + 1):
            mine = ev.is_pos & (grade == k)
            pos_k = _counts(offsets, s, b, counted_pos & mine)
            lr = np.where(mine, set_log_lr(s, b, np.where(mine, own, 0), pos_k, neg, offsets),
                          lr)
    bulk = np.array([_mean_ratio(k, int(bins[k]), neg[offsets[k]:offsets[k + 1]], pos, neg,
                                 offsets) for k in range(n_sets)])
    return measured, lr, bulk
