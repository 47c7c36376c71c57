"""The audit's two pair kinds, one suspect per problem: a negative that looks positive and
a positive that looks negative for a (positive set, item), naming every query sharing the set
and fixing them all, with evidence sentences that quote the set's own shares (see
:mod:`irviewer.core.audit` for the definitions, :mod:`irviewer.core.audit.pairs` for the
evidence).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irviewer.core.audit.context import Context, MethodView, SetEvidence, isin_sorted
from irviewer.core.audit.suspects import NEG_POS, POS_NEG, Suspect, ordinal, rank_phrase, under
from irviewer.core.corrections import NEGATIVE, Correction

# -- the two pair kinds ---------------------------------------------------------------------

@dataclass(frozen=True)
class Problem:
    """One (positive set, item) label the evidence doubts, and the queries it is wrong for:
    every query sharing the set, the item's own query and the ones that remove it aside."""

    s: int
    g: int
    prob: float
    log_odds: float
    j: int
    queries: tuple[int, ...]


def _problems(ctx: Context, positive: bool) -> list[Problem]:
    """Return a :class:`Problem` for every labelled (set, item) pair of the wanted label
    whose set-level probability of being wrong reaches ``min_score``: one per problem,
    however many queries share the set."""
    ps, sets = ctx.pair_scores, ctx.sets
    assert ps is not None and sets is not None
    out = []
    for j in np.flatnonzero((ps.is_pos == positive)
                            & (ps.prob >= ctx.options.min_score)).tolist():
        s, g = divmod(int(ps.keys[j]), ctx.n_g)
        qs = sets.queries(s)
        qs = qs[(ctx.selves[qs] != g) & ~isin_sorted(qs * ctx.n_g + g, ctx.removed_keys)]
        if len(qs):
            out.append(Problem(s, g, float(ps.prob[j]), float(ps.log_odds[j]), j,
                               tuple(qs.tolist())))
    return out


def _shown_query(ctx: Context, problem: Problem, best: bool) -> int:
    """Return the query whose ranking shows the problem: where the item ranks best (a
    negative that looks positive) or worst (a positive that looks negative) under the first
    method; unranked counts as worst."""
    v, g = ctx.views[0], problem.g
    worst = ctx.n_g + 1

    def rank(q: int) -> int:
        r = v.rank_of(q, g)
        return worst if r is None else r

    return min(problem.queries, key=rank) if best else max(problem.queries, key=rank)


def _share_words(ctx: Context, j: int, positive: bool) -> str:
    """Return the neighbour clause of the evidence: how many of the item's nearest labelled
    gallery images are positives of the query, and how many of its positives and negatives
    have a share at least that high (a negative) or at most that low (a positive), the item
    left out (first method with vectors)."""
    ps = ctx.pair_scores
    assert ps is not None
    for ev, at in zip(ctx.set_evidence, ps.at, strict=True):
        if ev.v_hist is None or at[j] < 0 or not np.isfinite(ev.v[at[j]]):
            continue
        share = float(ev.v[at[j]])
        fp, fn = v_fractions(ctx, ev, int(at[j]), low=positive)
        if positive:
            return (f"only {100 * share:.0f}% of its nearest labelled gallery images are other "
                    f"positives of the query, a share as low as that of {100 * fp:.0f}% of "
                    f"its other positives and {100 * fn:.0f}% of its negatives")
        return (f"{100 * share:.0f}% of its nearest labelled gallery images are positives of "
                f"the query, a share as high as that of {100 * fp:.0f}% of its positives and "
                f"only {100 * fn:.1f}% of its negatives")
    return ""


