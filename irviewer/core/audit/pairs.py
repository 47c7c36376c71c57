"""The audit's evidence on (positive set, item) pairs from every method's ranking and from
the gallery neighbours, calibrated against each set's own labels into the probability that a
label is wrong (:mod:`irviewer.core.audit.sets`), with the evidence of competing claims; the
two pair kinds built on it are :mod:`irviewer.core.audit.pair_kinds`.
"""

from __future__ import annotations

import numpy as np

from irviewer.core import neighbours as nb
from irviewer.core.audit.calibration import score
from irviewer.core.audit.claims import (
    competing_claims,
    families,
    other_list_claims,
    unrelated_sets,
)
from irviewer.core.audit.context import (
    Context,
    MethodView,
    PairScores,
    RowNeighbours,
    SetEvidence,
    isin_sorted,
)
from irviewer.core.audit.likeness import likeness_shares
from irviewer.core.audit.sets import probability, sorted_unique, unique_inverse
from irviewer.core.parallel import run_each

#: Gallery images in the reference sample ("far from everything"; the negatives' neighbour
#: shares when the rows are not the whole gallery).
SAMPLE = 256
#: An image whose mean cosine with its neighbours is below this share of the sample's is
#: "far from everything" (its closeness factor falls linearly to 0 below it); used by the
#: image-level label disagreement only.
FAR = 0.05


# -- evidence from the rankings --------------------------------------------------------------

def ranking_evidence(ctx: Context) -> None:
    """Collect, under every method, the share of each set's other positives every labelled
    item with ranking evidence outranks (the neighbours come next)."""
    ctx.set_evidence = run_each(lambda v: _rank_shares(ctx, v), ctx.views)


def _depth(ctx: Context, v: MethodView) -> int:
    return ctx.options.depth or v.ranking.top_indices.shape[1]


