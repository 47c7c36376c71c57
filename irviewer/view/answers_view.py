"""What the window says of a query's answers where a benchmark scores answers rather than
ranks (DISC21 copy detection: every predicted pair counts in microAP, a query without a copy
included), and of the queries a protocol leaves out of its means (Qt-free).

A query without a copy is no "skipped" query there: each answer it receives is a false
positive that ranks, by its score, among every other query's answers. Its header says how
many answers it got and the best score, and whether that score reaches the threshold at
which precision is still 90 % (the operating point isc2021 reports), in which case the
answer is one of the false positives that point accepts.
"""

from __future__ import annotations

import math

import numpy as np

from irviewer.core.copy_detection import COPY_DETECTION
from irviewer.core.errors import counted
from irviewer.core.evaluation import Evaluation
from irviewer.core.protocols import Protocol


def has_answers(evaluation: Evaluation) -> bool:
    """Return whether ``evaluation`` scores answers (each query's number of answers and
    best score are known): a copy-detection evaluation."""
    return evaluation.protocol.family == COPY_DETECTION and "top_score" in evaluation.per_query


def answers_words(evaluation: Evaluation, q: int) -> str:
    """Return what query ``q``'s answers were, in words (rich text): how many, the best
    score, and whether it reaches the 90 %-precision threshold; "" where the evaluation
    does not score answers."""
    if not has_answers(evaluation):
        return ""
    n = int(evaluation.per_query["n_answers"][q])
    if n == 0:
        return "no answer"
    best = float(evaluation.per_query["top_score"][q])
    threshold = float(evaluation.summary.get("threshold@P90", math.nan))
    text = f"{counted(n, 'answer')}, the best at score <b>{best:.4g}</b>"
    if math.isnan(threshold):
        return text
    reaches = best >= threshold
    return text + (f" (at or above the 90 %-precision threshold {threshold:.4g})" if reaches
                   else f" (below the 90 %-precision threshold {threshold:.4g})")


def left_out_words(evaluation: Evaluation, q: int) -> str:
    """Return the header of a query without positives under the evaluation's protocol: why
    it is out of the means, and its answers where they are scored (rich text)."""
    protocol = evaluation.protocol
    if protocol.family == COPY_DETECTION:
        answers = answers_words(evaluation, q)
        no_copy = "<b>no copy</b> among the references"
        if answers in ("", "no answer"):
            return f"{no_copy}: no answer, so nothing counts against microAP"
        false = ("false positives" if int(evaluation.per_query["n_answers"][q]) > 1
                 else "a false positive")
        return f"{no_copy} &nbsp; {answers}: {false} in microAP"
    return f"skipped: {protocol.family_note or 'no positive left'}"


def counts_words(protocol: Protocol, n_evaluated: int, n_skipped: int) -> str:
    """Return the summary bar's query counts: "N evaluated, M skipped", in a family's own
    words where the queries without positives are not skipped ones (copy detection: with
    and without a copy; Google Landmarks: a test image of the other Usage)."""
    if protocol.family == COPY_DETECTION:
        return f"{n_evaluated:,} queries with a copy, {n_skipped:,} without"
    if protocol.family_note:
        return f"{n_evaluated:,} evaluated, {n_skipped:,} of another Usage"
    return f"{n_evaluated:,} evaluated, {n_skipped:,} skipped"


def top_scores(evaluation: Evaluation) -> np.ndarray:
    """Return each query's best answer score (nan without answers, or where the evaluation
    does not score answers)."""
    if not has_answers(evaluation):
        return np.full(evaluation.dataset.n_queries, np.nan)
    return np.asarray(evaluation.per_query["top_score"], dtype=np.float64)
