"""Calibration of one method's set evidence against each set's own labels: the likelihood
ratio that an item is one of the set's positives rather than one of its negatives, and the
probability that its label is wrong (see ``docs/audit.md``, "Pair evidence").

Two measurements, each turned into a likelihood ratio by histograms of the set's positives
and negatives (Sturges' bins per share, the item left out of its class), multiplied since
neither tells the other:

* **nearness**, the shares that say who is near the item: u (where the set's queries rank it
  among their positives), v (how many of its nearest gallery images are the set's positives)
  and, where the sets are lists, x (how many of them any list names). They measure one thing
  three ways, so they are counted once, by their *joint* histogram (a negative the queries
  rank among the positives has positives for neighbours too: multiplying the three ratios
  would count that evidence three times). The negatives' cell frequencies are Laplace's,
  (count + 1) / (total + cells); the positives', far fewer than the cells, get pseudo-counts
  scaled to their number, (count + a) / (total + a cells) with a = positives / negatives, so
  that a cell neither class occupies says nothing (its ratio is 1). An item whose
  neighbours were not computed has the ratio of u alone; in image-label sets u and v keep
  a histogram each (the synthetic sets' figures, ``docs/audit.md``).
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
    ev.v_hist = ev.near_hist = None
    if ev.ref_neg is not None:
        ev.v_hist = _marginal(ev, ev.v, s, bins, offsets, ev.ref_neg)
        if ev.x is not None:  # lists: u, v and x by their joint histogram
            measured, lr, bulk_lr = _nearness(ctx, ev, s, bins, ub, labelled)
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
    ev.log_lr, ev.bulk_log_lr, ev.rho = log_lr, bulk_total, rho
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


def _nearness(ctx: Context, ev: SetEvidence, s: np.ndarray, bins: np.ndarray,
              ub: np.ndarray, labelled: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                              np.ndarray]:
    """Return (measured, log LR, bulk log LR) of the nearness shares by their joint histogram
    per set: u, v and (lists) x, each in the set's bins. Counted: the labelled positives whose
    neighbours were computed, and the negatives among the reference rows, those without a key
    in the cells of u = 0, v = 0 and their own x. The bulk's ratio is the mean of its cells'."""
    assert ev.ref_neg is not None
    n_sets = len(bins)
    use_x = ev.x is not None
    measured = np.isfinite(ev.v) & (np.isfinite(ev.x) if ev.x is not None else True)
    dim_bins = [ub, to_bins(np.where(measured, ev.v, 0.0), bins[s])]
    if ev.x is not None:
        dim_bins.append(to_bins(np.where(measured, ev.x, 0.0), bins[s]))
    joint = _Joint(bins, len(dim_bins))
    cell = joint.cell(s, dim_bins)
    keyed_neg = measured & ~ev.is_pos & ev.v_ref
    counted_pos = measured & ev.is_pos & labelled & ~_doubted(ev)
    counted_neg = keyed_neg
    joint.count(s, cell, counted_pos, counted_neg)
    # the reference negatives without a key: u = 0, v = 0, x as its neighbours say
    unkeyed = np.maximum(ev.ref_neg - np.bincount(s[keyed_neg], minlength=n_sets), 0)
    for k in range(n_sets):
        if use_x and ev.x_ref is not None:
            xb = to_bins(ev.x_ref[k], np.full(len(ev.x_ref[k]), bins[k]))
            spread = np.bincount(xb, minlength=bins[k]).astype(float)
            spread = np.maximum(spread - _keyed_bulk_cells(ev, s, keyed_neg, cell, k,
                                                           int(bins[k])), 0)
            if spread.sum() > 0:
                joint.neg[joint.offsets[k]:joint.offsets[k] + bins[k]] += (
                    spread * unkeyed[k] / spread.sum())
        else:
            joint.neg[joint.offsets[k]] += unkeyed[k]
    own = np.where(counted_pos, 1, np.where(counted_neg, -1, 0))
    lr = joint.log_lr(s, cell, own)
    # the bulk: its cells' ratios (u = 0, v = 0, each x), weighted by how many of it each holds
    bulk_lr = np.zeros(n_sets)
    for k in range(n_sets):
        width = int(bins[k]) if use_x else 1
        held = joint.neg[joint.offsets[k]:joint.offsets[k] + width]
        full = np.flatnonzero(held > 0)
        if len(full):
            zero = np.zeros(len(full), dtype=np.int64)
            cells_bins = [zero, zero] + ([full] if use_x else [])
            ks = np.full(len(full), k)
            ratios = joint.log_lr(ks, joint.cell(ks, cells_bins), np.full(len(full), -1))
            bulk_lr[k] = float(np.average(ratios, weights=held[full]))
    ev.near_hist = (joint.pos, joint.neg, joint.offsets, cell, own)
    return measured, lr, bulk_lr


class _Joint:
    """The sets' joint histograms of ``dims`` shares laid end to end (set k's cells at
    ``offsets[k]``)."""

    def __init__(self, bins: np.ndarray, dims: int) -> None:
        self.bins, self.dims = bins, dims
        self.sizes = bins ** dims
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)])
        self.pos = np.zeros(self.offsets[-1])
        self.neg = np.zeros(self.offsets[-1])

    def cell(self, s: np.ndarray, dim_bins: list[np.ndarray]) -> np.ndarray:
        """Return each item's cell in its set's joint histogram."""
        out = np.zeros(len(s), dtype=np.int64)
        for b in dim_bins:
            out = out * self.bins[s] + b
        return out

    def count(self, s: np.ndarray, cell: np.ndarray, counted_pos: np.ndarray,
              counted_neg: np.ndarray) -> None:
        """Count the positives and the negatives in their cells."""
        self.pos = _counts(self.offsets, s, cell, counted_pos)
        self.neg = _counts(self.offsets, s, cell, counted_neg)

    def log_lr(self, s: np.ndarray, cell: np.ndarray, own: np.ndarray) -> np.ndarray:
        """Return log(f_pos / f_neg) of each item's cell, the item left out of its class
        (``own`` +1 / -1 / 0): the negatives' Laplace frequency, the positives' with
        pseudo-counts scaled to their number (a cell neither class has: ratio 1)."""
        is_pos = (own > 0).astype(float)
        is_neg = (own < 0).astype(float)
        self.bins[s].astype(float)
        n_pos = np.add.reduceat(self.pos, self.offsets[:-1])[s] - is_pos
        n_neg = np.add.reduceat(self.neg, self.offsets[:-1])[s] - is_neg
        cells = self.sizes[s].astype(float)
        a = np.maximum(n_pos, 1) / np.maximum(n_neg, 1)  # an empty cell: the same frequency
        f_pos = (self.pos[self.offsets[s] + cell] - is_pos + a) / (n_pos + a * cells)
        f_neg = (self.neg[self.offsets[s] + cell] - is_neg + 1.0) / (n_neg + cells)
        return np.log(f_pos) - np.log(f_neg)


def _keyed_bulk_cells(ev: SetEvidence, s: np.ndarray, counted_neg: np.ndarray,
                      cell: np.ndarray, k: int, b: int) -> np.ndarray:
    """Return, per x bin, how many of set ``k``'s counted negatives with a key are among the
    reference rows whose x the set's spread counts (every counted negative: they are
    reference rows), so that the rows without a key are what remains."""
    mine = counted_neg & (s == k)
    return np.bincount(cell[mine] % b, minlength=b).astype(float)


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
    b = to_bins(np.where(seen, ev.w, 0.0), np.full(len(s), n_bins))
    pos = np.bincount(b[counted_pos], minlength=n_bins).astype(float)
    neg = np.zeros((n_sets, n_bins))
    for k in range(n_sets):
        n = int(ev.like_neg[k])
        if n:
            places = to_bins(np.arange(n) / max(n - 1, 1), np.full(n, n_bins))
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

