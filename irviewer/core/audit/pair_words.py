"""The words of the pair kinds' evidence sentences: what was compared, in numbers a person can
check (a rank in the query's results, how many of the item's nearest images, how many of the
list's positives and negatives reach as far), never a comparison that says nothing (a share of
0 % against 0 %) and never a probability (the score says it, with its own digits).

Each clause reads one method's evidence on one (positive set, item) pair: the ranks from the
rankings (every method), the neighbours and the likeness from the first method with
descriptors (named when there are several).
"""

from __future__ import annotations

import numpy as np

from irviewer.core.audit.context import Context, MethodView, SetEvidence
from irviewer.core.audit.suspects import ordinal, rank_phrase, span, under


def percent(n: int, of: int) -> str:
    """Return n / of as a percentage with the digits that keep it honest: never "100%" for
    less than all, never "0%" for more than none ("62%", "99.94%", "0.04%")."""
    pct = 100 * n / max(of, 1)
    for digits in range(4):
        text = f"{pct:.{digits}f}"
        if 0 < n < of and not 0 < float(text) < 100:
            continue
        return f"{text}%"
    return f"{pct:.2g}%"


def of_its(n: int, of: int, noun: str, whose: str = "its") -> str:
    """Return "none of its 77 positives", "all 4,951 of its negatives", "14 of the list's 53
    other positives" (``whose``), with the share in brackets when the total is large
    ("(62%)")."""
    if n <= 0:
        return f"none of {whose} {of:,} {noun}"
    if n >= of:
        return f"{whose} one {noun.rstrip('s')}" if of == 1 else f"all {of:,} of {whose} {noun}"
    share = f" ({percent(n, of)})" if of >= 100 else ""
    return f"{n:,} of {whose} {of:,} {noun}{share}"


def rank_clause(ctx: Context, q: int, g: int, others: list[int]) -> str:
    """Return "ranks 8th for all_souls_1 under the one method (16th to 40th for
    all_souls_2–5)" or "ranks beyond the stored lists for ..."."""
    name = ctx.dataset.queries[q].name
    ranks = [r for _, r in ctx.ranks(q, g)]
    if all(r is None for r in ranks):
        head = f"ranks beyond the stored lists for {name} {under(ctx.n_methods)}"
    else:
        head = f"ranks {rank_phrase(ranks)} for {name} {under(ctx.n_methods)}"
    return head + _others(ctx, g, others)


def _others(ctx: Context, g: int, others: list[int]) -> str:
    """Return " (16th to 40th for all_souls_2–5, beyond the lists for 1)" under the first
    method; "" without other queries."""
    if not others:
        return ""
    v = ctx.views[0]
    ranks = sorted(r for o in others if (r := v.rank_of(o, g)) is not None)
    who = span([ctx.dataset.queries[o].name for o in others])
    if not ranks:
        return f" (beyond the stored lists for {who})"
    at = ordinal(ranks[0]) if ranks[0] == ranks[-1] else \
        f"{ordinal(ranks[0])} to {ordinal(ranks[-1])}"
    missing = len(others) - len(ranks)
    rest = f", beyond the lists for {missing}" if missing else ""
    return f" ({at} for {who}{rest})"


def outranked(v: MethodView, q: int, g: int) -> int:
    """Return how many of query ``q``'s positives rank below ``g`` under one method (all of
    them beyond the stored lists count as below a listed negative)."""
    rank = v.rank_of(q, g)
    lo, hi = np.searchsorted(v.pos_q, [q, q + 1])
    ranks = v.pos_rank[lo:hi]
    if rank is None:
        return 0
    return int(np.count_nonzero((ranks < 0) | (ranks > rank - 1)))


def negatives_above(v: MethodView, q: int, g: int) -> tuple[int, int]:
    """Return (how many of query ``q``'s negatives rank above its positive ``g``, how many
    negatives it has) under one method; all of them when ``g`` is beyond the lists."""
    n_neg = max(int(v.n_neg[q]), 1)
    rank = v.rank_of(q, g)
    if rank is None:
        return n_neg, n_neg
    lo, hi = np.searchsorted(v.pos_q, [q, q + 1])
    ranks = v.pos_rank[lo:hi]
    pos_above = int(np.count_nonzero((ranks >= 0) & (ranks < rank - 1)))
    return min(rank - 1 - pos_above, n_neg), n_neg


# -- the set's own numbers -------------------------------------------------------------------

