"""Metric learning's protocols (MAP@R, R-precision, P@1, Recall@K on leave-one-out sets;
Recall@K on query -> gallery sets) against hand-computed cases and against transcriptions of
their reference evaluators (tests/core/learning_reference.py), and the conventions table's
rows that show the "first result dropped" and "ties for the positive" rules beside them."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.core.conventions import all_conventions
from irviewer.core.evaluation import Evaluation, evaluate
from irviewer.core.label_sets import leave_one_out_dataset, query_gallery_dataset
from irviewer.core.learning_metrics import average_precision_at_r, first_result_dropped
from irviewer.core.metrics import ragged
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import rank
from tests.core.helpers import aligned
from tests.core.learning_reference import (
    accuracy_calculator,
    inshop_recall,
    papers_recall,
    query_gallery_recall,
    recall_by_index,
)

FEW = settings(max_examples=120, deadline=None)


def unit_at(degrees: list[float]) -> np.ndarray:
    """Return 2-D unit vectors at the given angles."""
    a = np.radians(np.asarray(degrees, dtype=np.float64))
    return np.column_stack([np.cos(a), np.sin(a)]).astype(np.float32)


def leave_one_out(x: np.ndarray, labels: list[object] | np.ndarray,
                  protocol: str = "metric-learning") -> Evaluation:
    dataset = leave_one_out_dataset(labels)
    return evaluate(dataset, rank(aligned(x, x), dataset), get_protocol(protocol))


def rows_of(ev: Evaluation) -> dict[str, float]:
    return {row.key: row.mean for row in all_conventions(ev)}


# -- hand-computed ------------------------------------------------------------------------

def test_five_images_two_labels_scored_by_hand():
    """Angles 0, 40, 170, 25, 100 degrees, labels A A A B B. Each A query ranks B, A, B, A
    (positives at 0-based ranks 1 and 3, R = 2): AP@R = (1/2) / 2, R-precision 1/2, mAP
    (1/2 + 2/4) / 2. Each B query has its one positive at rank 2 (R = 1): AP@R 0,
    Recall@4 1, finite AP 1/3."""
    ev = leave_one_out(unit_at([0, 40, 170, 25, 100]), ["A", "A", "A", "B", "B"])
    s = ev.summary
    assert s["mAP@R"] == pytest.approx(0.75 / 5)
    assert s["mR-precision"] == pytest.approx(1.5 / 5)
    assert s["mP@1"] == 0.0
    assert s["Recall@1"] == 0.0
    assert s["Recall@2"] == pytest.approx(0.6)
    assert s["Recall@4"] == s["Recall@8"] == 1.0
    assert s["mAP"] == pytest.approx((1.5 + 2 / 3) / 5)
    assert s["n_evaluated"] == 5 and s["n_skipped"] == 0
    np.testing.assert_allclose(ev.per_query["AP@R"], [0.25, 0.25, 0.25, 0.0, 0.0])


def test_a_label_with_one_image_is_skipped_not_counted_zero():
    """C has no other image: its query is left out of every mean, and a note says so."""
    ev = leave_one_out(unit_at([0, 10, 90]), ["A", "A", "C"])
    assert ev.summary["n_skipped"] == 1 and ev.summary["n_evaluated"] == 2
    assert ev.summary["mAP@R"] == 1.0 and ev.summary["Recall@1"] == 1.0
    assert math.isnan(ev.per_query["AP@R"][2])
    assert "1 image is alone in its label" in ev.dataset.notes[0]


def test_an_exact_duplicate_ranked_first_is_what_dropping_the_first_result_drops():
    """Images 0 and 1 are the same vector with labels B and A; 2 (A) at 30 degrees, 3 (B) at
    120. Query 1 ranks 0 (equal score, earlier in the gallery), itself, 2, 3. Removed by
    index its list is B, A, B: AP@R 0. Dropping the first result drops image 0 and leaves
    the query itself first, a same-label result: AP@R, R-precision, P@1 and Recall@1 become
    1. The other queries rank themselves first, so both rules agree on them."""
    ev = leave_one_out(unit_at([0, 0, 30, 120]), ["B", "A", "A", "B"])
    s = ev.summary
    assert (s["mAP@R"], s["mR-precision"], s["mP@1"], s["Recall@1"]) == (0, 0, 0, 0)
    assert s["Recall@2"] == 0.75 and s["Recall@4"] == 1.0
    rows = rows_of(ev)
    for key in ("MAP@R first dropped", "R-precision first dropped", "P@1 first dropped",
                "Recall@1 first dropped, every query"):
        assert rows[key] == 0.25, key
    assert rows["MAP@R by index"] == 0.0 and rows["Recall@1 by index"] == 0.0
    own = {row.key for row in all_conventions(ev) if row.own}
    assert {"MAP@R by index", "R-precision by index", "P@1 true", "Recall@1 by index"} <= own
    assert "MAP@R first dropped" not in own


def test_ap_at_r_counts_only_the_first_r_results():
    """Ranks 0, 2 and 5 of three positives (R = 3): precision 1 at rank 1 and 2/3 at rank 3
    count, the positive at rank 6 does not: (1 + 2/3) / 3. No positive gives nan."""
    batch = ragged([0, 2, 5, 1], [0, 3, 4, 4], [3, 1, 0])
    np.testing.assert_allclose(average_precision_at_r(batch), [(1 + 2 / 3) / 3, 0.0, np.nan])


def test_dropping_the_first_result_shifts_every_rank_up():
    """Query 0's label images (itself included) at ranks 0, 2, 3: dropping rank 0 leaves
    them at 1 and 2, and of the first R = 2 results only rank 1 is one (precision 1/2,
    divided by R). Query 1's at ranks 1 and 4 (a stranger first): after the drop the query
    itself is at rank 0 and counts; R = 1."""
    out = first_result_dropped(np.array([0, 2, 3, 1, 4]), np.array([0, 3, 5]),
                               np.array([3, 2]), (1, 2))
    np.testing.assert_allclose(out["AP@R"], [(1 / 2) / 2, 1.0])
    np.testing.assert_allclose(out["R-precision"], [0.5, 1.0])
    np.testing.assert_allclose(out["Recall@1"], [0.0, 1.0])
    np.testing.assert_allclose(out["Recall@2"], [1.0, 1.0])


def test_inshop_recall_with_a_tie_keeps_gallery_order_and_bounds_it():
    """The query scores gallery 0 (another item) and 1 (its item) equally: gallery order puts
    the stranger first (Recall@1 0); the papers' In-Shop code counts a hit when fewer than
    K negatives score above the best positive (1), which is the tie order's best."""
    q = unit_at([0])
    g = unit_at([20, -20, 90])
    dataset = query_gallery_dataset(["a"], ["b", "a", "a"])
    ev = evaluate(dataset, rank(aligned(q, g), dataset), get_protocol("inshop"))
    assert ev.summary["Recall@1"] == 0.0 and ev.summary["Recall@10"] == 1.0
    assert ev.ties.summary["Recall@1_best"] == 1.0
    assert ev.ties.summary["Recall@1_worst"] == 0.0
    assert rows_of(ev)["Recall@1 ties for the positive"] == 1.0
    assert inshop_recall(q, np.array(["a"]), g, np.array(["b", "a", "a"]), (1,)) == {1: 1.0}


