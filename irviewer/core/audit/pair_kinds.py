"""The audit's pair kinds, one suspect per problem (see :mod:`irviewer.core.audit`):

* a **problem** is a label on an image carried by the lists of one family of positive sets
  (:func:`~irviewer.core.audit.claims.families`: Oxford's five queries of a landmark, also
  when one of their lists differs elsewhere): (family, item, label). Its suspect names every
  query whose list carries the label and fixes them all;
* a negative that looks like one of a family's positives while another, unrelated list has
  it as a positive is one problem, **in the wrong list**: its suspect names both lists and
  carries both fixes (the item out of the list that has it, into the list it looks like);
* otherwise a negative that looks positive, or a positive that looks negative.

The probabilities are the pair scores' (:mod:`irviewer.core.audit.pairs`), the strongest of the
family's sets; the evidence sentences quote what was compared
(:mod:`irviewer.core.audit.pair_words`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from irviewer.core.audit.claims import unrelated
from irviewer.core.audit.context import Context, SetEvidence, isin_sorted
from irviewer.core.audit.pair_words import (
    likeness_clause,
    listed_clause,
    negatives_above,
    neighbour_clause,
    of_its,
    outranked,
    percent,
    rank_clause,
)
from irviewer.core.audit.suspects import NEG_POS, POS_NEG, WRONG_LIST, Suspect, span
from irviewer.core.corrections import NEGATIVE, Correction


@dataclass(frozen=True)
class Problem:
    """One label the evidence doubts: item ``g`` labelled positive (``positive``) or negative
    by the lists of family ``family``; ``j`` its strongest (set, item) key in the pair
    scores, ``s`` its positive set, ``queries`` every query of the family whose list carries
    the label. For an item
    in the wrong list, ``listed`` is the problem of the unrelated family that has it."""

    family: int
    g: int
    positive: bool
    prob: float
    log_odds: float
    j: int
    s: int
    queries: tuple[int, ...]
    listed: Problem | None = None


def problems(ctx: Context) -> list[Problem]:
    """Return the problems whose probability of a wrong label reaches ``min_score``, one per
    (family, item, label), most probable first. Where the sets are lists, an item one list has
    and an unrelated one looks like is one problem in the wrong list (``listed``: the list
    that has it): when the list that looks like it is probably wrong to miss it, or when the
    list that has it is probably wrong and the item belongs rather to the other list than to
    none (the odds that it was moved at least half those that the listing is wrong)."""
    ps = ctx.pair_scores
    assert ps is not None
    members = _family_sets(ctx.family)
    best = _best_keys(ctx)
    known: dict[tuple[int, int], bool] = {}
    found: dict[tuple[int, int, bool], Problem] = {}
    for key, j in best.items():  # image labels: no positive is doubted (_best_keys)
        if ps.prob[j] >= ctx.options.min_score:
            p = _problem(ctx, members, key, j)
            if p is not None:
                found[key] = p
    if ctx.labels is None:
        by_item: dict[int, list[tuple[int, int, bool]]] = {}
        for key in best:
            by_item.setdefault(key[1], []).append(key)
        for key, p in sorted(found.items(), key=lambda kp: -kp[1].log_odds):
            if found.get(key) is not p:
                continue
            other = _other_side(ctx, p, by_item[p.g], best, known)
            if other is None:
                continue
            other_p = _problem(ctx, members, (other[0], p.g, not p.positive), other[1])
            if other_p is None:
                continue
            here, listed = (p, other_p) if not p.positive else (other_p, p)
            if p.positive and ps.prob[other[1]] < 0.5 * p.prob:
                continue  # it belongs rather to no list than to the other one
            found.pop((listed.family, p.g, True), None)
            found.pop((here.family, p.g, False), None)
            found[(here.family, p.g, False)] = Problem(
                here.family, p.g, False, listed.prob, listed.log_odds, here.j, here.s,
                here.queries, listed)
    return sorted(found.values(), key=lambda p: -p.log_odds)


def _best_keys(ctx: Context) -> dict[tuple[int, int, bool], int]:
    """Return, per (family, item, label) of an item with a label doubted enough to list, the
    pair-score key of its most doubted set: the doubted labels' and, where the sets are lists,
    every other label of those items (the other side of an image in the wrong list)."""
    ps = ctx.pair_scores
    assert ps is not None
    n_g = ctx.n_g
    doubted = ps.prob >= ctx.options.min_score
    if ctx.labels is not None:  # image labels: a positive is never doubted, no other side
        doubted &= ~ps.is_pos
        pick = np.flatnonzero(doubted)
    else:
        items = np.unique(ps.keys[doubted] % n_g)
        pick = np.flatnonzero(np.isin(ps.keys % n_g, items))
    keys, log_odds, is_pos = ps.keys[pick], ps.log_odds[pick], ps.is_pos[pick]
    f = ctx.family[keys // n_g]
    order = np.lexsort((-log_odds, is_pos, keys % n_g, f))
    group = np.stack([f[order], keys[order] % n_g, is_pos[order]], axis=1)
    first = np.r_[True, (np.diff(group, axis=0) != 0).any(axis=1)] if len(order) else \
        np.zeros(0, dtype=bool)
    return {(int(a), int(b), bool(c)): int(j)
            for (a, b, c), j in zip(group[first].tolist(), pick[order[first]].tolist(),
                                    strict=True)}


def _problem(ctx: Context, members: dict[int, np.ndarray], key: tuple[int, int, bool],
             j: int) -> Problem | None:
    """Return the problem of (family, item, label) ``key`` from its strongest pair-score key
    ``j``, None when no query of the family carries the label."""
    ps = ctx.pair_scores
    assert ps is not None
    f, g, positive = key
    queries = carrying(ctx, members[f], g, positive)
    if not queries:
        return None
    return Problem(f, g, positive, float(ps.prob[j]), float(ps.log_odds[j]), j,
                   int(ps.keys[j] // ctx.n_g), queries)


def _other_side(ctx: Context, p: Problem, keys: list[tuple[int, int, bool]],
                best: dict[tuple[int, int, bool], int],
                known: dict[tuple[int, int], bool]) -> tuple[int, int] | None:
    """Return (family, pair-score key) of the other side of a problem in the wrong list: for
    a negative, the unrelated list that has the item (its most doubted); for a positive, the
    unrelated list it looks most like (its strongest claim). None when there is none."""
    ps, sets = ctx.pair_scores, ctx.sets
    assert ps is not None and sets is not None
    n_g = ctx.n_g
    options = [(key[0], best[key]) for key in keys
               if key[2] != p.positive and key[0] != p.family
               and unrelated(sets, p.s, int(ps.keys[best[key]] // n_g), known)]
    if not options:
        return None
    return max(options, key=lambda o: ps.log_odds[o[1]])


def _family_sets(family: np.ndarray) -> dict[int, np.ndarray]:
    """Return family -> its positive sets."""
    order = np.argsort(family, kind="stable")
    bounds = np.flatnonzero(np.r_[True, np.diff(family[order]) != 0, True])
    return {int(family[order[a]]): order[a:b] for a, b in itertools.pairwise(bounds)}


def carrying(ctx: Context, family_sets: np.ndarray, g: int, positive: bool) -> tuple[int, ...]:
    """Return the queries of the family's sets whose lists carry ``g`` as a positive
    (``positive``) or as a negative: not removed by their protocol, not their own image."""
    sets = ctx.sets
    assert sets is not None
    qs = np.unique(np.concatenate([sets.queries(int(s)) for s in family_sets]))
    keys = qs * ctx.n_g + g
    is_pos = isin_sorted(keys, ctx.pos_keys)
    keep = (ctx.selves[qs] != g) & ~isin_sorted(keys, ctx.removed_keys)
    keep &= is_pos if positive else ~is_pos
    return tuple(qs[keep].tolist())


def _shown_query(ctx: Context, p: Problem, best: bool) -> int:
    """Return the query whose ranking shows the problem: where the item ranks best (a
    negative that looks positive) or worst (a positive that looks negative) under the first
    method; unranked counts as worst."""
    v, worst = ctx.views[0], ctx.n_g + 1

    def rank(q: int) -> int:
        r = v.rank_of(q, p.g)
        return worst if r is None else r

    return min(p.queries, key=rank) if best else max(p.queries, key=rank)


def _evidence_of(ctx: Context, j: int) -> tuple[SetEvidence, int] | None:
    """Return the first method with vectors that has evidence on pair-score key ``j``, and
    the key's position in it."""
    ps = ctx.pair_scores
    assert ps is not None
    for v, ev, at in zip(ctx.views, ctx.set_evidence, ps.at, strict=True):
        if v.unit is not None and at[j] >= 0 and np.isfinite(ev.v[at[j]]):
            return ev, int(at[j])
    return None


