"""Compare mode's view models (Qt-free): the other method's AP and the ΔAP per query as the
query table shows them, the summary line of a paired comparison, and how far each result
moves from the shown method's list to the compared one's ("↑3", "↓1", "=", "not in top K").

The window's shown method (Method) is the baseline and "Compare with" names the method
compared with it, as in ``irviewer compare`` (its first method is the baseline): deltas
are compared − shown, so a loss is a query the compared method makes worse. Every number
comes from :mod:`irviewer.core.paired` (Smucker, Allan & Carterette, CIKM 2007 for the
tests; Efron & Tibshirani 1993 for the interval).
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.evaluation import IGNORED, Evaluation
from irviewer.core.paired import PairedComparison, compare_evaluations
from irviewer.opening.opener import Paired
from irviewer.view import palette
from irviewer.view.result_list import ResultTile

#: Colours of a gain, a loss and a tie (Okabe-Ito bluish green, vermillion, grey).
GAIN_COLOUR, LOSS_COLOUR, TIE_COLOUR = palette.GAIN, palette.LOSS, palette.TIE
#: The marks' arrows: the compared method ranks the item higher (a smaller rank) than the
#: shown one, lower, or at the same rank.
HIGHER, LOWER, SAME = "↑", "↓", "="


def paired_columns(comparison: PairedComparison,
                   dataset: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """Return (compared method's AP, ΔAP = compared − shown), one value per query position
    of ``dataset`` (the shown method's), nan where a query is not evaluated by both.

    The deltas are the core's (:attr:`PairedComparison.deltas`), placed by query name.
    """
    where = {q.name: i for i, q in enumerate(dataset.queries)}
    other = np.full(dataset.n_queries, np.nan)
    delta = np.full(dataset.n_queries, np.nan)
    at = np.array([where[name] for name in comparison.queries], dtype=np.int64)
    other[at] = comparison.method_values
    delta[at] = comparison.deltas
    return other, delta


def compared_header(name: str) -> str:
    """Return the query table's header of the compared method's AP column: "AP" and the
    method's whole name, one line per step of a re-ranking chain (each " + " starts a
    line), so that no name is cut."""
    return "AP " + name.replace(" + ", "\n+ ")


def depth_clause(shown: str, paired: Paired) -> str:
    """Return the sentence saying at which depth two methods are compared (:meth:`Opened.
    paired`): nothing for two whole rankings; else that both are scored on their first K
    results, with the shown method's mAP there and on its whole ranking, so the number
    beside the Method list is not mistaken for the one compared."""
    if paired.depth is None:
        return ""
    cut = _map(paired.base)
    own = _map(paired.base_own)
    return (f"both on their first {paired.depth} results (a positive past {paired.depth} "
            f"missed): {shown} {cut} there, {own} on its whole ranking")


def _map(ev: Evaluation) -> str:
    ap = np.asarray(ev.per_query["AP"], dtype=np.float64)[ev.evaluated]
    return f"mAP {100 * float(np.mean(ap)):.2f}" if ap.size else "no mAP"


def compare_shown(shown: str, shown_ev: Evaluation, other: str, other_ev: Evaluation,
                  **options: int) -> PairedComparison:
    """Return the paired AP comparison with ``shown`` as the baseline (InputError when the
    two evaluate no query in common)."""
    return compare_evaluations(shown, shown_ev, other, other_ev, "AP", **options)


@dataclass(frozen=True)
class PairedStatistics:
    """The slow part of a comparison (seconds at thousands of queries): the bootstrap
    interval and both p-values."""

    ci95: tuple[float, float]
    t_p: float
    randomization_p: float
    permutations: int | str
    t_note: str = ""


def paired_statistics(comparison: PairedComparison) -> PairedStatistics:
    """Compute the interval and the two tests of ``comparison`` (run off the GUI thread)."""
    r = comparison.randomization
    t = comparison.paired_t
    return PairedStatistics(comparison.ci95, t.p_value, r.p_value, r.permutations, t.note)


def _p(p: float) -> str:
    if math.isnan(p):
        return "n/a"
    return "p &lt; 0.0001" if p < 1e-4 else f"p = {p:.4f}"


def compare_summary_html(c: PairedComparison, stats: PairedStatistics | None) -> str:
    """Return the summary bar's comparison line (rich text); the interval and p-values read
    "…" while ``stats`` is None (still being computed)."""
    pending = "…"
    if stats is None:
        interval, t_p, r_p = pending, f"p {pending}", f"p {pending}"
        kind = ""
    else:
        lo, hi = stats.ci95
        interval = f"[{100 * lo:+.2f}, {100 * hi:+.2f}]"
        t_p, r_p = _p(stats.t_p), _p(stats.randomization_p)
        kind = (" exact" if stats.permutations == "exact"
                else f", {stats.permutations:,} sign flips")
    return (f"<b>{c.method}</b> vs <b>{c.baseline}</b> on {c.n:,} queries: "
            f"mAP {100 * c.mean_method:.2f} vs {100 * c.mean_baseline:.2f}, "
            f'<span style="font-size:large"><b>ΔmAP {100 * c.mean_delta:+.2f}</b></span> '
            f"95 % CI {interval} &nbsp;·&nbsp; "
            f"<b>{c.wins}</b> better, <b>{c.losses}</b> worse, <b>{c.ties}</b> tied "
            f"&nbsp;·&nbsp; paired t {t_p}, randomization {r_p}{kind}"
            + (f" ({html.escape(stats.t_note)})" if stats is not None and stats.t_note
               else ""))


@dataclass(frozen=True)
class RankMark:
    """A tile's move between the two methods: ``text`` ("↑3": the compared method ranks it
    3 places higher than the shown one, "↓1": 1 place lower, "=": the same rank, "not in
    top 50"; "" for an item ignored under both), ``other_rank`` (its rank in the other
    column, None when not in the other list) and the hover sentence naming both ranks."""

    text: str
    other_rank: int | None
    tooltip: str


def other_ranks(other_ev: Evaluation, q: int) -> dict[int, int]:
    """Return gallery index → rank after the protocol's removals (1-based, the rank the
    metrics use) over the other method's whole stored list for query ``q``."""
    top = other_ev.ranking.top_indices[q]
    top = top[top >= 0]
    kept = top[other_ev.relevance(q, top) != IGNORED]
    return {int(g): r + 1 for r, g in enumerate(kept)}