# -- against the reference evaluators ---------------------------------------------------

@st.composite
def labelled_signs(draw, min_n: int = 2, max_n: int = 36):
    """Images as sign vectors in 4, 16 or 64 dimensions (every inner product exact in
    float32 and float64, so ties and exact duplicates are the same on both sides) with
    labels from a few classes."""
    n = draw(st.integers(min_n, max_n))
    dim = draw(st.sampled_from([4, 16, 64]))
    seed = draw(st.integers(0, 2**32 - 1))
    n_labels = draw(st.integers(1, 8))
    rng = np.random.default_rng(seed)
    x = rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=(n, dim))
    return x, rng.integers(0, n_labels, n)


def close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) < 1e-12


@FEW
@given(labelled_signs())
def test_leave_one_out_equals_accuracy_calculator_and_the_papers_recall(case):
    x, labels = case
    ev = leave_one_out(x, labels)
    s = ev.summary
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    ref = accuracy_calculator(unit, labels)
    assert close(s["mAP@R"], ref["mean_average_precision_at_r"])
    assert close(s["mR-precision"], ref["r_precision"])
    assert close(s["mP@1"], ref["precision_at_1"])
    assert close(s["mAP"], ref["mean_average_precision"])
    ks = (1, 2, 4, 8)
    by_index = recall_by_index(unit, labels, ks)
    for k in ks:
        assert close(s[f"Recall@{k}"], by_index[k]), k
    rows = rows_of(ev)
    old = accuracy_calculator(unit, labels, first_dropped=True)
    assert close(rows["MAP@R first dropped"], old["mean_average_precision_at_r"])
    assert close(rows["R-precision first dropped"], old["r_precision"])
    assert close(rows["P@1 first dropped"], old["precision_at_1"])
    papers = papers_recall(unit, labels, ks)
    for k in ks:
        if k < len(x):  # the papers' topk(1 + K) needs K results
            assert close(rows[f"Recall@{k} first dropped, every query"], papers[k]), k


