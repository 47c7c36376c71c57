"""What the window says about tied scores (Qt-free): the mark on a query whose AP depends on
the order of its ties, the summary's tie range, and, in compare mode, which differences the
order of tied scores alone could make (a paired test on such differences is not a finding).

Every number comes from :attr:`irviewer.core.evaluation.Evaluation.ties`
(:mod:`irviewer.core.ties`)."""

from __future__ import annotations

import math

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.evaluation import Evaluation
from irviewer.core.ties import AP_EPSILON, TIE_TOLERANCE

#: The mark after a query's AP when the order of its tied scores moves it.
TIE_MARK = "≈"


def _pct(value: float) -> str:
    return "—" if math.isnan(value) else f"{100 * value:.1f}"


def tied_queries(ev: Evaluation) -> np.ndarray:
    """Return, per query position, whether its AP depends on the order of tied scores."""
    return np.asarray(ev.ties.tied, dtype=bool)


def ap_tie_tooltip(ev: Evaluation, q: int) -> str:
    """Return the hover sentence of a tie-marked query's AP ("" when ties do not move it)."""
    if not ev.ties.tied[q]:
        return ""
    pq = ev.ties.per_query
    expected = float(pq["AP_expected"][q])
    said = "" if math.isnan(expected) else f", {_pct(expected)} on average over all orders"
    return (f"AP depends on the order of tied scores (within {TIE_TOLERANCE:g}): "
            f"{_pct(float(pq['AP_worst'][q]))} with the positives last, "
            f"{_pct(float(pq['AP_best'][q]))} with them first{said}; shown: the gallery "
            "order's")


def ap_tie_range(ev: Evaluation, q: int) -> str:
    """Return the clause after a query's AP in its header (rich text): its range over the
    orders of its tied scores, "" when they do not move it."""
    if not ev.ties.tied[q]:
        return ""
    pq = ev.ties.per_query
    return (f" ({TIE_MARK} {_pct(float(pq['AP_worst'][q]))}–{_pct(float(pq['AP_best'][q]))}"
            " by the order of tied scores)")


def tie_summary(ev: Evaluation) -> str:
    """Return the summary bar's tie clause (rich text), "" when ties do not move the mAP."""
    t = ev.ties
    if not t.moves_map():
        return ""
    s = t.summary
    expected = s.get("mAP_expected", float("nan"))
    said = "" if math.isnan(expected) else f", expected {100 * expected:.2f}"
    return (f"{TIE_MARK} ties: mAP {100 * s['mAP_worst']:.2f}–{100 * s['mAP_best']:.2f}"
            f"{said} ({t.n_tied:,} queries depend on the order of tied scores)")


def within_tie_range(shown: Evaluation, other: Evaluation, dataset: Dataset) -> np.ndarray:
    """Return, per query position of ``dataset`` (the shown evaluation's), whether the two
    methods' APs differ by no more than the order of tied scores can make them: their
    ranges [AP_worst, AP_best] overlap. False where either method skips the query or the
    two APs are equal."""
    where = {q.name: i for i, q in enumerate(other.dataset.queries)}
    at = np.array([where.get(q.name, -1) for q in dataset.queries], dtype=np.int64)
    out = np.zeros(dataset.n_queries, dtype=bool)
    found = at >= 0
    a, b = shown.ties.per_query, other.ties.per_query
    idx = np.flatnonzero(found)
    lo_a, hi_a = a["AP_worst"][idx], a["AP_best"][idx]
    lo_b, hi_b = b["AP_worst"][at[idx]], b["AP_best"][at[idx]]
    differ = np.abs(shown.per_query["AP"][idx] - other.per_query["AP"][at[idx]]) > AP_EPSILON
    with np.errstate(invalid="ignore"):
        overlap = (np.maximum(lo_a, lo_b) <= np.minimum(hi_a, hi_b) + AP_EPSILON) & differ
    out[idx] = overlap & (np.maximum(hi_a - lo_a, hi_b - lo_b) > AP_EPSILON)
    return out


def delta_tie_tooltip(shown: Evaluation, other: Evaluation, q: int, q_other: int) -> str:
    """Return the hover sentence of a ΔAP that the order of tied scores alone could make."""
    a, b = shown.ties.per_query, other.ties.per_query
    return ("Within the tie range: the order of tied scores alone can make this difference "
            f"(AP {_pct(float(a['AP_worst'][q]))}–{_pct(float(a['AP_best'][q]))} shown, "
            f"{_pct(float(b['AP_worst'][q_other]))}–{_pct(float(b['AP_best'][q_other]))} "
            "compared); not evidence that one method ranks better")


def compare_tie_clause(explained: np.ndarray, n_paired: int, mean_delta: float,
                       shown: Evaluation, other: Evaluation) -> str:
    """Return compare mode's clause on ties (rich text): how many paired differences the
    order of tied scores alone could make, and whether the mean difference is within the
    two mAPs' tie ranges; "" when ties move neither method."""
    if not (shown.ties.moves_map() or other.ties.moves_map()):
        return ""
    s, o = shown.ties.summary, other.ties.summary
    within = max(s["mAP_worst"], o["mAP_worst"]) <= min(s["mAP_best"], o["mAP_best"])
    n = int(np.count_nonzero(explained))
    text = (f"{TIE_MARK} {n:,} of {n_paired:,} differences lie within the tie range "
            "(the order of tied scores alone can make them)")
    if within:
        text += (f"; the mAPs' tie ranges overlap ({100 * s['mAP_worst']:.2f}–"
                 f"{100 * s['mAP_best']:.2f} and {100 * o['mAP_worst']:.2f}–"
                 f"{100 * o['mAP_best']:.2f}): ties alone can explain ΔmAP "
                 f"{100 * mean_delta:+.2f}, not a finding")
    return text