def move_text(shown_rank: int, compared_rank: int) -> str:
    """Return how far an item moves from the shown method's rank to the compared method's:
    "↑n" when the compared method ranks it n places higher (a smaller rank), "↓n" when n
    places lower, "=" when at the same rank."""
    move = shown_rank - compared_rank
    return f"{HIGHER}{move}" if move > 0 else f"{LOWER}{-move}" if move < 0 else SAME


def rank_marks(tiles: tuple[ResultTile, ...] | list[ResultTile], other_ev: Evaluation,
               q: int, other_name: str, compared: bool = False) -> tuple[RankMark, ...]:
    """Return each tile's mark: how far it moves from the shown method's list to the
    compared method's, so one item carries the same mark in both columns.

    ``tiles`` are the shown method's (``compared`` False; ``other_ev`` is then the compared
    method) or the compared method's (``compared`` True; ``other_ev`` the shown one). A
    tile beyond the other method's stored list (K ranked items) is ranked from that
    method's score row for query ``q`` (cosines, or a re-ranked method's own rows); "not in
    top K" when it has none (a ranking read from a file). The tooltip gives the other rank.
    """
    ranks = other_ranks(other_ev, q)
    k = len(ranks)
    beyond = sorted({t.index for t in tiles if t.rank is not None and t.index not in ranks})
    if beyond and other_ev.ranking.has_score_rows:
        found = other_ev.ranks_after_removals(q, np.array(beyond, dtype=np.int64))
        ranks.update({g: int(r) + 1 for g, r in zip(beyond, found, strict=True) if r >= 0})
    marks = []
    for t in tiles:
        if t.rank is None:
            marks.append(RankMark("", None, "ignored under both methods"))
            continue
        r = ranks.get(t.index)
        if r is None:
            marks.append(RankMark(f"not in top {k}", None,
                                  f"{other_name} does not rank it in its top {k}"))
            continue
        text = move_text(r, t.rank) if compared else move_text(t.rank, r)
        where = f", beyond its stored top {k}" if t.index in beyond else ""
        marks.append(RankMark(text, r, f"rank {r} under {other_name}{where} "
                              f"(here {t.rank}): {_moved(text)}"))
    return tuple(marks)


def _moved(text: str) -> str:
    """Return the words of a move's mark ("↑3" -> "the compared method ranks it 3 places
    higher")."""
    if text == SAME:
        return "the same rank under both methods"
    n = int(text[1:])
    places = "1 place" if n == 1 else f"{n} places"
    return f"the compared method ranks it {places} {'higher' if text[0] == HIGHER else 'lower'}"