def _others_words(ctx: Context, problem: Problem, q: int) -> str:
    """Return " (5th to 31st for the 4 other queries sharing its list)" under the first
    method, "" for a query alone in its set."""
    others = [o for o in problem.queries if o != q]
    if not others:
        return ""
    v = ctx.views[0]
    ranks = sorted(r for o in others if (r := v.rank_of(o, problem.g)) is not None)
    n = len(others)
    whose = f"the {'other query' if n == 1 else f'{n} other queries'} sharing its list"
    if not ranks:
        return f" (beyond the stored lists for {whose})"
    span = ordinal(ranks[0]) if ranks[0] == ranks[-1] else \
        f"{ordinal(ranks[0])} to {ordinal(ranks[-1])}"
    missing = f", beyond the lists for {n - len(ranks)}" if len(ranks) < n else ""
    return f" ({span} for {whose}{missing})"


def _all_words(problem: Problem, what: str) -> str:
    """Return ", yet is labelled negative" or ", yet all 5 queries sharing its list label it
    negative"."""
    n = len(problem.queries)
    if n == 1:
        return f", yet is labelled {what}"
    return f", yet {'both' if n == 2 else f'all {n}'} queries sharing its list label it {what}"


def negatives_looking_positive(ctx: Context) -> None:
    """Suspects labelled negative whose set-level evidence (rankings and neighbours, calibrated
    against the query's own positives and negatives) makes a missed positive probable: one
    per (positive set, item), naming every query of the set and fixing them all."""
    for problem in _problems(ctx, positive=False):
        g = problem.g
        q = _shown_query(ctx, problem, best=True)
        query = ctx.dataset.queries[q]
        ranks = ctx.ranks(q, g)
        rank_list = [r for _, r in ranks]
        n_pos = int(ctx.views[0].n_pos[q])
        if any(r is not None for r in rank_list):
            outranked = _outranked(ctx.views[0], q, g)
            evidence = (f"ranks {rank_phrase(rank_list)} for {query.name} "
                        f"{under(ctx.n_methods)}{_others_words(ctx, problem, q)}, above "
                        f"{outranked} of its {n_pos} positives")
        else:
            evidence = (f"ranks beyond the stored lists for {query.name} "
                        f"{under(ctx.n_methods)}{_others_words(ctx, problem, q)}")
        words = _share_words(ctx, problem.j, positive=False)
        if words:
            evidence += f", and {words}"
        evidence += _all_words(problem, NEGATIVE)
        names = tuple(ctx.dataset.queries[o].name for o in problem.queries)
        if ctx.labels is not None and ctx.query_labels is not None:
            suggested, labelled = ctx.query_labels[q], str(ctx.labels[g])
            correction = ctx.relabel(g, suggested)
            corrections: tuple[Correction, ...] = (correction,)
            evidence += f" (its label is {labelled}, the query's {suggested})"
        else:
            labelled, suggested = NEGATIVE, ctx.protocol.positive[0]
            correction = Correction(query.name, ctx.dataset.gallery[g], suggested)
            corrections = tuple(Correction(n, ctx.dataset.gallery[g], suggested)
                                for n in names)
        ctx.suspects.append(Suspect(NEG_POS, problem.prob, query.name, ctx.dataset.gallery[g],
                                    labelled, suggested, evidence, ctx.n_methods,
                                    ctx.n_methods, g, q, ranks, correction, names,
                                    corrections, problem.log_odds))


