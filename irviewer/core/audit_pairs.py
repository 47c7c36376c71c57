"""The audit's (query, item) detectors: ranking evidence under every method, the gallery
neighbours of the items it points at, and the two pair kinds (see :mod:`irviewer.core.audit`
for the score formulas).
"""

from __future__ import annotations

import numpy as np

from irviewer.core import neighbours as nb
from irviewer.core.audit import NEG_POS, POS_NEG, Suspect, rank_phrase, under
from irviewer.core.audit_context import Context, PairEvidence, RowNeighbours, intersect
from irviewer.core.corrections import NEGATIVE, Correction

#: Gallery images in the reference sample for "far from everything".
SAMPLE = 256
#: An image whose mean cosine with its neighbours is below this share of the sample's is
#: "far from everything" (its closeness factor falls linearly to 0 below it).
FAR = 0.05
#: Distinct positive sets (queries) an image is compared with, at most.
THRESHOLDS = 8


def ranking_evidence(ctx: Context) -> None:
    """Collect, under every method, the negatives that outrank most of their query's positives
    and the positives ranked below most negatives (:class:`PairEvidence`)."""
    n_g, floor = ctx.n_g, ctx.options.min_score ** 2
    neg_tables, count_tables, pos_tables, share_tables = [], [], [], []
    for v in ctx.views:
        stride = n_g + 2
        retrieved = v.pos_rank >= 0
        pkeys = v.pos_q[retrieved] * stride + v.pos_rank[retrieved]  # sorted by (q, rank)
        above = (np.searchsorted(pkeys, v.top_q * stride + v.top_rank)
                 - np.searchsorted(pkeys, v.top_q * stride))
        npos = v.n_pos[v.top_q]
        a = np.minimum(1.0, 2.0 * (npos - above) / (npos + 1.0))
        keep = (npos > 0) & (a >= floor)
        keys = v.top_q[keep] * n_g + v.top_g[keep]
        order = np.argsort(keys)
        neg_tables.append((keys[order], a[keep][order]))
        count_tables.append((keys[order], (npos - above)[keep][order]))
        starts = np.searchsorted(v.pos_q, v.pos_q)
        before = np.arange(len(v.pos_q)) - starts  # positives ranked above this one
        share = (v.pos_rank - before) / v.n_neg[v.pos_q]
        b = np.where(retrieved, np.minimum(1.0, 2.0 * share), 1.0)
        keep = b >= floor
        keys = v.pos_q[keep] * n_g + v.pos_g[keep]
        order = np.argsort(keys)
        pos_tables.append((keys[order], np.clip(b[keep][order], 0.0, 1.0)))
        share_tables.append((keys[order], np.where(retrieved, share, 1.0)[keep][order]))
    nk, na = intersect(neg_tables)
    _, counts = intersect(count_tables)
    pk, pb = intersect(pos_tables)
    _, shares = intersect(share_tables)
    counts = counts.astype(np.int64)
    ctx.evidence = PairEvidence(
        nk // n_g, nk % n_g, na.min(axis=1) if len(nk) else np.zeros(0),
        counts.min(axis=1) if len(nk) else np.zeros(0, np.int64),
        (counts == counts[:, :1]).all(axis=1) if len(nk) else np.zeros(0, bool),
        pk // n_g, pk % n_g, pb.min(axis=1) if len(pk) else np.zeros(0),
        shares.min(axis=1) if len(pk) else np.zeros(0))