@FEW
@given(labelled_signs(min_n=3))
def test_sop_cut_offs_equal_the_papers_recall_beyond_the_gallery(case):
    """Stanford Online Products' cut-offs 1, 10, 100, 1000 on sets smaller than 100: a
    cut-off past the last result counts every query that has a positive."""
    x, labels = case
    ev = leave_one_out(x, labels, "sop")
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    by_index = recall_by_index(unit, labels, (1, 10, 100, 1000))
    for k in (1, 10, 100, 1000):
        assert close(ev.summary[f"Recall@{k}"], by_index[k]), k


@FEW
@given(labelled_signs(min_n=4, max_n=40), st.integers(1, 3))
def test_query_gallery_equals_the_references(case, every):
    """Query images against a separate gallery: Recall@K in gallery order, its best tie
    order against Proxy-Anchor's evaluate_cos_Inshop, mAP, P@1 and R-precision against
    AccuracyCalculator with a reference set (ref_includes_query=False)."""
    x, labels = case
    q, g = x[::every + 1], np.delete(x, np.s_[::every + 1], axis=0)
    q_labels, g_labels = labels[::every + 1], np.delete(labels, np.s_[::every + 1])
    dataset = query_gallery_dataset(q_labels, g_labels)
    ev = evaluate(dataset, rank(aligned(q, g), dataset), get_protocol("inshop"))
    qu = q / np.linalg.norm(q, axis=1, keepdims=True)
    gu = g / np.linalg.norm(g, axis=1, keepdims=True)
    ks = (1, 10, 20, 30, 40, 50)
    ordered = query_gallery_recall(qu, q_labels, gu, g_labels, ks)
    for k in ks:
        assert close(ev.summary[f"Recall@{k}"], ordered[k]), k
    ref = accuracy_calculator(qu, q_labels, gu, g_labels)
    assert close(ev.summary["mAP"], ref["mean_average_precision"])
    assert close(ev.summary["mP@1"], ref["precision_at_1"])
    assert close(ev.summary["mR-precision"], ref["r_precision"])
    found = np.isin(q_labels, g_labels)
    if found.all():  # evaluate_cos_Inshop takes the max over a query's positives
        papers = inshop_recall(qu, q_labels, gu, g_labels, ks)
        rows = rows_of(ev)
        for k in ks:
            assert close(rows[f"Recall@{k} ties for the positive"], papers[k]), k


def test_keeping_the_query_image_leaves_no_self_removal_rule_to_compare():
    """With --self-match keep each query is its own first result and a positive: AP@R 1 on
    the five-image case; the table then has no by-index / first-dropped rows."""
    dataset = leave_one_out_dataset(["A", "A", "A", "B", "B"])
    x = unit_at([0, 40, 170, 25, 100])
    kept = get_protocol("metric-learning").override(self_match="keep")
    ev = evaluate(dataset, rank(aligned(x, x), dataset), kept)
    np.testing.assert_allclose(ev.per_query["AP@R"], [(1 + 2 / 3) / 3] * 3 + [1 / 2] * 2)
    keys = {row.key for row in all_conventions(ev)}
    assert not any("first dropped" in k or "by index" in k for k in keys)