def positives_looking_negative(ctx: Context) -> None:
    """Suspects labelled positive whose set-level evidence makes a wrong positive probable:
    ranked below the query's other positives and unlike them, more than the query's own
    positives usually are, or claimed by an unrelated set it fits better
    (:func:`competing_claims`). One per (positive set, item), naming every query of the set
    and fixing them all. Not in image-label sets: there an image's label is wrong only as
    far as another label claims it (:func:`negatives_looking_positive` with its relabel, or
    the image-level label disagreement); a view unlike its label and like no other is hard."""
    if ctx.labels is not None:
        return
    for problem in _problems(ctx, positive=True):
        g = problem.g
        q = _shown_query(ctx, problem, best=False)
        query = ctx.dataset.queries[q]
        ranks = ctx.ranks(q, g)
        group = ctx.group_of(q, g)
        evidence = (f"labelled {group} for {query.name} but ranks "
                    f"{rank_phrase([r for _, r in ranks])} {under(ctx.n_methods)}"
                    f"{_others_words(ctx, problem, q)}")
        below = _negatives_above(ctx.views[0], q, g)
        if below is not None:
            evidence += f", below {100 * below:.0f}% of its negatives"
        words = _share_words(ctx, problem.j, positive=True)
        if words:
            evidence += f", and {words}"
        claim = _claim_words(ctx, problem)
        if claim:
            evidence += f"; {claim}"
        names = tuple(ctx.dataset.queries[o].name for o in problem.queries)
        item = ctx.dataset.gallery[g]
        corrections = tuple(Correction(n, item, NEGATIVE) for n in names)
        ctx.suspects.append(Suspect(POS_NEG, problem.prob, query.name, item, group, NEGATIVE,
                                    evidence, ctx.n_methods, ctx.n_methods, g, q, ranks,
                                    Correction(query.name, item, NEGATIVE), names,
                                    corrections, problem.log_odds))


def _claim_words(ctx: Context, problem: Problem) -> str:
    """Return "it is also a positive of christ_church_1 and 4 more, whose list shares hardly
    any image with this one" when an unrelated set's claim on the item is the better one
    (:func:`~irviewer.core.audit.pairs.competing_claims`), else ""."""
    sets = ctx.sets
    rival = ctx.rivals.get(problem.s * ctx.n_g + problem.g)
    if sets is None or rival is None:
        return ""
    queries = sets.queries(rival).tolist()
    first = ctx.dataset.queries[queries[0]].name
    more = f" and {len(queries) - 1} more" if len(queries) > 1 else ""
    return (f"it is also a positive of {first}{more}, whose list shares hardly any image "
            "with this one")


def _outranked(v: MethodView, q: int, g: int) -> int:
    """Return how many of query ``q``'s positives rank below ``g`` under one method (all of
    them beyond the stored lists count as below a listed negative)."""
    rank = v.rank_of(q, g)
    lo, hi = np.searchsorted(v.pos_q, [q, q + 1])
    ranks = v.pos_rank[lo:hi]
    if rank is None:
        return 0
    return int(np.count_nonzero((ranks < 0) | (ranks > rank - 1)))


def _negatives_above(v: MethodView, q: int, g: int) -> float | None:
    """Return the share of query ``q``'s negatives ranked above its positive ``g`` (None when
    ``g`` is not ranked)."""
    rank = v.rank_of(q, g)
    if rank is None:
        return 1.0
    lo, hi = np.searchsorted(v.pos_q, [q, q + 1])
    ranks = v.pos_rank[lo:hi]
    pos_above = int(np.count_nonzero((ranks >= 0) & (ranks < rank - 1)))
    return (rank - 1 - pos_above) / max(int(v.n_neg[q]), 1)



def v_fractions(ctx: Context, ev: SetEvidence, at: int,
                low: bool = False) -> tuple[float, float]:
    """Return (share of the set's positives, share of its negatives) whose neighbour share
    is at least as high as that of the item at position ``at`` (``low``: at most as low),
    the item left out: the unsmoothed frequencies the evidence sentence quotes."""
    assert ev.v_hist is not None
    pos, neg, offsets, bins, own = ev.v_hist
    s = int(ev.keys[at] // ctx.n_g)
    lo, hi = offsets[s], offsets[s + 1]
    b = lo + int(bins[at])
    part = slice(lo, b + 1) if low else slice(b, hi)
    is_pos, is_neg = float(own[at] > 0), float(own[at] < 0)
    return ((pos[part].sum() - is_pos) / max(pos[lo:hi].sum() - is_pos, 1.0),
            (neg[part].sum() - is_neg) / max(neg[lo:hi].sum() - is_neg, 1.0))