def neighbour_pass(ctx: Context) -> None:
    """Find, under every method with vectors, the nearest gallery images of every item the
    ranking evidence points at (the whole gallery when that is cheap),
    plus a random reference sample; for positives, also count the gallery images more like
    the item than its most similar other positive. One blocked pass per method."""
    ev, opts = ctx.evidence, ctx.options
    assert ev is not None
    views = ctx.with_vectors
    if not views:
        return
    active = np.flatnonzero(ctx.active)
    dim = views[0].ranking.descriptors.dim  # type: ignore[union-attr]
    strength: dict[int, float] = {}
    for g, s in zip((*ev.neg_g.tolist(), *ev.pos_g.tolist()),
                    (*ev.neg_a.tolist(), *ev.pos_b.tolist()), strict=True):
        strength[g] = max(strength.get(g, 0.0), s)
    if len(active) ** 2 * dim * len(views) <= opts.full_neighbour_flops:
        items = active
    else:
        items = np.array(sorted(strength, key=lambda g: (-strength[g], g))
                         [:opts.max_candidates], dtype=np.int64)
        if len(strength) > len(items):
            ctx.notes.append(f"only the {len(items):,} images with the strongest ranking "
                             f"evidence (of {len(strength):,}) were compared with their "
                             "gallery neighbours")
    rng = np.random.default_rng(opts.seed)
    sample = rng.choice(active, size=min(SAMPLE, len(active)), replace=False)
    rows = np.concatenate([items, sample])
    row_of = {g: i for i, g in enumerate(items.tolist())}
    for v in views:
        unit = v.unit
        assert unit is not None
        slots: dict[int, list[float]] = {}
        pair_at = np.full((len(ev.pos_q), 2), -1, dtype=np.int64)
        for j in np.argsort(-ev.pos_b, kind="stable").tolist():
            q, g = int(ev.pos_q[j]), int(ev.pos_g[j])
            row = row_of.get(g)
            others = other_positives(ctx, q, g)
            if row is None or not len(others):
                continue
            t = float((unit.rows(others) @ unit.rows(np.array([g]))[0]).max())
            taken = slots.setdefault(row, [])
            if t not in taken:
                if len(taken) >= THRESHOLDS:
                    continue
                taken.append(t)
            pair_at[j] = (row, taken.index(t))
        width = max((len(t) for t in slots.values()), default=0)
        thr = np.full((len(rows), max(width, 1)), np.inf, dtype=np.float32)
        for row, taken in slots.items():
            thr[row, :len(taken)] = taken
        found = nb.nearest(unit, rows, opts.neighbours, thr if width else None)
        ctx.near.append(RowNeighbours(rows, found, row_of, pair_at,
                                      slice(len(items), len(items) + len(sample))))


def other_positives(ctx: Context, q: int, g: int) -> np.ndarray:
    """Return the gallery images that share query ``q``'s relevance, ``g`` left out: the same
    image label (image-label families), else the query's positives (its own image too)."""
    if ctx.labels is not None and ctx.query_labels is not None:
        same = ctx.members(ctx.query_labels[q])
    else:
        lo = np.searchsorted(ctx.pos_keys, q * ctx.n_g)
        hi = np.searchsorted(ctx.pos_keys, (q + 1) * ctx.n_g)
        same = ctx.pos_keys[lo:hi] - q * ctx.n_g
    return same[same != g]


def positive_share(ctx: Context, near: RowNeighbours, q: int, g: int) -> float | None:
    """Return the share of ``g``'s nearest gallery images that are positives of query ``q``
    (same label in image-label sets), over min(k, positives) neighbours; None if unmeasured."""
    row = near.item_row.get(g)
    if row is None:
        return None
    nn = near.found.indices[row]
    nn = nn[nn >= 0]
    if ctx.labels is not None and ctx.query_labels is not None:
        hits = ctx.labels[nn] == ctx.query_labels[q]
        n_pos = ctx.label_sizes.get(ctx.query_labels[q], 0)
    else:
        hits = np.isin(q * ctx.n_g + nn, ctx.pos_keys)
        n_pos = int(ctx.views[0].n_pos[q]) + 1
    k = max(1, min(len(nn), n_pos))
    return float(np.count_nonzero(hits[:k])) / k


def closeness(near: RowNeighbours, k: int) -> np.ndarray:
    """Return, per row, min(1, p / FAR), p = the percentile of the row's mean cosine with its
    ``k`` nearest gallery images among the reference sample's (near 0: far from everything)."""
    sims = np.where(near.found.indices[:, :k] >= 0, near.found.sims[:, :k], np.nan)
    mean_sim = np.nanmean(sims, axis=1)
    reference = np.sort(mean_sim[near.sample])
    return np.minimum(1.0, np.searchsorted(reference, mean_sim) / max(len(reference), 1) / FAR)