def _rank_shares(ctx: Context, v: MethodView) -> SetEvidence:
    """Return one method's :class:`SetEvidence` from its ranking alone: u per (set, item) for
    every positive and every negative within the stored lists of one of the set's queries."""
    sets, n_g = ctx.sets, ctx.n_g
    assert sets is not None
    stride = n_g + 2
    retrieved = v.pos_rank >= 0
    ranked = v.pos_q[retrieved] * stride + v.pos_rank[retrieved]  # sorted by (query, rank)
    above = (np.searchsorted(ranked, v.top_q * stride + v.top_rank)
             - np.searchsorted(ranked, v.top_q * stride))
    n_pos = v.n_pos[v.top_q]
    neg_share = np.where(n_pos > 0, (n_pos - above) / np.maximum(n_pos, 1), 0.0)
    starts = np.searchsorted(v.pos_q, v.pos_q)
    others = v.n_pos[v.pos_q] - 1
    below = others - (np.arange(len(v.pos_q)) - starts)  # positives after it, by rank
    pos_share = np.where(retrieved & (v.pos_rank < _depth(ctx, v)),
                         below / np.maximum(others, 1), 0.0)
    keys = np.concatenate([sets.of_query[v.top_q] * n_g + v.top_g,
                           sets.of_query[v.pos_q] * n_g + v.pos_g])
    shares = np.concatenate([neg_share, pos_share])
    positive = np.concatenate([np.zeros(len(v.top_q), bool), np.ones(len(v.pos_q), bool)])
    uniq, inverse, _ = unique_inverse(keys)
    total = np.bincount(inverse, shares, minlength=len(uniq))
    entries = np.bincount(inverse, minlength=len(uniq))
    is_pos = np.zeros(len(uniq), dtype=bool)
    is_pos[inverse[positive]] = True
    set_size = np.diff(sets.query_starts)[uniq // n_g]
    u = total / np.where(is_pos, np.maximum(entries, 1), set_size)
    return SetEvidence(uniq, is_pos, u, np.full(len(uniq), np.nan), np.zeros(len(uniq), bool))


# -- evidence from the gallery neighbours ---------------------------------------------------

def neighbour_pass(ctx: Context) -> None:
    """Find, under every method with vectors, the nearest gallery images of the whole gallery
    when that is cheap, else of the images with the strongest ranking evidence and of the
    positives of their sets, plus a random reference sample; then each item's share of
    positives of each set among its neighbours. One blocked pass per method."""
    opts = ctx.options
    views = ctx.with_vectors
    if not views:
        return
    active = np.flatnonzero(ctx.active)
    dim = views[0].ranking.descriptors.dim  # type: ignore[union-attr]
    rng = np.random.default_rng(opts.seed)
    sample = rng.choice(active, size=min(SAMPLE, len(active)), replace=False)
    whole = len(active) ** 2 * dim * len(views) <= opts.full_neighbour_flops
    items = active if whole else _candidates(ctx)
    rows = np.concatenate([items, sample])
    row_of = {g: i for i, g in enumerate(items.tolist())}
    measured = sorted_unique(rows)
    at = np.searchsorted(measured, rows)
    first = np.zeros(len(measured), dtype=np.int64)
    first[at[::-1]] = np.arange(len(rows))[::-1]  # a row of each measured image
    reference = isin_sorted(measured, active if whole else np.sort(sample))
    for v in views:  # one at a time: the multiply has every core
        unit = v.unit
        assert unit is not None
        found = nb.nearest(unit, rows, opts.neighbours)
        ctx.near.append(RowNeighbours(rows, found, row_of,
                                      slice(len(items), len(items) + len(sample))))
    run_each(lambda vn: neighbour_shares(ctx, ctx.set_evidence[ctx.views.index(vn[0])],
                                         measured, vn[1].found.indices[first], reference,
                                         whole), list(zip(views, ctx.near, strict=True)))
    if ctx.labels is None:  # lists, not image labels: how much each image looks like a set
        for v in views:  # one at a time: the multiply has every core
            assert v.unit is not None
            likeness_shares(ctx, ctx.set_evidence[ctx.views.index(v)], v.unit, measured,
                            reference)


def _candidates(ctx: Context) -> np.ndarray:
    """Return the gallery images to compare with their neighbours when the whole gallery is
    too large: the ``max_candidates`` whose labels are most probably wrong by the ranking
    evidence alone (the smallest probability over the methods, the item's most probable set)."""
    n_g, cap = ctx.n_g, ctx.options.max_candidates
    run_each(lambda ev: score(ctx, ev), ctx.set_evidence)  # by the ranking evidence alone
    keys = ctx.set_evidence[0].keys  # a pair the first method has no evidence on is no one's
    prob = np.min(np.stack([_prob_at(ctx, ev, keys, np.arange(len(keys)) if i == 0 else None)
                            for i, ev in enumerate(ctx.set_evidence)]), axis=0)
    if ctx.labels is not None:  # image-label sets: an image is a candidate as a negative
        prob = np.where(ctx.set_evidence[0].is_pos, 0.0, prob)
    take = min(len(keys), 16 * cap)  # the most probable pairs, enough for cap distinct images
    part = np.argpartition(-prob, take - 1)[:take] if take < len(keys) else np.arange(len(keys))
    if take < len(keys) and len(sorted_unique(keys[part] % n_g)) < cap:
        part = np.arange(len(keys))
    items = (keys % n_g)[part[np.lexsort((keys[part], -prob[part]))]]
    by_item = np.argsort(items, kind="stable")
    first = by_item[np.r_[True, items[by_item][1:] != items[by_item][:-1]]] if len(items) \
        else by_item
    ranked = items[np.sort(first)]  # each image once, at its most probable error
    n_items = len(sorted_unique(keys % n_g))
    if n_items > cap:
        ctx.notes.append(f"only the {cap:,} images with the strongest ranking evidence (of "
                         f"{n_items:,}) were compared with their gallery neighbours")
    return np.sort(ranked[:cap])


def neighbour_shares(ctx: Context, ev: SetEvidence, measured: np.ndarray,
                     neighbours: np.ndarray, reference: np.ndarray, whole: bool) -> None:
    """Add to ``ev`` the share v of each measured image's nearest labelled gallery images that
    are positives of a set, for every set with one of them among its neighbours, every set it
    is a positive of and every set it already has ranking evidence for (neighbours the set
    removes abstain); where the sets are lists, also x, the share of its nearest gallery images
    that are a positive of any list (where its neighbours are listed). ``reference`` marks the
    measured images whose shares stand for the sets' negatives (all of them when ``whole``)."""
    sets, n_g = ctx.sets, ctx.n_g
    assert sets is not None
    n_rows, n_sets = len(measured), sets.n_sets
    valid = neighbours >= 0
    row_of_flat = np.repeat(np.arange(n_rows), neighbours.shape[1])[valid.ravel()]
    flat = neighbours[valid]
    which, s_pos = sets.sets_of(sets.pos_keys, flat)
    hit_keys, _, hit_n = unique_inverse(s_pos * n_rows + row_of_flat[which])
    which, s_rem = sets.sets_of(sets.rem_keys, flat)
    abstain_keys, _, abstain_n = unique_inverse(s_rem * n_rows + row_of_flat[which])
    member_row, member_set = sets.sets_of(sets.pos_keys, measured)
    known_g = ev.keys % n_g
    at = np.minimum(np.searchsorted(measured, known_g), len(measured) - 1)
    known = measured[at] == known_g  # ranking evidence on a measured image
    pair = sorted_unique(np.concatenate([hit_keys, member_set * n_rows + member_row,
                                         (ev.keys[known] // n_g) * n_rows + at[known]]))
    removed_row, removed_set = sets.sets_of(sets.rem_keys, measured)
    pair = pair[~isin_sorted(pair, np.sort(removed_set * n_rows + removed_row))]
    s, r = pair // n_rows, pair % n_rows
    n_hit = _lookup(hit_keys, hit_n, pair)
    n_abstain = _lookup(abstain_keys, abstain_n, pair)
    labelled = valid.sum(axis=1)[r] - n_abstain
    v = np.where(labelled > 0, n_hit / np.maximum(labelled, 1), np.nan)
    keep = np.isfinite(v)
    new_keys = s[keep] * n_g + measured[r[keep]]
    order = np.argsort(new_keys)
    new_keys, new_v = new_keys[order], v[keep][order]
    new_ref = reference[r[keep]][order]
    # merge with the ranking evidence's keys
    keys = sorted_unique(np.concatenate([ev.keys, new_keys]))
    old_at, new_at = np.searchsorted(keys, ev.keys), np.searchsorted(keys, new_keys)
    # a negative without ranking evidence is beyond every list (u = 0); a positive without it
    # is a member of the set no query labels (a query's own image): u unknown
    is_pos = isin_sorted(keys, sets.pos_keys)
    u = np.where(is_pos, np.nan, 0.0)
    u[old_at] = ev.u
    vv = np.full(len(keys), np.nan)
    vv[new_at] = new_v
    ref = np.zeros(len(keys), dtype=bool)
    ref[new_at] = new_ref
    ev.keys, ev.u, ev.v, ev.v_ref = keys, u, vv, ref
    ev.is_pos = is_pos
    if ctx.labels is None:
        ev.x, ev.x_ref = listed_share(ctx, ev, measured, neighbours, reference)
    ref_rows = measured[reference]
    in_pos = np.bincount(sets.sets_of(sets.pos_keys, ref_rows)[1], minlength=n_sets)
    in_rem = np.bincount(sets.sets_of(sets.rem_keys, ref_rows)[1], minlength=n_sets)
    ev.ref_neg = np.maximum(len(ref_rows) - in_pos - in_rem, 0)
    ev.whole = whole


def listed_share(ctx: Context, ev: SetEvidence, measured: np.ndarray, neighbours: np.ndarray,
                 reference: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Return x of every key of ``ev``: the share of its item's nearest gallery images that are
    a positive of some list (NaN where the item was not measured), and per set the x of its
    negatives among the reference rows. A photograph unrelated to every list has neighbours
    no list names; an image of a landmark has neighbours some list names, its own or
    another's."""
    sets, n_g = ctx.sets, ctx.n_g
    assert sets is not None
    listed = np.zeros(n_g, dtype=bool)
    listed[sets.pos_keys % n_g] = True
    valid = neighbours >= 0
    share = ((listed[np.maximum(neighbours, 0)] & valid).sum(axis=1)
             / np.maximum(valid.sum(axis=1), 1))
    share = np.where(valid.any(axis=1), share, np.nan)
    g = ev.keys % n_g
    at = np.minimum(np.searchsorted(measured, g), len(measured) - 1)
    ref_rows, ref_share = measured[reference], share[reference]
    per_set = []
    for s in range(sets.n_sets):
        keys = s * n_g + ref_rows
        negative = ~isin_sorted(keys, sets.pos_keys) & ~isin_sorted(keys, sets.rem_keys)
        per_set.append(ref_share[negative & np.isfinite(ref_share)])
    return np.where(measured[at] == g, share[at], np.nan), per_set


def _lookup(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Return the value of each wanted key in sorted ``keys`` (0 where it is absent)."""
    if not len(keys):
        return np.zeros(len(wanted), dtype=values.dtype)
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return np.where(keys[at] == wanted, values[at], 0)


# -- competing claims and scores ----------------------------------------------------------

def _prob_at(ctx: Context, ev: SetEvidence, keys: np.ndarray,
             at: np.ndarray | None = None) -> np.ndarray:
    """Return one method's probability that each (set, item) label is wrong (the bulk's for a
    negative without evidence); ``at``: the keys' positions in ``ev`` when known."""
    assert ev.prob is not None and ev.bulk_prob is not None
    if at is None:
        at = ev.find(keys)
    return np.where(at >= 0, ev.prob[np.maximum(at, 0)], ev.bulk_prob[keys // ctx.n_g])


def _log_odds_at(ctx: Context, ev: SetEvidence, keys: np.ndarray,
                 at: np.ndarray) -> np.ndarray:
    """Return one method's log odds that each (set, item) label is wrong (the bulk's for a
    negative without evidence); ``at``: the keys' positions in ``ev``."""
    assert ev.log_odds is not None and ev.bulk_log_odds is not None
    return np.where(at >= 0, ev.log_odds[np.maximum(at, 0)], ev.bulk_log_odds[keys // ctx.n_g])


def set_scores(ctx: Context) -> None:
    """Score every method's evidence with the claims of unrelated lists, where the sets are
    lists a second time with the positives the first pass doubts left out of their sets'
    histograms (two images wrongly put into one list would vouch for each other), and keep,
    per (set, item), the smallest probability over the methods that the label is wrong
    (:class:`PairScores`)."""
    run_each(lambda ev: score(ctx, ev), ctx.set_evidence)
    assert ctx.sets is not None
    ctx.family = families(ctx.sets)
    apart = unrelated_sets(ctx.sets) if ctx.labels is None else np.zeros((0, 0), bool)
    known: dict[tuple[int, int], bool] = {}
    for ev in ctx.set_evidence:
        competing_claims(ctx, ev, known)
        other_list_claims(ctx, ev, apart)
    if ctx.labels is None:  # again, the positives the first pass doubts left out
        for ev in ctx.set_evidence:
            assert ev.prob is not None
            ev.doubted = ev.is_pos & (ev.prob >= 0.5)
        ctx.rivals.clear()
        run_each(lambda ev: score(ctx, ev), ctx.set_evidence)
        for ev in ctx.set_evidence:
            competing_claims(ctx, ev, known)
            other_list_claims(ctx, ev, apart)
    keys = sorted_unique(np.concatenate([ev.keys for ev in ctx.set_evidence]))
    assert ctx.sets is not None
    at = tuple(ev.find_in(keys) for ev in ctx.set_evidence)
    log_odds = np.min(np.stack([_log_odds_at(ctx, ev, keys, a)
                                for ev, a in zip(ctx.set_evidence, at, strict=True)]), axis=0)
    ctx.pair_scores = PairScores(keys, isin_sorted(keys, ctx.sets.pos_keys),
                                 probability(log_odds), at, log_odds)


def closeness(near: RowNeighbours, k: int) -> np.ndarray:
    """Return, per row, min(1, p / FAR), p = the percentile of the row's mean cosine with its
    ``k`` nearest gallery images among the reference sample's (near 0: far from everything)."""
    sims = np.where(near.found.indices[:, :k] >= 0, near.found.sims[:, :k], np.nan)
    mean_sim = np.nanmean(sims, axis=1)
    reference = np.sort(mean_sim[near.sample])
    return np.minimum(1.0, np.searchsorted(reference, mean_sim) / max(len(reference), 1) / FAR)