def _list_name(ctx: Context, queries: tuple[int, ...]) -> str:
    """Return how the evidence names a list: by the queries that carry it."""
    return "the list of " + span([ctx.dataset.queries[q].name for q in queries])


def _looks_positive(ctx: Context, p: Problem) -> tuple[int, str]:
    """Return (the query shown, the clauses saying a negative looks like the list's
    positives)."""
    q = _shown_query(ctx, p, best=True)
    g = p.g
    v0 = ctx.views[0]
    clauses = [rank_clause(ctx, q, g, [o for o in p.queries if o != q])]
    if v0.rank_of(q, g) is not None:
        n_pos = int(v0.n_pos[q])
        clauses[0] += f", above {of_its(outranked(v0, q, g), n_pos, 'positives')}"
    found = _evidence_of(ctx, p.j)
    if found is not None:
        ev, at = found
        name = _list_name(ctx, p.queries)
        clauses.append(neighbour_clause(ctx, ev, at, False, name))
        if ev.w is not None and np.isfinite(ev.w[at]):
            clauses.append(likeness_clause(ctx, ev, at, False, name))
    return q, "; ".join(clauses)


def _looks_negative(ctx: Context, p: Problem) -> tuple[int, list[str]]:
    """Return (the query shown, the clauses saying a positive looks unlike its list: its
    ranks, then its neighbours, where they are listed and its likeness)."""
    q = _shown_query(ctx, p, best=False)
    g = p.g
    clauses = [rank_clause(ctx, q, g, [o for o in p.queries if o != q])]
    above, n_neg = negatives_above(ctx.views[0], q, g)
    clauses[0] += f", below {share_words(above, n_neg)} of its negatives"
    found = _evidence_of(ctx, p.j)
    if found is not None:
        ev, at = found
        name = _list_name(ctx, p.queries)
        clauses.append(neighbour_clause(ctx, ev, at, True, name))
        if ev.x is not None and ev.x_ref is not None and np.isfinite(ev.x[at]) and \
                ev.x[at] <= 0.5:
            clauses.append(listed_clause(ctx, ev, at))
        if ev.w is not None and np.isfinite(ev.w[at]):
            clauses.append(likeness_clause(ctx, ev, at, True, name))
    return q, clauses