def negatives_looking_positive(ctx: Context) -> None:
    """Suspects labelled negative that every method ranks above most of the query's positives
    and whose gallery neighbours are the query's positives: score sqrt(a * l)."""
    ev = ctx.evidence
    assert ev is not None
    for j in range(len(ev.neg_q)):
        q, g, a = int(ev.neg_q[j]), int(ev.neg_g[j]), float(ev.neg_a[j])
        shares = [positive_share(ctx, near, q, g) for near in ctx.near]
        measured = [s for s in shares if s is not None]
        if ctx.near and not measured:
            continue  # beyond the candidate cap: not compared with its neighbours
        like = min(measured) if measured else 1.0
        score = float(np.sqrt(a * like))
        if score < ctx.options.min_score:
            continue
        query = ctx.dataset.queries[q]
        ranks = ctx.ranks(q, g)
        n_pos = int(ctx.views[0].n_pos[q])
        at_least = "" if ev.neg_same[j] else "at least "
        evidence = (f"ranks {rank_phrase([r for _, r in ranks])} for {query.name} "
                    f"{under(ctx.n_methods)}, above {at_least}{int(ev.neg_outranked[j])} of "
                    f"its {n_pos} positives")
        if measured:
            evidence += (f", and {100 * like:.0f}% of its nearest gallery images are "
                         "positives of the query")
        evidence += ", yet is labelled negative"
        if ctx.labels is not None and ctx.query_labels is not None:
            suggested, labelled = ctx.query_labels[q], str(ctx.labels[g])
            correction = ctx.relabel(g, suggested)
            evidence += f" (its label is {labelled}, the query's {suggested})"
        else:
            labelled, suggested = NEGATIVE, ctx.protocol.positive[0]
            correction = Correction(query.name, ctx.dataset.gallery[g], suggested)
        ctx.suspects.append(Suspect(NEG_POS, float(score), query.name, ctx.dataset.gallery[g],
                                    labelled, suggested, evidence, ctx.n_methods,
                                    ctx.n_methods, g, q, ranks, correction))


def positives_looking_negative(ctx: Context) -> None:
    """Suspects labelled positive that every method ranks below most negatives and that are
    unlike the query's other positives: score sqrt(b * u * c), u = log(1 + r) / log(n), c the
    item's :func:`closeness` (a view far from everything is hard, not mislabelled)."""
    ev = ctx.evidence
    assert ev is not None
    closes = [closeness(near, ctx.options.neighbours) for near in ctx.near]
    for j in range(len(ev.pos_q)):
        q, g, b = int(ev.pos_q[j]), int(ev.pos_g[j]), float(ev.pos_b[j])
        likeness, closer = 1.0, -1
        measured = False
        for near, close in zip(ctx.near, closes, strict=True):
            row, col = (int(x) for x in near.pair_at[j])
            if row < 0:
                continue
            measured = True
            likeness = min(likeness, float(close[row]))
            n_act = int(np.count_nonzero(ctx.active))
            above = int(near.found.above[row, col])
            likeness = min(likeness, float(np.log1p(above) / np.log1p(max(n_act - 1, 1))))
            closer = above if closer < 0 else min(closer, above)
        if ctx.near and not measured:
            continue  # beyond the candidate cap: not compared with its positive set
        score = float(np.sqrt(b * likeness))
        if score < ctx.options.min_score:
            continue
        query = ctx.dataset.queries[q]
        ranks = ctx.ranks(q, g)
        group = ctx.group_of(q, g)
        evidence = (f"labelled {group} for {query.name} but ranks "
                    f"{rank_phrase([r for _, r in ranks])} {under(ctx.n_methods)}, below "
                    f"{100 * float(ev.pos_share[j]):.0f}% of its negatives")
        if closer >= 0:
            evidence += (f", and {closer:,} gallery images are more like it than its most "
                         "similar other positive")
        labelled = str(ctx.labels[g]) if ctx.labels is not None else group
        ctx.suspects.append(Suspect(POS_NEG, float(score), query.name, ctx.dataset.gallery[g],
                                    labelled, NEGATIVE, evidence, ctx.n_methods, ctx.n_methods,
                                    g, q, ranks,
                                    Correction(query.name, ctx.dataset.gallery[g], NEGATIVE)))
