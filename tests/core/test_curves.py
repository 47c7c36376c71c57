"""Dataset-level curves: hand-computed values on a lined-up case, and invariants on random
evaluations (means of the per-query values the evaluation reports)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.core.curves import (
    ap_bin_edges,
    ap_bin_index,
    ap_histogram,
    cmc_curve,
    in_ap_range,
    mean_precision_at,
    query_precision_at,
)
from irviewer.core.dataset import Dataset, build_query
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import Protocol, get_protocol
from irviewer.core.ranking import rank
from tests.core.helpers import aligned, random_dataset, sign_vectors

MARKET_LIKE = Protocol("t", "test", positive=("positive",), ap="finite", cmc="market")


def lined_up(positives: list[list[int]], n_gallery: int = 6, protocol=MARKET_LIKE):
    """Every query ranks the gallery in index order, so a positive's index is its rank."""
    queries = tuple(build_query(f"q{i}", f"q{i}", {"positive": p})
                    for i, p in enumerate(positives))
    ds = Dataset(name="t", format="test", path=None,
                 gallery=tuple(f"g{i}" for i in range(n_gallery)), queries=queries,
                 groups=("positive",), protocols=("instance",))
    angles = np.linspace(0.0, 3.0, n_gallery)
    gallery = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    q = np.tile(np.array([[1.0, 0.0]], dtype=np.float32), (len(positives), 1))
    return evaluate(ds, rank(aligned(q, gallery), ds, k=n_gallery), protocol)


# q0 finds positives at ranks 1 and 3, q1 at rank 2; q2 has none and is skipped.
CASE = [[0, 2], [1], []]


def test_mean_precision_at_k_by_hand():
    ks, p = mean_precision_at(lined_up(CASE), 4)
    assert ks.tolist() == [1, 2, 3, 4]
    # k=1: (1 + 0)/2; k=2: (1/2 + 1/2)/2; k=3: (2/3 + 1/3)/2; k=4: (2/4 + 1/4)/2
    np.testing.assert_allclose(p, [0.5, 0.5, 0.5, 0.375])


def test_query_precision_at_k_by_hand_and_skipped_queries():
    ev = lined_up(CASE)
    np.testing.assert_allclose(query_precision_at(ev, 0, 4)[1], [1, 0.5, 2 / 3, 0.5])
    assert np.isnan(query_precision_at(ev, 2, 4)[1]).all()


def test_cmc_by_hand():
    ks, cmc = cmc_curve(lined_up(CASE), 3)
    assert ks.tolist() == [1, 2, 3]
    np.testing.assert_allclose(cmc, [0.5, 1.0, 1.0])  # first positives at ranks 1 and 2


def test_no_cmc_without_a_cmc_protocol_and_cuhk03_at_its_points():
    plain = Protocol("p", "test", positive=("positive",))
    ks, cmc = cmc_curve(lined_up(CASE, protocol=plain), 10)
    assert len(ks) == len(cmc) == 0
    ev = lined_up(CASE)
    cuhk = Protocol("c", "test", positive=("positive",), cmc="cuhk03", cmc_ks=(1, 5, 20))
    fake = type(ev)(ev.dataset, ev.ranking, cuhk, ev.positives, ev.per_query,
                    {"CMC@1": 0.25, "CMC@5": 0.75, "CMC@20": 1.0})
    ks, cmc = cmc_curve(fake, 10)
    assert ks.tolist() == [1, 5] and cmc.tolist() == [0.25, 0.75]


def test_ap_histogram_by_hand_and_the_filters_bin_rule():
    ev = lined_up(CASE)  # AP: q0 (1 + 2/3)/2 = 0.833, q1 1/2; q2 skipped
    edges, counts = ap_histogram(ev, 10)
    assert counts.tolist() == [0, 0, 0, 0, 0, 1, 0, 0, 1, 0]
    assert edges[5] == 0.5
    ev = lined_up([[0], [1], [2], [3]])  # four evaluated queries; their AP set by hand:
    fake = replace(ev, per_query={**ev.per_query, "AP": np.array([0.3, 0.5, 1.0, 0.0])})
    edges, counts = ap_histogram(fake, 10)
    # 0.3 is below linspace's 0.30000000000000004: bin 2, where the filter's
    # low <= AP < high also puts it; AP = 1 in the last bin.
    assert counts.tolist() == [1, 0, 1, 0, 0, 1, 0, 0, 0, 1]
    assert edges[2] <= 0.3 < edges[3]


def test_bad_depths_and_bins():
    ev = lined_up(CASE)
    for call in (lambda: mean_precision_at(ev, 0), lambda: cmc_curve(ev, -1),
                 lambda: query_precision_at(ev, 0, 2.5), lambda: ap_histogram(ev, 0)):
        with pytest.raises(InputError, match="at least 1"):
            call()


def test_nothing_evaluated_gives_nan_curves():
    ev = lined_up([[], []])
    assert np.isnan(mean_precision_at(ev, 3)[1]).all()
    assert np.isnan(cmc_curve(ev, 3)[1]).all()
    assert ap_histogram(ev, 4)[1].tolist() == [0, 0, 0, 0]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["instance", "market1501"]))
def test_curves_equal_the_means_of_the_evaluations_own_values(seed, name):
    rng = np.random.default_rng(seed)
    ds = random_dataset(rng, 6, 30, max_per_group=5, with_self=True)
    ev = evaluate(ds, rank(aligned(sign_vectors(rng, 6), sign_vectors(rng, 30)), ds, k=30),
                  get_protocol(name).override(positive=("positive",), ignored=("junk",)))
    _ks, p = mean_precision_at(ev, 10)
    ok = ev.evaluated
    for k in (1, 5, 10):
        if ok.any():
            assert p[k - 1] == pytest.approx(float(np.mean(ev.per_query[f"P@{k}"][ok])))
    per_query = np.array([query_precision_at(ev, q, 10)[1] for q in range(6)])
    if ok.any():
        np.testing.assert_allclose(per_query[ok].mean(axis=0), p)
    assert np.all((p[~np.isnan(p)] >= 0) & (p[~np.isnan(p)] <= 1))
    _ks, cmc = cmc_curve(ev, 10)
    if name == "market1501" and ok.any():
        assert np.all(np.diff(cmc) >= 0) and cmc[0] >= 0 and cmc[-1] <= 1
        for k in (1, 5, 10):
            assert cmc[k - 1] == pytest.approx(ev.summary[f"CMC@{k}"])
    _edges, counts = ap_histogram(ev, 10)
    assert counts.sum() == ok.sum()


def test_ap_bin_index_and_in_ap_range_by_hand():
    edges = ap_bin_edges(10)
    ap = np.array([0.0, 0.3, 0.30000000000000004, 0.95, 1.0, np.nan, -0.1, 1.2])
    assert ap_bin_index(ap, edges).tolist() == [0, 2, 3, 9, 9, -1, -1, -1]
    assert in_ap_range(ap, edges[2], edges[3]).tolist() == [False, True, False, False, False, False,
                                                   False, False]
    assert in_ap_range(ap, 0.9, 1.0).tolist() == [False, False, False, True, True, False,
                                                   False, False]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30), st.integers(1, 12))
def test_a_bin_holds_exactly_what_its_range_filter_lists(values, bins):
    ap = np.array(values)
    edges = ap_bin_edges(bins)
    which = ap_bin_index(ap, edges)
    for i in range(bins):
        np.testing.assert_array_equal(which == i, in_ap_range(ap, edges[i], edges[i + 1]))
