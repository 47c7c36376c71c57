"""Claims of other lists on an image, for the label audit (see ``docs/audit.md``, "Other
lists"): which positive sets are one list (families), which are unrelated, and what the
evidence of an unrelated list says about an image's label.

* Sets of one **family** are one list written several times: Oxford's five queries of a
  landmark, one of whose lists differs elsewhere. A problem is counted once per family.
* Two sets are **unrelated** when they share hardly any positive (two landmarks). An image
  belongs to at most one of two unrelated lists, so each list's claim on it is evidence
  about the other's label:

  - a **competing claim**: both list it (:func:`competing_claims`);
  - **another list's claim**: it is listed by one and looks like the other's positives
    (:func:`other_list_claims`). With O_B the odds that B listed it wrongly (B's evidence and
    prior) and LR_A the likelihood ratio that it is one of A's positives (A's evidence), the
    explanations — B is right, it belongs to no list, it belongs to A (it was *moved*) —
    weigh 1, O_B and O_B LR_A / K: a wrong listing is taken to be as likely an image of
    another list as of none, each of the K other lists alike. So the odds that B is wrong are
    O_B (1 + sum of LR_A / K over the unrelated lists), and the odds that it belongs to A
    and not to B are O_B LR_A / K / (1 + O_B (1 + the other lists' LR / K)). Sets of
    image-label families never compete (two sets claiming an image are one label's).
"""

from __future__ import annotations

import numpy as np

from irviewer.core.audit.context import Context, SetEvidence
from irviewer.core.audit.sets import PositiveSets, probability

#: Two positive sets that share at most this share of the smaller one's positives are
#: unrelated: an image both claim is a competing claim (:func:`competing_claims`).
SHARED = 0.05
#: Two positive sets that share at least this share of the smaller one's positives are one
#: list written twice (one of them differs elsewhere): one family (:func:`families`).
SAME_LIST = 0.5


def families(sets: PositiveSets) -> np.ndarray:
    """Return the family of each positive set: the connected groups of sets each sharing at
    least :data:`SAME_LIST` of the smaller one's positives with another of the group."""
    n_sets = sets.n_sets
    if n_sets == 0:
        return np.zeros(0, dtype=np.int64)
    a, b, shared = shared_positives(sets)
    smaller = np.minimum(sets.n_pos[a], sets.n_pos[b])
    keep = shared >= SAME_LIST * np.maximum(smaller, 1)
    return _components(n_sets, a[keep], b[keep])


def shared_positives(sets: PositiveSets) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (a, b, count) of every ordered pair of positive sets (a set with itself
    included) sharing ``count`` > 0 positives: every image's sets taken two by two, counted
    (numpy: the pairs are few, each image being the positive of a few sets)."""
    n_sets, n_g = sets.n_sets, sets.n_g
    by_image = np.sort((sets.pos_keys % n_g) * n_sets + sets.pos_keys // n_g)
    image, owner = by_image // n_sets, by_image % n_sets
    starts = np.flatnonzero(np.r_[True, image[1:] != image[:-1]]) if len(image) else \
        np.zeros(0, dtype=np.int64)
    counts = np.diff(np.r_[starts, len(image)])
    # each key against every key of its image: key i pairs with starts[its image] + j
    group = np.repeat(np.arange(len(starts)), counts)
    reps = counts[group]
    first = np.repeat(np.arange(len(image)), reps)
    offset = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
    second = np.repeat(starts[group], reps) + offset
    pair = owner[first].astype(np.int64) * n_sets + owner[second]
    keys, count = np.unique(pair, return_counts=True)
    return keys // n_sets, keys % n_sets, count


def _components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return the connected component of each of ``n`` nodes joined by the edges (a, b),
    numbered by their smallest node in order (union-find with path halving)."""
    parent = np.arange(n)

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = int(parent[x])
        return x

    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        rx, ry = root(x), root(y)
        if rx != ry:
            parent[max(rx, ry)] = min(rx, ry)
    roots = np.array([root(x) for x in range(n)], dtype=np.int64)
    return np.unique(roots, return_inverse=True)[1].astype(np.int64)


def unrelated(sets: PositiveSets, a: int, b: int, known: dict[tuple[int, int], bool]) -> bool:
    """Return True when positive sets ``a`` and ``b`` (both claiming an image) share hardly
    any positive: at most :data:`SHARED` of the smaller set, or the one image (a few images
    put into the wrong list together stay competing claims). Cached in ``known`` per pair."""
    key = (min(a, b), max(a, b))
    if key not in known:
        common = np.intersect1d(sets.members(a), sets.members(b), assume_unique=True)
        known[key] = len(common) <= max(1, int(SHARED * min(sets.n_pos[a], sets.n_pos[b])))
    return known[key]


