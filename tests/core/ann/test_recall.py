"""Recall against the exact top k: ann-benchmarks' rule and big-ann-benchmarks' tie-aware
rule, by hand, against a transcription of each benchmark's loop, and as properties."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.core.ann.recall import (
    recall_ann_benchmarks,
    recall_tie_aware,
)

NAN = float("nan")


def test_ann_benchmarks_rule_by_hand():
    # Exact similarities of the top 3: 0.9, 0.8, 0.7; returned items' true similarities.
    exact = np.array([[0.9, 0.8, 0.7]])
    returned = np.array([[0.9, 0.6995, 0.5]])
    # k=3: the threshold is 0.7 - 0.001 = 0.699; 0.9 and 0.6995 count, 0.5 does not.
    assert recall_ann_benchmarks(exact, returned, 3)[0] == 2 / 3
    # k=1: the threshold is 0.899: only the first item is looked at, and counts.
    assert recall_ann_benchmarks(exact, returned, 1)[0] == 1.0
    # Lists shorter than k give nan (the depth is below k).
    assert np.isnan(recall_ann_benchmarks(exact, returned, 4)[0])


def test_ann_benchmarks_rule_counts_ties_with_other_ids():
    # Two gallery images with the same similarity: whichever the index returns counts.
    exact = np.array([[1.0, 0.5, 0.5]])
    assert recall_ann_benchmarks(exact, np.array([[1.0, 0.5, 0.5]]), 3)[0] == 1.0


def test_tie_aware_rule_by_hand():
    exact_ids = np.array([[4, 7, 2, 9, 5]])
    exact_scores = np.array([[0.9, 0.8, 0.7, 0.7, 0.1]])
    # k=3: the truth is 4, 7, 2 and 9 (tied with the 3rd within 1e-6); returned 4, 9, 5.
    assert recall_tie_aware(exact_ids, exact_scores, np.array([[4, 9, 5, 0, 0]]), 3)[0] \
        == 2 / 3
    # Without the tie 9 would not count.
    untied = np.array([[0.9, 0.8, 0.7, 0.69, 0.1]])
    assert recall_tie_aware(exact_ids, untied, np.array([[4, 9, 5, 0, 0]]), 3)[0] == 1 / 3


def _ann_benchmarks_loop(exact_scores, returned, k):
    """ann-benchmarks' get_recall_values with knn_threshold, on distances 1 - similarity."""
    out = []
    for e, r in zip(exact_scores, returned, strict=True):
        t = (1 - e[k - 1]) + 1e-3
        out.append(sum(1 for d in (1 - r[:k]) if d <= t) / k)
    return np.array(out)


def _big_ann_loop(exact_ids, exact_scores, returned_ids, k):
    """big-ann-benchmarks' compute_recall_with_distance_ties, on distances."""
    out = []
    for ids, s, run in zip(exact_ids, exact_scores, returned_ids, strict=True):
        d = 1 - s
        end = len(d)
        for i in range(k, len(d)):
            if not abs(d[k - 1] - d[i]) < 1e-6:
                end = i
                break
        out.append(len(set(ids[:end]) & set(run[:k])) / k)
    return np.array(out)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 12), st.integers(1, 6))
def test_both_rules_match_the_benchmarks_loops(seed, n_gallery, k):
    rng = np.random.default_rng(seed)
    n_q, depth = 5, n_gallery
    k = min(k, depth)
    sims = np.round(rng.uniform(-1, 1, (n_q, n_gallery)), 2)  # ties happen
    exact_ids = np.argsort(-sims, axis=1, kind="stable")
    exact_scores = np.take_along_axis(sims, exact_ids, axis=1)
    returned_ids = np.array([rng.permutation(n_gallery) for _ in range(n_q)])
    returned_sims = np.take_along_axis(sims, returned_ids, axis=1)
    np.testing.assert_allclose(recall_ann_benchmarks(exact_scores, returned_sims, k),
                               _ann_benchmarks_loop(exact_scores, returned_sims, k))
    np.testing.assert_allclose(recall_tie_aware(exact_ids, exact_scores, returned_ids, k),
                               _big_ann_loop(exact_ids, exact_scores, returned_ids, k))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 10))
def test_the_exact_lists_have_recall_one_and_recall_lies_in_0_1(seed, k):
    rng = np.random.default_rng(seed)
    sims = rng.uniform(-1, 1, (4, 15))
    ids = np.argsort(-sims, axis=1, kind="stable")
    scores = np.take_along_axis(sims, ids, axis=1)
    assert (recall_ann_benchmarks(scores, scores, k) == 1).all()
    assert (recall_tie_aware(ids, scores, ids, k) == 1).all()
    other = np.array([rng.permutation(15) for _ in range(4)])
    r = recall_ann_benchmarks(scores, np.take_along_axis(sims, other, axis=1), k)
    assert ((r >= 0) & (r <= 1)).all()
