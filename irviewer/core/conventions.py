"""One ranking's numbers under every convention irviewer knows, side by side.

Implementations of "mAP" disagree by several points on the same ranking, because each
benchmark integrates the precision-recall curve its own way, divides by its own count, and
keeps or removes the query's own image. :func:`all_conventions` scores an evaluation's
ranking under each of them, from the positive ranks it already has (no ranking again):
the AP rules of :mod:`irviewer.core.ap_rules` under the protocol's denominator and
self-match rule, AP with the other denominator, AP with the query's own image kept or
removed the other way, and true P@k beside revisitop's mP@k. Each row names its source;
the row that is the protocol's own rule is marked, and its values are the evaluation's
(a row equals what ``irviewer eval --ap RULE`` gives alone).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irviewer.core import metrics
from irviewer.core.ap_rules import average_precision
from irviewer.core.convention_names import (
    ALL_POSITIVES,
    AP_DENOMINATORS,
    AP_EVALUATORS,
    AP_LABELS,
    AP_RULES,
    DEPTH_CAPPED,
    DEPTH_DENOMINATORS,
    KEEP,
    LIST_DEPTH,
    LISTED_POSITIVES,
    REMOVE,
)
from irviewer.core.evaluation import Evaluation, PositiveRanks, scored_ranks
from irviewer.core.learning_metrics import AP_AT_R, first_result_dropped, recall_key

#: Each AP rule's name in the table (its label without "AP"; its evaluators are
#: :data:`~irviewer.core.convention_names.AP_EVALUATORS`).
RULE_NAMES = {rule: AP_LABELS[rule].removesuffix(" AP") for rule in AP_RULES}
DENOMINATOR_NAMES = {ALL_POSITIVES: "over all positives",
                     LISTED_POSITIVES: "over the positives within the list",
                     DEPTH_CAPPED: "over min(positives, list depth)",
                     LIST_DEPTH: "over the list depth"}
DENOMINATOR_SOURCES = {
    ALL_POSITIVES: "trec_eval (num_rel from the qrels), revisitop, torchreid",
    LISTED_POSITIVES: "hpatches-benchmark retrieval_eval.m with VLFeat vl_pr (positives beyond "
                 "the scored list not counted)",
    DEPTH_CAPPED: "delf google_landmarks_dataset/metrics.py MeanAveragePrecision (the Google "
             "Landmark Retrieval challenges' mAP@100)",
    LIST_DEPTH: "lyakaap/Landmark2019-1st-and-3rd-Place-Solution src/metrics.py map_at_k (the "
            "2019 retrieval winners' own code: the mean over the k columns, so AP over k)",
}
SELF_MATCH_NAMES = {KEEP: "the query's own image kept", REMOVE: "the query's own image removed"}
SELF_MATCH_SOURCES = {KEEP: "Oxford5k / Paris6k compute_ap (the query is in its own good list)",
                      REMOVE: "instance sets, Holidays, HPatches, re-id"}
PK_SOURCES = {"true": "trec_eval P.k: positives in the first k over k",
              "revisitop": "revisitop compute_map: over min(k, rank of the last positive)"}


@dataclass(frozen=True)
class ConventionRow:
    """One convention's values: ``key`` (stable, e.g. ``AP trapezoid``), ``metric``
    (``AP`` or ``P@k``), ``name`` of the convention, ``source`` (the evaluators that use
    it), ``values`` per query (nan for a query left out), ``mean`` over the queries with a
    positive, ``own`` True for the protocol's own rule."""

    key: str
    metric: str
    name: str
    source: str
    values: np.ndarray
    mean: float
    own: bool

    def record(self) -> dict[str, object]:
        """Return the row as the JSON ``all_conventions`` entry (without the per-query
        values, which the caller writes beside the query names)."""
        return {"key": self.key, "metric": self.metric, "convention": self.name,
                "source": self.source, "value": None if np.isnan(self.mean) else self.mean,
                "protocol_own": self.own}


def _mean(values: np.ndarray, n_positives: np.ndarray) -> float:
    ok = n_positives > 0
    return float(np.mean(values[ok])) if ok.any() else float("nan")


def _row(key: str, metric: str, name: str, source: str, values: np.ndarray,
         p: PositiveRanks, own: bool) -> ConventionRow:
    return ConventionRow(key, metric, name, source, values, _mean(values, p.n_positives), own)


def _other_denominators(own: str, depth: int | None) -> list[str]:
    """Return the AP denominators shown beside the protocol's own: the other of all and
    retrieved, and where the protocol cuts its lists at a depth and divides by it (Google
    Landmarks v2), every other one, since evaluators of that benchmark disagree there."""
    if own in DEPTH_DENOMINATORS and depth is not None:
        return [d for d in AP_DENOMINATORS if d != own]
    return [LISTED_POSITIVES if own == ALL_POSITIVES else ALL_POSITIVES]