def competing_claims(ctx: Context, ev: SetEvidence, known: dict[tuple[int, int], bool]) -> None:
    """Add to the log odds that a positive label is wrong the evidence of a competing claim:
    an image listed as a positive by two unrelated sets cannot belong to both, so one label is
    wrong, and the likelihood ratio between the two claims, log LR(other set) - log LR(this
    set) when positive, says which (the label it fits worse). An image of another landmark put
    into a good list is the plainest error there is: it fits its own set and nothing in this
    one. The rival of each doubted claim is kept in ``ctx.rivals`` for the evidence sentence."""
    sets, n_g = ctx.sets, ctx.n_g
    assert sets is not None and ev.log_lr is not None and ev.log_odds is not None
    if ctx.labels is not None:
        return
    images = sets.pos_keys % n_g
    shared = np.flatnonzero(np.bincount(images, minlength=n_g) > 1)
    if not len(shared):
        return
    which, owner = sets.sets_of(sets.pos_keys, shared)
    bump: dict[int, float] = {}
    for i, g in enumerate(shared.tolist()):
        claims = owner[which == i].tolist()
        at = ev.find(np.array([s * n_g + g for s in claims], dtype=np.int64))
        for a, ka in zip(claims, at.tolist(), strict=True):
            if ka < 0:
                continue
            for b, kb in zip(claims, at.tolist(), strict=True):
                if b == a or kb < 0 or not unrelated(sets, a, b, known):
                    continue
                gain = float(ev.log_lr[kb] - ev.log_lr[ka])
                if gain > bump.get(ka, 0.0):
                    bump[ka] = gain
                    ctx.rivals.setdefault(a * n_g + g, b)
    if bump:
        at = np.fromiter(bump, dtype=np.int64, count=len(bump))
        ev.log_odds = ev.log_odds.copy()
        ev.log_odds[at] += np.fromiter(bump.values(), dtype=np.float64, count=len(bump))
        ev.prob = probability(ev.log_odds)


def unrelated_sets(sets: PositiveSets) -> np.ndarray:
    """Return the (sets, sets) matrix of :func:`unrelated`: True where two sets share at most
    :data:`SHARED` of the smaller one's positives, or one image (never a set with itself)."""
    n_sets = sets.n_sets
    out = np.ones((n_sets, n_sets), dtype=bool)
    np.fill_diagonal(out, False)
    if not n_sets:
        return out
    a, b, shared = shared_positives(sets)
    limit = np.maximum(1, (SHARED * np.minimum(sets.n_pos[a], sets.n_pos[b])).astype(np.int64))
    related = shared > limit
    out[a[related], b[related]] = False
    return out


def other_list_claims(ctx: Context, ev: SetEvidence, apart: np.ndarray) -> None:
    """Weigh, under one method, the claims of unrelated lists on the images listed as
    positives (lists only; see the module): a positive of B that looks like one of A's
    positives is more probably wrong in B, and a negative of A listed by B is a missed
    positive of A only as far as it is not B's (the odds that it belongs to A and not to B).
    Each family of sets counts once, by its strongest set; ``apart`` is
    :func:`unrelated_sets`."""
    n_g = ctx.n_g
    assert ev.log_odds is not None and ev.log_lr is not None
    if ctx.labels is not None or not len(ev.keys):
        return
    family = ctx.family
    others = max(1, len(np.unique(family)) - 1)
    items = ev.keys % n_g
    listed = np.zeros(n_g, dtype=bool)
    listed[items[ev.is_pos]] = True
    pos_at = np.flatnonzero(ev.is_pos)
    neg_at = np.flatnonzero(~ev.is_pos & listed[items])
    if not len(neg_at):
        return
    # every (positive key, negative key) pair of one item, both sets unrelated
    neg_at = neg_at[np.argsort(items[neg_at], kind="stable")]
    lo = np.searchsorted(items[neg_at], items[pos_at], side="left")
    hi = np.searchsorted(items[neg_at], items[pos_at], side="right")
    count = hi - lo
    i = np.repeat(pos_at, count)
    j = neg_at[np.repeat(lo - np.cumsum(count) + count, count) + np.arange(int(count.sum()))]
    a, b = ev.keys[j] // n_g, ev.keys[i] // n_g
    keep = apart[a, b] & (family[a] != family[b])
    i, j, a = i[keep], j[keep], a[keep]
    if not len(i):
        return
    before, fits = ev.log_odds, ev.log_lr
    # per (positive key, family): the strongest claim, exp(log LR) / K
    group = i * (int(family.max()) + 1) + family[a]
    order = np.lexsort((-fits[j], group))
    first = order[np.r_[True, group[order][1:] != group[order][:-1]]]
    claim_i, claim_f = i[first], family[a[first]]
    claim = np.exp(np.minimum(fits[j[first]], 700.0)) / others
    total = np.bincount(claim_i, claim, minlength=len(ev.keys))
    after = before.copy()
    doubted = np.unique(claim_i)
    after[doubted] = before[doubted] + np.log1p(total[doubted])
    # each negative key against the most doubted unrelated listing of its item
    order = np.lexsort((-before[i], j))
    firsts = order[np.r_[True, j[order][1:] != j[order][:-1]]]
    ka, kb = j[firsts], i[firsts]
    own = dict(zip((claim_i * (int(family.max()) + 1) + claim_f).tolist(), claim.tolist(),
                   strict=True))
    key_own = kb * (int(family.max()) + 1) + family[ev.keys[ka] // n_g]
    rest = total[kb] - np.array([own.get(k, 0.0) for k in key_own.tolist()])
    after[ka] = (before[kb] + fits[ka] - np.log(others)
                 - np.logaddexp(0.0, before[kb] + np.log1p(np.maximum(rest, 0.0))))
    ev.log_odds = after
    ev.prob = probability(after)
