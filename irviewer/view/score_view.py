"""The Scores tab's view model (Qt-free): the positive and negative pairs' score histograms
of the selected query and of all queries on one score axis, a threshold on the score grid,
precision and recall of "score >= threshold" for the query and for the set, and TAR at FAR
(:mod:`irviewer.core.score_distribution`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from irviewer.core.score_distribution import GRID_BINS, PairScores, edge, tar_at_far

#: Bins of the drawn histograms over [-1, 1] (width 1/64).
DRAWN_BINS = 128
#: The threshold moves by this many grid bins per step (1/1024 of a score).
THRESHOLD_STEP = 8


@dataclass(frozen=True)
class Histograms:
    """One set of pairs as drawn: ``edges`` (DRAWN_BINS + 1 over [-1, 1]) and each class's
    fraction of its pairs per bin (zeros for a class without pairs), so that a few
    positives and millions of negatives share one axis."""

    edges: np.ndarray
    positives: np.ndarray
    negatives: np.ndarray


def histograms(pairs: PairScores) -> Histograms:
    """Return ``pairs`` as drawn histograms (fractions of each class per bin)."""
    width = GRID_BINS // DRAWN_BINS
    edges = np.array([edge(i * width) for i in range(DRAWN_BINS + 1)])
    pos = pairs.positives.reshape(DRAWN_BINS, width).sum(axis=1)
    neg = pairs.negatives.reshape(DRAWN_BINS, width).sum(axis=1)
    return Histograms(edges, pos / max(1, pos.sum()), neg / max(1, neg.sum()))


def occupied_steps(*pairs: PairScores | None) -> tuple[int, int]:
    """Return the threshold steps (grid edge // THRESHOLD_STEP) from the lowest to one past
    the highest score of any of ``pairs``: the slider's range, (0, GRID_BINS //
    THRESHOLD_STEP) when none has a pair."""
    lo, hi = GRID_BINS, 0
    for p in pairs:
        if p is None:
            continue
        used = np.flatnonzero(p.positives + p.negatives)
        if len(used):
            lo, hi = min(lo, int(used[0])), max(hi, int(used[-1]) + 1)
    if lo >= hi:
        return 0, GRID_BINS // THRESHOLD_STEP
    return lo // THRESHOLD_STEP, -(-hi // THRESHOLD_STEP)


def threshold_of(step: int) -> tuple[int, float]:
    """Return (grid edge, score) of threshold ``step``."""
    i = max(0, min(GRID_BINS, step * THRESHOLD_STEP))
    return i, edge(i)


def score_of_step(step: float) -> float:
    """Return the score of threshold ``step`` (fractional steps too: where a dragged line
    is), the inverse of :func:`step_of_score`."""
    return step * THRESHOLD_STEP * 2 / GRID_BINS - 1.0


def step_of_score(score: float) -> int:
    """Return the threshold step nearest ``score``."""
    return round((score + 1.0) * GRID_BINS / (2 * THRESHOLD_STEP))


def _percent(x: float) -> str:
    return "—" if math.isnan(x) else f"{100 * x:.1f} %"


def accepted_line(label: str, pairs: PairScores, i: int) -> str:
    """Return one line of precision and recall of "score >= edge(i)" for ``pairs`` (rich
    text): "<b>label</b>: precision 80.0 % (4 of 5 accepted), recall 57.1 % (4 of 7)"."""
    tp, fp = pairs.accepted(i)
    precision, recall = pairs.precision_recall(i)
    return (f"<b>{label}</b>: precision {_percent(precision)} ({tp:,} of {tp + fp:,} "
            f"accepted), recall {_percent(recall)} ({tp:,} of {pairs.n_positive:,} positives)")


def threshold_html(step: int, query: PairScores | None, whole: PairScores | None,
                   query_name: str = "this query") -> str:
    """Return the threshold's lines: the threshold, then precision and recall of "score >=
    threshold" for the query and for all queries (each when known)."""
    i, t = threshold_of(step)
    lines = [f"Accept <b>score ≥ {t:.4f}</b>"]
    if query is not None:
        lines.append(accepted_line(query_name, query, i))
    if whole is not None:
        lines.append(accepted_line("all queries", whole, i))
    return "<br>".join(lines)


def tar_html(whole: PairScores) -> str:
    """Return the set's TAR at FAR line ("TAR@FAR=1e-04 12.3 % (score ≥ 0.8123) · ...";
    "no threshold" where no score keeps the FAR within the target)."""
    parts = []
    for p in tar_at_far(whole):
        if math.isnan(p.tar):
            parts.append(f"TAR@FAR={p.far_target:.0e} —")
            continue
        at = "no threshold" if math.isinf(p.threshold) else f"score ≥ {p.threshold:.4f}"
        parts.append(f"TAR@FAR={p.far_target:.0e} <b>{100 * p.tar:.1f} %</b> ({at})")
    return " · ".join(parts)


def pairs_html(whole: PairScores) -> str:
    """Return the sentence saying which pairs the set's histograms count."""
    return (f"All queries: {whole.n_positive:,} positive and {whole.n_negative:,} negative "
            "pairs (every query–gallery pair the protocol does not ignore)")
