"""The likeness share of the audit's set evidence: how much an image looks like a positive set
as a whole, against the set's own negatives (see ``docs/audit.md``).

The nearness shares (u: where the queries rank it, v: whether its nearest gallery images are
the set's positives, x: whether any list names them) say nothing once an image is far from
everything the set holds; a hard view of the landmark and an unrelated photograph put into its
list are then alike to them. The *likeness* of an image to a set is the mean cosine between it
and its ``LIKE_TOP`` most similar positives of the set (itself left out), and the share

* ``w`` = the share of the set's negatives less like the set than the item is

turns it into a number in [0, 1] whatever the descriptor's scale: a negative's w is its place
among the other negatives (uniform over them), a landmark's hard views still stand above most
of its negatives (90 % of the Oxford5k positives above 93 % of their landmark's negatives with
the 128-d fc7 descriptors), and a photograph of something else stands where any negative
does. It is calibrated against the set's positives and negatives like the other shares.

Computed where the sets are lists (Oxford, Paris, their revisited versions): there the union
of the positives is a small part of the gallery, and one product of the measured images with
it costs little. In image-label sets (every gallery image is some label's positive) it would
double the neighbour pass and is left out: there an image is wrong as far as another label
claims it, which the neighbours' labels say.
"""

from __future__ import annotations

import numpy as np

from irviewer.core import neighbours as nb
from irviewer.core.audit.context import Context, SetEvidence, isin_sorted
from irviewer.core.audit.sets import PositiveSets, sorted_unique

#: The positives of a set an image is compared with: the mean cosine with its 5 most similar
#: (fewer in a set of fewer positives; ``docs/audit.md``, "Where every constant comes from").
LIKE_TOP = 5
#: Rows of the measured images multiplied at a time against the positives.
BLOCK_ROWS = 2048


def set_likeness(unit: nb.UnitGallery, sets: PositiveSets,
                 rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (images, likeness): ``images`` the sorted union of ``rows`` and every set's
    positives, ``likeness`` an (images, sets) array of each image's mean cosine with its
    ``min(LIKE_TOP, n - 1)`` most similar positives of each set of ``n`` positives, itself
    left out (NaN for a set of one positive)."""
    n_g = sets.n_g
    positives = sorted_unique(sets.pos_keys % n_g)
    images = sorted_unique(np.concatenate([np.asarray(rows, dtype=np.int64), positives]))
    n_sets = sets.n_sets
    like = np.full((len(images), n_sets), np.nan)
    if not len(positives):
        return images, like
    cols = [np.searchsorted(positives, sets.members(s)) for s in range(n_sets)]
    pos_vecs = unit.rows(positives)
    for a in range(0, len(images), BLOCK_ROWS):
        block = images[a:a + BLOCK_ROWS]
        sims = unit.rows(block) @ pos_vecs.T
        at = np.minimum(np.searchsorted(positives, block), len(positives) - 1)
        own = positives[at] == block
        sims[np.flatnonzero(own), at[own]] = -np.inf  # an image is not like itself
        for s in range(n_sets):
            n = len(cols[s])
            m = min(LIKE_TOP, n - 1)
            if m < 1:
                continue
            top = np.partition(sims[:, cols[s]], n - m, axis=1)[:, n - m:]
            with np.errstate(invalid="ignore"):
                like[a:a + len(block), s] = np.where(np.isfinite(top).all(axis=1),
                                                     top.mean(axis=1), np.nan)
    return images, like


def likeness_shares(ctx: Context, ev: SetEvidence, unit: nb.UnitGallery,
                    measured: np.ndarray, reference: np.ndarray) -> None:
    """Set ``ev.w`` for every key whose item is one of the ``measured`` images or a positive:
    the share of its set's negatives among the reference rows (``reference`` marks them in
    ``measured``) that are less like the set than the item, the item left out; ``ev.like`` the
    likeness compared; ``ev.like_neg`` per set, how many reference negatives were compared."""
    sets, n_g = ctx.sets, ctx.n_g
    assert sets is not None
    images, like = set_likeness(unit, sets, measured)
    ref_rows = np.asarray(measured, dtype=np.int64)[reference]
    ref_at = np.searchsorted(images, ref_rows)
    negatives: list[np.ndarray] = []
    for s in range(sets.n_sets):
        keys = s * n_g + ref_rows
        negative = ~isin_sorted(keys, sets.pos_keys) & ~isin_sorted(keys, sets.rem_keys)
        values = like[ref_at[negative], s]
        negatives.append(np.sort(values[np.isfinite(values)]))
    key_s, key_g = ev.keys // n_g, ev.keys % n_g
    at = np.minimum(np.searchsorted(images, key_g), len(images) - 1)
    found = images[at] == key_g
    value = np.where(found, like[at, key_s], np.nan)
    w = np.full(len(ev.keys), np.nan)
    counted = np.isfinite(value)
    for s in np.unique(key_s[counted]).tolist():
        pick = np.flatnonzero((key_s == s) & counted)
        below = np.searchsorted(negatives[s], value[pick], side="left")
        own = (~ev.is_pos[pick] & ev.v_ref[pick]).astype(np.int64)  # a negative leaves itself out
        n = len(negatives[s]) - own
        w[pick] = np.where(n > 0, below / np.maximum(n, 1), np.nan)
    ev.w, ev.like = w, value
    ev.like_neg = np.array([len(v) for v in negatives], dtype=np.int64)