def share_words(n: int, of: int) -> str:
    """Return "24% (1,200 of 4,980)" or "all 4,980"."""
    if n >= of:
        return f"all {of:,}"
    return f"{percent(n, of)} ({n:,} of {of:,})"


def _all_words(n: int, what: str) -> str:
    """Return "yet is labelled negative" or "yet all 5 queries sharing its list label it
    negative"."""
    if n == 1:
        return f"yet it is labelled {what}"
    return f"yet {'both' if n == 2 else f'all {n}'} queries of its list label it {what}"


def pair_suspects(ctx: Context) -> None:
    """Add the suspects of the problems found (:func:`problems`): a negative that looks
    positive, a positive that looks negative, an item in the wrong list."""
    assert ctx.pair_scores is not None
    for p in problems(ctx):
        if p.positive:
            ctx.suspects.append(_pos_neg(ctx, p))
        elif p.listed is not None:
            ctx.suspects.append(_wrong_list(ctx, p, p.listed))
        else:
            ctx.suspects.append(_neg_pos(ctx, p))


def _names(ctx: Context, queries: tuple[int, ...]) -> tuple[str, ...]:
    return tuple(ctx.dataset.queries[q].name for q in queries)


def _neg_pos(ctx: Context, p: Problem) -> Suspect:
    q, evidence = _looks_positive(ctx, p)
    evidence += "; " + _all_words(len(p.queries), NEGATIVE)
    g, item = p.g, ctx.dataset.gallery[p.g]
    names = _names(ctx, p.queries)
    query = ctx.dataset.queries[q]
    if ctx.labels is not None and ctx.query_labels is not None:
        suggested, labelled = ctx.query_labels[q], str(ctx.labels[g])
        correction = ctx.relabel(g, suggested)
        corrections: tuple[Correction, ...] = (correction,)
        evidence += f" (its label is {labelled}, the query's {suggested})"
    else:
        labelled, suggested = NEGATIVE, ctx.protocol.positive[0]
        correction = Correction(query.name, item, suggested)
        corrections = tuple(Correction(n, item, suggested) for n in names)
    return Suspect(NEG_POS, p.prob, query.name, item, labelled, suggested, evidence,
                   ctx.n_methods, ctx.n_methods, g, q, ctx.ranks(q, g), correction, names,
                   corrections, p.log_odds)


