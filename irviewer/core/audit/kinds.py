"""The audit's image-level and query-level detectors: label disagreement with the gallery
neighbours, near-duplicates, queries whose ground truth looks wrong, hubs; and the stages in
order (see :mod:`irviewer.core.audit` for the kinds and their score formulas).
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np

from irviewer.core import neighbours as nb
from irviewer.core.audit.context import Context, MethodView, intersect, isin_sorted
from irviewer.core.audit.pair_kinds import pair_suspects
from irviewer.core.audit.pairs import closeness, neighbour_pass, ranking_evidence, set_scores
from irviewer.core.audit.suspects import (
    DUPLICATE,
    HUB,
    LABEL,
    NEG_POS,
    POS_NEG,
    QUERY,
    Suspect,
    rank_phrase,
    under,
)
from irviewer.core.corrections import NEGATIVE, Correction

#: A query's positives whose mutual cosines are averaged for its coherence: the first this
#: many (in gallery order), so one query's Gram matrix stays at most 200 x 200
#: (``docs/audit.md``, "Where every constant comes from").
COHERENCE_POSITIVES = 200
#: Random pairs of active gallery images whose mean cosine is "unrelated images" in t.
RANDOM_PAIRS = 2000
#: A query's positives are reported as incoherent when, under every method, t (their mean
#: cosine's place between random pairs, 0, and the median query, 1) is below this.
INCOHERENT_T = 0.25

# -- image-level label disagreement ------------------------------------------------------

def label_disagreement(ctx: Context) -> None:
    """Images whose nearest gallery neighbours carry one other label under every method
    (image-label families); folds the pair suspects of the same image into one."""
    if ctx.labels is None or not ctx.near:
        return
    opts = ctx.options
    active = np.flatnonzero(ctx.active)
    label_ids, inverse = np.unique(ctx.labels, return_inverse=True)
    sizes = np.bincount(inverse[active], minlength=len(label_ids))
    k = int(np.clip(np.median(sizes[sizes > 0]) - 1, 3, opts.neighbours))
    cands = np.array(sorted(ctx.near[0].item_row), dtype=np.int64)
    per_method = []
    for near in ctx.near:
        rows = np.array([near.item_row[g] for g in cands.tolist()], dtype=np.int64)
        per_method.append((near.found.indices[rows, :k], closeness(near, k)[rows]))
    pair_best: dict[tuple[int, str], Suspect] = {}
    for s in ctx.suspects:
        if s.kind == NEG_POS and s.suggested is not None:
            key = (s.item_index, s.suggested)
            if key not in pair_best or s.score > pair_best[key].score:
                pair_best[key] = s
    found_items: set[int] = set()
    for j, g in enumerate(cands.tolist()):
        own = ctx.labels[g]
        scores, counts, choice = [], [], None
        for neighbours, close in per_method:
            labs = ctx.labels[neighbours[j][neighbours[j] >= 0]]
            tally = Counter(lab for lab in labs.tolist() if lab != own)
            if not tally:
                choice = None
                break
            lab, n = tally.most_common(1)[0]
            if (choice is not None and lab != choice) or n <= int(np.sum(labs == own)):
                choice = None
                break
            choice = lab
            own_n = int(np.sum(labs == own))
            scores.append(n / (n + own_n) * min(1.0, 2 * n / k) * close[j])
            counts.append(n)
        if choice is None:
            continue
        s_image = min(scores)
        pair = pair_best.get((g, choice))
        score = 1 - (1 - s_image) * (1 - pair.score) if pair is not None else s_image
        if score < opts.min_score:
            continue
        n_m = len(ctx.with_vectors)
        got = counts[0] if len(set(counts)) == 1 else " and ".join(map(str, counts))
        evidence = (f"labelled {own}, but {got} of its {k} nearest gallery images carry "
                    f"{choice} {under(n_m)}")
        if pair is not None:
            evidence += f"; {pair.evidence.split(' yet ')[0].rstrip(',; ')}"
        if pair is not None:
            context, ranks = pair.context_query, pair.ranks
        else:  # shown in a query of the suggested label, where it would be a positive
            context = next((q for q, lab in enumerate(ctx.query_labels or ()) if lab == choice),
                           -1)
            ranks = ctx.ranks(context, g) if context >= 0 else ()
        found_items.add(g)
        ctx.suspects.append(Suspect(LABEL, float(score), None, ctx.dataset.gallery[g], own,
                                    choice, evidence, n_m, ctx.n_methods, g, context, ranks,
                                    ctx.relabel(g, choice)))
    ctx.suspects = [s for s in ctx.suspects
                    if s.kind == LABEL or s.item_index not in found_items]


# -- near-duplicates ---------------------------------------------------------------------

def file_digests(paths: Mapping[int, str | os.PathLike[str]]) -> dict[int, str]:
    """Return gallery index -> sha256 of the image bytes, only for non-empty files that share
    their size with another file (the only ones that can be identical)."""
    sizes: dict[int, list[int]] = {}
    for g, p in paths.items():
        try:
            size = os.stat(p).st_size
        except OSError:
            continue
        if size > 0:
            sizes.setdefault(size, []).append(g)
    out: dict[int, str] = {}
    for group in sizes.values():
        if len(group) < 2:
            continue
        for g in group:
            try:
                out[g] = hashlib.sha256(Path(paths[g]).read_bytes()).hexdigest()
            except OSError:
                continue
    return out


def gallery_files(ctx: Context) -> dict[int, str | os.PathLike[str]]:
    """Return gallery index -> image file of every active gallery image with a file (as text
    where the dataset's mapping gives it, :meth:`~irviewer.formats.base.ImageFiles.fspath`)."""
    image_paths = ctx.dataset.image_paths
    fspath = getattr(image_paths, "fspath", None)
    get = fspath if callable(fspath) else image_paths.__getitem__
    gallery = ctx.dataset.gallery
    return {g: get(gallery[g]) for g in np.flatnonzero(ctx.active).tolist()
            if gallery[g] in image_paths}


def near_duplicates(ctx: Context) -> None:
    """Near-identical gallery images (descriptors under every method, or identical bytes) and
    gallery images near-identical to a query, whose labels disagree."""
    opts = ctx.options
    pairs: dict[tuple[int, int], tuple[float, str]] = {}
    views = ctx.with_vectors
    if views:
        first = views[0].unit
        assert first is not None
        a, b, cos, skipped = nb.near_identical_pairs(first, opts.duplicate_cosine,
                                                     seed=opts.seed)
        for v in views[1:]:
            assert v.unit is not None
            c2 = nb.pair_cosines(v.unit, a, b)
            keep = c2 >= opts.duplicate_cosine
            a, b, cos = a[keep], b[keep], np.minimum(cos[keep], c2[keep])
        if skipped:
            ctx.notes.append(f"near-duplicates: {skipped} hash buckets too dense to check "
                             "were skipped")
        for x, y, c in zip(a.tolist(), b.tolist(), cos.tolist(), strict=True):
            pairs[(x, y)] = (0.8 + 0.2 * (c - opts.duplicate_cosine)
                             / max(1 - opts.duplicate_cosine, 1e-9),
                             f"near-identical to {{other}} (cosine {c:.3f} {under(len(views))})")
    by_digest: dict[str, list[int]] = {}
    for g, digest in file_digests(gallery_files(ctx)).items():
        by_digest.setdefault(digest, []).append(g)
    for group in by_digest.values():
        for i, x in enumerate(group):
            for y in group[i + 1:]:
                pairs[(min(x, y), max(x, y))] = (1.0, "has the same image bytes as {other}")
    for (x, y), (score, text) in sorted(pairs.items()):
        _duplicate_conflict(ctx, x, y, score, text)
    _query_duplicates(ctx)


def _duplicate_conflict(ctx: Context, x: int, y: int, score: float, text: str) -> None:
    gallery = ctx.dataset.gallery
    n_m = len(ctx.with_vectors) if "cosine" in text else ctx.n_methods
    if ctx.labels is not None:
        if ctx.labels[x] == ctx.labels[y]:
            return
        flagged = {s.item_index for s in ctx.suspects}
        wrong, right = (x, y) if x in flagged and y not in flagged else (y, x)
        sure = (wrong in flagged) != (right in flagged)
        evidence = (text.format(other=gallery[right]) + f", which is labelled "
                    f"{ctx.labels[right]}, while this is labelled {ctx.labels[wrong]}")
        if not sure:
            evidence += "; the rankings do not tell which label is right"
        ctx.suspects.append(Suspect(DUPLICATE, score, None, gallery[wrong],
                                    str(ctx.labels[wrong]), str(ctx.labels[right]), evidence,
                                    n_m, ctx.n_methods, wrong, -1, (),
                                    ctx.relabel(wrong, str(ctx.labels[right]))))
        return
    n_g = ctx.n_g
    for q in range(ctx.dataset.n_queries):
        if ctx.selves[q] in (x, y):
            continue
        roles = []
        for g in (x, y):
            key = np.array([q * n_g + g])
            roles.append("pos" if isin_sorted(key, ctx.pos_keys)[0] else
                         "removed" if isin_sorted(key, ctx.removed_keys)[0] else "neg")
        if sorted(roles) != ["neg", "pos"]:
            continue
        pos, neg = (x, y) if roles[0] == "pos" else (y, x)
        group = ctx.group_of(q, pos)
        name = ctx.dataset.queries[q].name
        evidence = (text.format(other=gallery[pos]) + f", which is {group} for {name}, while "
                    "this is labelled negative")
        ctx.suspects.append(Suspect(DUPLICATE, score, name, gallery[neg], NEGATIVE, group,
                                    evidence, n_m, ctx.n_methods, neg, q, ctx.ranks(q, neg),
                                    Correction(name, gallery[neg], group)))


def _query_duplicates(ctx: Context) -> None:
    """Negatives whose cosine with the query itself is near 1 under every descriptor method."""
    views = ctx.with_vectors
    if not views:
        return
    t = ctx.options.duplicate_cosine
    tables = []
    for v in views:
        close = v.top_score >= t
        keys = v.top_q[close] * ctx.n_g + v.top_g[close]
        order = np.argsort(keys)
        tables.append((keys[order], v.top_score[close][order]))
    keys, cos = intersect(tables)
    seen = {(s.context_query, s.item_index) for s in ctx.suspects if s.kind == DUPLICATE}
    for key, c in zip(keys.tolist(), cos.min(axis=1).tolist() if len(keys) else [],
                      strict=True):
        q, g = divmod(key, ctx.n_g)
        if (q, g) in seen:
            continue
        query = ctx.dataset.queries[q]
        score = 0.8 + 0.2 * (c - t) / max(1 - t, 1e-9)
        evidence = (f"near-identical to the query {query.name} (cosine {c:.3f} "
                    f"{under(len(views))}) yet labelled negative for it")
        if ctx.labels is not None and ctx.query_labels is not None:
            labelled, suggested = str(ctx.labels[g]), ctx.query_labels[q]
            correction = ctx.relabel(g, suggested)
        else:
            labelled, suggested = NEGATIVE, ctx.protocol.positive[0]
            correction = Correction(query.name, ctx.dataset.gallery[g], suggested)
        ctx.suspects = [s for s in ctx.suspects
                        if not (s.kind == NEG_POS and s.context_query == q and s.item_index == g)]
        ctx.suspects.append(Suspect(DUPLICATE, float(score), query.name, ctx.dataset.gallery[g],
                                    labelled, suggested, evidence, len(views), ctx.n_methods,
                                    g, q, ctx.ranks(q, g), correction))


# -- queries whose ground truth looks wrong ----------------------------------------------

def suspicious_queries(ctx: Context) -> None:
    """Queries with no positive in any method's top N, and queries whose positives are
    mutually dissimilar (under every descriptor method)."""
    opts = ctx.options
    n = opts.query_top
    first = []
    for v in ctx.views:
        starts = np.searchsorted(v.pos_q, np.arange(ctx.dataset.n_queries))
        has = v.n_pos > 0
        r = np.full(ctx.dataset.n_queries, -2, dtype=np.int64)
        r[has] = v.pos_rank[starts[has]]
        first.append(r)
    first_arr = np.stack(first, axis=1)
    deep = np.where(first_arr < 0, np.inf, first_arr)
    for q in np.flatnonzero((first_arr[:, 0] != -2) & (deep >= n).all(axis=1)).tolist():
        f = deep[q]
        score = float(np.min(1 - n / (f + 1)))
        if score < opts.min_score:
            continue
        query = ctx.dataset.queries[q]
        words = [int(x) + 1 if np.isfinite(x) else None for x in f]
        evidence = (f"no method finds any of its {int(ctx.views[0].n_pos[q])} positives in "
                    f"its top {n}: the first ranks {rank_phrase(words)} "
                    f"{under(ctx.n_methods)}")
        ctx.suspects.append(Suspect(QUERY, score, query.name, query.image, "ground truth",
                                    None, evidence, ctx.n_methods, ctx.n_methods,
                                    int(ctx.selves[q]), q,
                                    tuple((v.name, w) for v, w in zip(ctx.views, words,
                                                                      strict=True))))
    _incoherent_positives(ctx)


def _coherence(v: MethodView, positives: list[np.ndarray], a: np.ndarray,
               b: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Return one method's (each query's mean pairwise cosine of its positives, NaN for
    fewer than 3; the median of those; the mean cosine of the random pairs (a, b))."""
    assert v.unit is not None
    base = float(np.mean(nb.pair_cosines(v.unit, a, b)))
    coherence = np.full(len(positives), np.nan)
    cache: dict[bytes, float] = {}
    for q, p in enumerate(positives):
        if len(p) < 3:
            continue
        key = p.tobytes()
        if key not in cache:
            vecs = v.unit.rows(p)
            gram = vecs @ vecs.T
            cache[key] = float((gram.sum() - np.trace(gram)) / (len(p) * (len(p) - 1)))
        coherence[q] = cache[key]
    typical = float(np.nanmedian(coherence)) if np.isfinite(coherence).any() else np.nan
    return coherence, typical, base


def _incoherent_positives(ctx: Context) -> None:
    views = ctx.with_vectors
    if not views:
        return
    rng = np.random.default_rng(ctx.options.seed)
    active = np.flatnonzero(ctx.active)
    n_q = ctx.dataset.n_queries
    positives = [(ctx.pos_keys[np.searchsorted(ctx.pos_keys, q * ctx.n_g):
                               np.searchsorted(ctx.pos_keys, (q + 1) * ctx.n_g)] - q * ctx.n_g)
                 for q in range(n_q)]
    counts = [len(p) for p in positives]
    positives = [p[:COHERENCE_POSITIVES] for p in positives]
    pairs = [(rng.choice(active, RANDOM_PAIRS), rng.choice(active, RANDOM_PAIRS)) for _ in views]
    # one method at a time: each multiply has both cores (two at once fight over them)
    stats = [_coherence(v, positives, a, b) for v, (a, b) in zip(views, pairs, strict=True)]
    t = np.stack([(coherence - base) / max(typical - base, 1e-9)
                  for coherence, typical, base in stats], axis=1)
    for q in np.flatnonzero(np.isfinite(t).all(axis=1) & (t < INCOHERENT_T).all(axis=1)).tolist():
        score = float(np.clip(np.min(1 - t[q]), 0.0, 1.0))
        if score < ctx.options.min_score:
            continue
        coherence, typical, base = stats[0]
        query = ctx.dataset.queries[q]
        among = ("them" if counts[q] <= COHERENCE_POSITIVES
                 else f"the first {COHERENCE_POSITIVES} of them")
        evidence = (f"its {counts[q]} positives are mutually dissimilar: mean cosine "
                    f"{coherence[q]:.2f} between {among}, against {typical:.2f} for a typical "
                    f"query and {base:.2f} for random pairs (first method)")
        ctx.suspects.append(Suspect(QUERY, score, query.name, query.image, "ground truth",
                                    None, evidence, len(views), ctx.n_methods,
                                    int(ctx.selves[q]), q, ()))


# -- hubs --------------------------------------------------------------------------------

def hubs(ctx: Context) -> None:
    """Gallery images in the top ``hub_top`` of very many queries they are negative for
    (informational: score at most 0.5, no correction)."""
    opts = ctx.options
    counts = []
    for v in ctx.views:
        top = v.top_rank < opts.hub_top
        counts.append(np.bincount(v.top_g[top], minlength=ctx.n_g))
    least = np.min(np.stack(counts), axis=0)
    n_act = int(ctx.active.sum())
    expected = opts.hub_top * ctx.dataset.n_queries / max(n_act, 1)
    for g in np.flatnonzero(least >= max(5.0, opts.hub_factor * expected)).tolist():
        n = int(least[g])
        labelled = str(ctx.labels[g]) if ctx.labels is not None else "-"
        evidence = (f"in the top {opts.hub_top} of {n} queries it is not relevant to "
                    f"{under(ctx.n_methods)} (about {expected:.1f} expected by chance)")
        ctx.suspects.append(Suspect(HUB, 0.5 * (1 - expected / n), None,
                                    ctx.dataset.gallery[g], labelled, None, evidence,
                                    ctx.n_methods, ctx.n_methods, g, -1, ()))


# -- one finding per image in image-label families ---------------------------------------

def merge(ctx: Context) -> None:
    """Keep, per image and kind, the strongest pair finding, naming every query that shows
    the same in ``queries`` and saying how many more there are (image-label families, where
    one relabel fixes them all)."""
    if ctx.labels is None:
        return
    groups: dict[tuple[int, str], list[Suspect]] = {}
    rest = []
    for s in ctx.suspects:
        if s.kind in (NEG_POS, POS_NEG) or (s.kind == DUPLICATE and s.query is not None):
            groups.setdefault((s.item_index, s.kind), []).append(s)
        else:
            rest.append(s)
    for found in groups.values():
        found.sort(key=lambda s: (-s.order(), s.query or ""))
        best = found[0]
        own = best.queries or ((best.query,) if best.query else ())
        names = tuple(dict.fromkeys(q for s in found for q in (s.queries or (s.query,))
                                    if q))
        more = len(names) - len(own)
        if more > 0:
            best = replace(best, queries=names,
                           evidence=f"{best.evidence}; {more} other "
                           f"{'query shows' if more == 1 else 'queries show'} the same")
        rest.append(best)
    ctx.suspects = rest


KIND_STAGES: tuple[tuple[str, Callable[[Context], None]], ...] = (
    ("ranking evidence", ranking_evidence),
    ("gallery neighbours", neighbour_pass),
    ("set evidence", set_scores),
    ("labels that look wrong", pair_suspects),
    ("neighbour labels", label_disagreement),
    ("near-duplicates", near_duplicates),
    ("queries", suspicious_queries),
    ("hubs", hubs),
    ("merging", merge),
)

__all__ = ["KIND_STAGES", "file_digests"]
