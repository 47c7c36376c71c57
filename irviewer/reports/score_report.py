"""The ``scores`` member of ``irviewer eval --json --scores`` and its lines in the table: the
positive and negative pairs' score histograms and TAR at FAR with their thresholds
(:mod:`irviewer.core.score_distribution`). Qt-free."""

from __future__ import annotations

import math

from irviewer.core.score_distribution import PairScores, coarse_histogram, tar_at_far

#: How the pairs and the operating points are defined, as the report says it.
PAIRS = ("every (query, gallery image) pair the protocol does not ignore: positive when the "
         "image is one of the query's positives, negative otherwise")
TAR_AT_FAR = ("accepting score >= threshold, TAR = accepted positive pairs / positive pairs "
              "and FAR = accepted negative pairs / negative pairs; the threshold is the "
              "lowest score whose FAR is at most the target (the ROC point with the largest "
              "FPR not above it; fast-reid reports the nearest point instead)")
#: Bins of the report's histograms over [-1, 1] (width 1/128).
HISTOGRAM_BINS = 256


def scores_record(pairs: PairScores) -> dict:
    """Return the ``scores`` member of one evaluation: ``pairs`` and ``convention`` (the
    sentences above), ``n_positive``, ``n_negative``, ``tar_at_far`` (per target:
    ``far_target``, ``threshold`` (null when no score keeps the FAR within the target),
    ``tar``, ``far``) and ``histogram`` (``edges``, ``positives``, ``negatives``: counts of
    pairs in bins of width 1/128, from the first to the last bin holding a pair)."""
    edges, pos, neg = coarse_histogram(pairs, HISTOGRAM_BINS)
    return {
        "pairs": PAIRS,
        "convention": TAR_AT_FAR,
        "n_positive": pairs.n_positive,
        "n_negative": pairs.n_negative,
        "tar_at_far": [{"far_target": p.far_target,
                        "threshold": None if not math.isfinite(p.threshold) else p.threshold,
                        "tar": _number(p.tar), "far": _number(p.far)}
                       for p in tar_at_far(pairs)],
        "histogram": {"edges": edges.tolist(), "positives": pos.tolist(),
                      "negatives": neg.tolist()},
    }


def _number(x: float) -> float | None:
    return None if math.isnan(x) else x


def score_lines(record: dict) -> list[str]:
    """Return the table's lines for one evaluation's ``scores`` member."""
    lines = [f"  scores: {record['n_positive']:,} positive and {record['n_negative']:,} "
             "negative pairs (every pair the protocol does not ignore)"]
    for p in record["tar_at_far"]:
        if p["tar"] is None:
            lines.append(f"    TAR@FAR={p['far_target']:.0e}      n/a")
            continue
        where = ("no threshold" if p["threshold"] is None
                 else f"threshold {p['threshold']:.4f}")
        lines.append(f"    TAR@FAR={p['far_target']:.0e} {100 * p['tar']:8.2f}  {where} "
                     f"(FAR reached {p['far']:.1e}; accept score >= threshold)")
    return lines