def _pos_neg(ctx: Context, p: Problem) -> Suspect:
    q, clauses = _looks_negative(ctx, p)
    g, item = p.g, ctx.dataset.gallery[p.g]
    name = ctx.dataset.queries[q].name
    group = ctx.group_of(q, g)
    evidence = f"labelled {group} for {span(list(_names(ctx, p.queries)))}, yet it " + \
        "; ".join(clauses)
    claim = _claim_words(ctx, p)
    if claim:
        evidence += f"; {claim}"
    names = _names(ctx, p.queries)
    corrections = tuple(Correction(n, item, NEGATIVE) for n in names)
    return Suspect(POS_NEG, p.prob, name, item, group, NEGATIVE, evidence, ctx.n_methods,
                   ctx.n_methods, g, q, ctx.ranks(q, g), Correction(name, item, NEGATIVE),
                   names, corrections, p.log_odds)


def _wrong_list(ctx: Context, p: Problem, listed: Problem) -> Suspect:
    """An item another list has, looking like one of this list's positives: one suspect naming
    both lists, shown in this list's query where it ranks best, fixing both."""
    g, item = p.g, ctx.dataset.gallery[p.g]
    qb = _shown_query(ctx, listed, best=False)
    group = ctx.group_of(qb, g)
    there = span(list(_names(ctx, listed.queries)))
    here = span(list(_names(ctx, p.queries)))
    q, looks = _looks_positive(ctx, p)
    _, unlike = _looks_negative(ctx, listed)
    suggested = ctx.protocol.positive[0]
    evidence = (f"listed {group} for {there} but looks like a positive of {here}: it {looks}; "
                f"for {there} it {'; '.join(unlike)}; an image belongs to at most one of two "
                "lists that share hardly any image")
    names, moved_out = _names(ctx, p.queries), _names(ctx, listed.queries)
    corrections = (tuple(Correction(n, item, suggested) for n in names)
                   + tuple(Correction(n, item, NEGATIVE) for n in moved_out))
    query = ctx.dataset.queries[q]
    return Suspect(WRONG_LIST, p.prob, query.name, item, group, suggested, evidence,
                   ctx.n_methods, ctx.n_methods, g, q, ctx.ranks(q, g),
                   Correction(query.name, item, suggested), names + moved_out, corrections,
                   p.log_odds)


def _claim_words(ctx: Context, p: Problem) -> str:
    """Return "it is also a positive of christ_church_1–5, whose list shares hardly any image
    with this one" when an unrelated set's claim on the item is the better one
    (:func:`~irviewer.core.audit.claims.competing_claims`), else ""."""
    sets = ctx.sets
    rival = ctx.rivals.get(p.s * ctx.n_g + p.g)
    if sets is None or rival is None:
        return ""
    names = [ctx.dataset.queries[q].name for q in sets.queries(rival).tolist()]
    return (f"it is also a positive of {span(names)}, whose list shares hardly any image "
            "with this one")