def set_values(ctx: Context, ev: SetEvidence, s: int,
               share: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Return (the set's positives' values of ``share``, its keyed reference negatives' values,
    how many reference negatives have no key: their value is 0) under one method."""
    n_g = ctx.n_g
    lo, hi = np.searchsorted(ev.keys, [s * n_g, (s + 1) * n_g])
    values = share[lo:hi]
    pos = ev.is_pos[lo:hi] & np.isfinite(values)
    neg = ~ev.is_pos[lo:hi] & ev.v_ref[lo:hi] & np.isfinite(values)
    unkeyed = 0
    if ev.ref_neg is not None:
        unkeyed = max(int(ev.ref_neg[s]) - int(np.count_nonzero(neg)), 0)
    return values[pos], values[neg], unkeyed


#: Whose positives and negatives the clauses count: the list's (its queries' positive set).
LIST = "the list's"


def neighbour_clause(ctx: Context, ev: SetEvidence, at: int, positive: bool,
                     list_name: str) -> str:
    """Return the neighbours' clause: how many of the item's nearest labelled gallery images
    are positives of the list, and how many of the list's positives and negatives reach that
    share (a negative: at least as high; a positive: at most as low), the item left out."""
    k = ctx.options.neighbours
    share = float(ev.v[at])
    s = int(ev.keys[at] // ctx.n_g)
    pos, neg, unkeyed = set_values(ctx, ev, s, ev.v)
    hits = round(share * k)
    what = "other positives" if positive else "positives"
    if hits == 0:
        head = (f"none of its {k} nearest labelled gallery images is "
                f"{'another positive' if positive else 'a positive'} of {list_name}")
    else:
        count = f"all {k} of its" if hits == k else f"{hits} of its {k}"
        one = "another positive" if positive else "a positive"
        head = (f"{count} nearest labelled gallery images "
                f"{'is ' + one if hits == 1 else 'are ' + what} of {list_name}")
    if positive:
        n_pos = len(pos) - 1  # itself left out
        p = int(np.count_nonzero(pos <= share + 1e-9)) - 1
        n = int(np.count_nonzero(neg <= share + 1e-9)) + unkeyed
        n_neg = len(neg) + unkeyed
        return (f"{head}, as few as for {of_its(p, n_pos, 'other positives', LIST)} and "
                f"{of_its(n, n_neg, 'negatives', LIST)}")
    own_neg = int(bool(ev.v_ref[at]))
    n_pos, n_neg = len(pos), len(neg) + unkeyed - own_neg
    if hits == 0:  # no evidence for it: say how common that is, not "as many as all"
        p = int(np.count_nonzero(pos <= 1e-9))
        n = int(np.count_nonzero(neg <= 1e-9)) + unkeyed - own_neg
        return (f"{head}, as for {of_its(p, n_pos, 'positives', LIST)} and "
                f"{of_its(n, n_neg, 'negatives', LIST)}")
    p = int(np.count_nonzero(pos >= share - 1e-9))
    n = max(int(np.count_nonzero(neg >= share - 1e-9)) - own_neg, 0)
    if p == 0:
        others = np.delete(neg, np.argmin(np.abs(neg - share))) if own_neg and len(neg) else neg
        rest = (f"or any of the list's {n_neg:,} negatives (at most {_top(others, k)})"
                if n == 0 else
                f"but as many as for {of_its(n, n_neg, 'negatives', LIST)}")
        return (f"{head}, more than for any of the list's {n_pos:,} positives (at most "
                f"{_top(pos, k)}) {rest}")
    return (f"{head}, as many as for {of_its(p, n_pos, 'positives', LIST)} and "
            f"{of_its(n, n_neg, 'negatives', LIST)}")


def _top(values: np.ndarray, k: int) -> str:
    """Return the highest share of ``values`` as a count of ``k`` neighbours ("4 of 10")."""
    top = float(values.max()) if len(values) else 0.0
    return f"{round(top * k)} of {k}"


def listed_clause(ctx: Context, ev: SetEvidence, at: int) -> str:
    """Return the clause of where the item's nearest gallery images are listed, for a
    positive none or few of whose neighbours any list names: how many of the list's other
    positives and of its negatives have as few."""
    assert ev.x is not None and ev.x_ref is not None
    k = ctx.options.neighbours
    share = float(ev.x[at])
    s = int(ev.keys[at] // ctx.n_g)
    pos, _neg, _ = set_values(ctx, ev, s, ev.x)
    negatives = ev.x_ref[s]
    hits = round(share * k)
    p = int(np.count_nonzero(pos <= share + 1e-9)) - 1
    n = int(np.count_nonzero(negatives <= share + 1e-9))
    head = (f"none of its {k} nearest gallery images is a positive of any list" if hits == 0
            else f"only {hits} of its {k} nearest gallery images "
            f"{'is a positive' if hits == 1 else 'are positives'} of any list")
    return (f"{head}, as for {of_its(p, len(pos) - 1, 'other positives', LIST)} and "
            f"{of_its(n, len(negatives), 'negatives', LIST)}")


def likeness_clause(ctx: Context, ev: SetEvidence, at: int, positive: bool,
                    list_name: str) -> str:
    """Return the likeness clause: the item's mean cosine with its most similar positives of
    the list, and how many of the list's negatives (and positives) are less like it."""
    from irviewer.core.audit.likeness import LIKE_TOP

    assert ev.w is not None and ev.like is not None and ev.like_neg is not None
    s = int(ev.keys[at] // ctx.n_g)
    like = float(ev.like[at])
    pos, _neg, _ = set_values(ctx, ev, s, ev.like)
    n_neg = int(ev.like_neg[s]) - int(not positive and bool(ev.v_ref[at]))
    below = round(float(ev.w[at]) * n_neg)
    top = min(LIKE_TOP, max(len(pos) - 1, 1))
    head = (f"its mean cosine with its {top} most similar positives of {list_name} is "
            f"{like:.2f}")
    if positive:
        higher = int(np.count_nonzero(pos > like + 1e-12))
        return (f"{head}: above that of {of_its(below, n_neg, 'negatives', LIST)} and below "
                f"that of {of_its(higher, len(pos) - 1, 'other positives', LIST)}")
    reached = int(np.count_nonzero(pos <= like + 1e-12))
    return (f"{head}: above that of {of_its(below, n_neg, 'negatives', LIST)} and as high "
            f"as that of {of_its(reached, len(pos), 'positives', LIST)}")