def all_conventions(ev: Evaluation) -> list[ConventionRow]:
    """Return the rows of ``ev``'s ranking under every convention (see the module), AP rows
    first, the protocol's own rule among them marked."""
    protocol = ev.protocol
    p = ev.positives
    batch = metrics.ragged(p.ranks, p.offsets, p.n_positives)
    den, depth = protocol.ap_positives, protocol.list_depth
    rows = []
    for rule in AP_RULES:
        own = rule == protocol.ap
        values = (np.asarray(ev.per_query["AP"], dtype=np.float64) if own
                  else average_precision(batch, rule, den, depth))
        source = AP_EVALUATORS[rule]
        if den in DEPTH_DENOMINATORS:  # the benchmark's own division, another integration
            source = DENOMINATOR_SOURCES[den] if own else \
                f"{source}, divided as the protocol divides"
        rows.append(_row(f"AP {rule}", "AP", f"{RULE_NAMES[rule]}, {DENOMINATOR_NAMES[den]}",
                         source, values, p, own))
    finite = AP_RULES[0]
    for other in _other_denominators(den, depth):
        rows.append(_row(f"AP {finite} {other}", "AP",
                         f"{RULE_NAMES[finite]}, {DENOMINATOR_NAMES[other]}",
                         DENOMINATOR_SOURCES[other],
                         average_precision(batch, finite, other, depth), p, False))
    flip = KEEP if protocol.self_match == REMOVE else REMOVE
    flipped = scored_ranks(ev.dataset, ev.ranking, protocol.override(self_match=flip))
    fb = metrics.ragged(flipped.ranks, flipped.offsets, flipped.n_positives)
    none = "" if ev.dataset.has_self_images else " (no query's own image is in the gallery)"
    rows.append(_row(f"AP {protocol.ap} self-match {flip}", "AP",
                     f"{RULE_NAMES[protocol.ap]}, {SELF_MATCH_NAMES[flip]}{none}",
                     SELF_MATCH_SOURCES[flip], average_precision(fb, protocol.ap, den, depth),
                     flipped, False))
    for k in protocol.ks:
        revisitop_own = protocol.family == "revisited"
        rows.append(_row(f"P@{k} true", f"P@{k}", "true P@k", PK_SOURCES["true"],
                         batch.precision_at_k(k), p, not revisitop_own))
        rows.append(_row(f"P@{k} revisitop", f"P@{k}", "revisitop mP@k",
                         PK_SOURCES["revisitop"], batch.precision_at_k_revisitop(k), p,
                         revisitop_own))
    if protocol.map_at_r or protocol.recall_ks:
        rows += _learning_rows(ev, flipped if flip == KEEP else None)
    return rows


BY_INDEX = ("pytorch-metric-learning 1.5.2 and later (2.x) AccuracyCalculator: "
            "inference.return_results removes the query's own index")
FIRST_DROPPED = ("pytorch-metric-learning up to 1.5.1 AccuracyCalculator: "
                 "inference.return_results keeps D[:, 1:], I[:, 1:]")
PAPERS_RECALL = ("the papers' Recall@K code, e.g. Proxy-Anchor (Kim et al. CVPR 2020) "
                 "utils.evaluate_cos: topk(1 + K)[1][:, 1:], calc_recall_at_k over every query")
INSHOP_RECALL = ("Proxy-Anchor (Kim et al. CVPR 2020) utils.evaluate_cos_Inshop: a hit when "
                 "fewer than K negatives score above the best positive")


def _learning_rows(ev: Evaluation, kept: PositiveRanks | None) -> list[ConventionRow]:
    """Return metric learning's rows: where the queries are gallery images too (``kept``:
    the positive ranks with the query's own image kept; None when the protocol keeps it,
    and then there is no row), MAP@R, R-precision, P@1 and Recall@K with the query removed
    by index (the protocol's own) beside the same with the first result dropped
    (:func:`~irviewer.core.learning_metrics.first_result_dropped`); on a query -> gallery
    set, Recall@K with tied scores in gallery order beside the same with ties resolved for
    the positive, as the papers' In-Shop code counts them."""
    protocol, p = ev.protocol, ev.positives
    rows: list[ConventionRow] = []
    if not ev.dataset.has_self_images:
        for k in protocol.recall_ks:
            key = recall_key(k)
            rows.append(_row(f"{key} gallery order", key, "tied scores in gallery order",
                             "irviewer's stable ranking", ev.per_query[key], p, True))
            rows.append(_row(f"{key} ties for the positive", key,
                             "tied scores ordered positives first", INSHOP_RECALL,
                             ev.ties.per_query[f"{key}_best"], p, False))
        return rows
    if kept is None:  # the query's own image is kept (--self-match keep): no rule to compare
        return rows
    dropped = first_result_dropped(kept.ranks, kept.offsets, kept.n_positives,
                                   protocol.recall_ks)
    pairs = [(AP_AT_R, "MAP@R")] if protocol.map_at_r else []
    for key, metric in (*pairs, ("R-precision", "R-precision"), ("P@1", "P@1")):
        if key != "P@1":  # the P@1 by index is the true P@k row above
            rows.append(_row(f"{metric} by index", metric, "the query removed by index",
                             BY_INDEX, ev.per_query[key], p, True))
        rows.append(_row(f"{metric} first dropped", metric, "the first result dropped",
                         FIRST_DROPPED, dropped[key], p, False))
    every = np.ones(len(p.n_positives), dtype=np.int64)
    for k in protocol.recall_ks:
        key = recall_key(k)
        rows.append(_row(f"{key} by index", key, "the query removed by index",
                         "irviewer, as pytorch-metric-learning 2.x removes the query",
                         ev.per_query[key], p, True))
        values = dropped[f"{key}_all"]
        rows.append(ConventionRow(f"{key} first dropped, every query", key,
                                  "the first result dropped, every query counted",
                                  PAPERS_RECALL, values, _mean(values, every), False))
    return rows
