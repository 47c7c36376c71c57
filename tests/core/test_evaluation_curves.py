"""The curves of an Evaluation (mean and per-query P@k and CMC: :mod:`irviewer.core.curves`; AP
values): hand-computed values on hand-built PositiveRanks and a lined-up ranking, and
invariants on random ragged ranks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.core import curves, metrics
from irviewer.core.dataset import Dataset, build_query
from irviewer.core.errors import InputError
from irviewer.core.evaluation import (
    Evaluation,
    PositiveRanks,
    _per_query,
    _summary,
    evaluate,
)
from irviewer.core.protocols import Protocol
from irviewer.core.ranking import rank
from tests.core.helpers import aligned

MARKET = Protocol("m", "test", positive=("positive",), ap="finite", cmc="market",
                  ks=(1, 2, 5), cmc_ks=(1, 2, 5))


def from_ranks(per_query: list[tuple[list[int], int]], protocol: Protocol = MARKET
               ) -> Evaluation:
    """An Evaluation built straight from (sorted 0-based positive ranks, n_positives) per
    query, scored with the evaluation's own per-query and summary code."""
    ranks = np.array([r for rs, _ in per_query for r in rs], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum([len(rs) for rs, _ in per_query])]
                             ).astype(np.int64)
    n = np.array([k for _, k in per_query], dtype=np.int64)
    p = PositiveRanks(ranks, offsets, n)
    values = _per_query(p, protocol)
    return Evaluation(None, None, protocol, p, values, _summary(values, p, protocol))


# q0: positives at ranks 0 and 2 of 3; q1: no positive (skipped); q2: ranks 1 and 4 of 3;
# q3: 2 positives, none retrieved (evaluated, scores 0).
HAND = [([0, 2], 3), ([], 0), ([1, 4], 3), ([], 2)]


def test_precision_curve_by_hand():
    ks, p = curves.mean_precision_at(from_ranks(HAND), 5)
    assert ks.tolist() == [1, 2, 3, 4, 5]
    # positives within the top k over the 3 evaluated queries: 1, 2, 3, 3, 4 -> / (3k)
    np.testing.assert_allclose(p, [1 / 3, 2 / 6, 3 / 9, 3 / 12, 4 / 15])


def test_query_precision_curve_by_hand_and_nan_when_skipped():
    ev = from_ranks(HAND)
    np.testing.assert_allclose(curves.query_precision_at(ev, 0, 5)[1],
                               [1, 1 / 2, 2 / 3, 2 / 4, 2 / 5])
    np.testing.assert_allclose(curves.query_precision_at(ev, 2, 5)[1],
                               [0, 1 / 2, 1 / 3, 1 / 4, 2 / 5])
    np.testing.assert_allclose(curves.query_precision_at(ev, 3, 3)[1], [0, 0, 0])
    ks, skipped = curves.query_precision_at(ev, 1, 4)
    assert ks.tolist() == [1, 2, 3, 4] and np.isnan(skipped).all()


def test_cmc_curve_by_hand_is_first_match():
    ks, cmc = curves.cmc_curve(from_ranks(HAND), 4)
    assert ks.tolist() == [1, 2, 3, 4]
    # first positives: q0 at 0, q2 at 1, q3 never; q1 skipped (not counted as a miss)
    np.testing.assert_allclose(cmc, [1 / 3, 2 / 3, 2 / 3, 2 / 3])


def test_ap_values_by_hand_leave_skipped_queries_out():
    queries, ap = from_ranks(HAND).ap_values()
    assert queries.tolist() == [0, 2, 3]
    # finite AP: q0 (1/1 + 2/3)/3, q2 (1/2 + 2/5)/3, q3 nothing retrieved
    np.testing.assert_allclose(ap, [(1 + 2 / 3) / 3, (1 / 2 + 2 / 5) / 3, 0.0])


def test_curves_agree_with_the_summary_at_its_cut_offs():
    ev = from_ranks(HAND)
    _, p = curves.mean_precision_at(ev, 5)
    _, cmc = curves.cmc_curve(ev, 5)
    for k in MARKET.ks:
        assert p[k - 1] == pytest.approx(ev.summary[f"mP@{k}"])
    for k in MARKET.cmc_ks:
        assert cmc[k - 1] == pytest.approx(ev.summary[f"CMC@{k}"])
    assert ev.ap_values()[1].mean() == pytest.approx(ev.summary["mAP"])


def test_junk_removed_before_ranks_through_evaluate():
    # Gallery ranked in index order; positives 0, 2, 5, 8 and junk 1, 4 -> ranks 0, 1, 3, 6.
    n_gallery = 10
    angles = np.linspace(0.0, 3.0, n_gallery)
    gallery = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    ds = Dataset(name="t", format="test", path=None,
                 gallery=tuple(f"g{i}" for i in range(n_gallery)),
                 queries=(build_query("q", "q", {"positive": [0, 2, 5, 8], "junk": [1, 4]}),),
                 groups=("positive", "junk"), protocols=("instance",))
    protocol = Protocol("t", "test", positive=("positive",), ignored=("junk",), cmc="market")
    ev = evaluate(ds, rank(aligned(np.array([[1.0, 0.0]], np.float32), gallery), ds, k=10),
                  protocol)
    ks, p = curves.mean_precision_at(ev, 8)
    np.testing.assert_allclose(p, np.array([1, 2, 2, 3, 3, 3, 4, 4]) / ks)
    np.testing.assert_allclose(curves.query_precision_at(ev, 0, 8)[1], p)
    assert p[4] == pytest.approx(ev.summary["mP@5"])
    np.testing.assert_allclose(curves.cmc_curve(ev, 3)[1], [1, 1, 1])
    no_cmc = evaluate(ds, ev.ranking, protocol.override(cmc="none"))
    ks, cmc = curves.cmc_curve(no_cmc, 10)
    assert len(ks) == len(cmc) == 0


def test_cuhk03_curve_is_the_summary_at_its_cut_offs():
    ev = from_ranks(HAND)
    cuhk = MARKET.override(cmc="cuhk03", cmc_ks=(1, 5, 20))
    fake = Evaluation(None, None, cuhk, ev.positives, ev.per_query,
                      {"CMC@1": 0.25, "CMC@5": 0.75, "CMC@20": 1.0})
    ks, cmc = curves.cmc_curve(fake, 10)
    assert ks.tolist() == [1, 5] and cmc.tolist() == [0.25, 0.75]


def test_nothing_evaluated_gives_nan_curves_and_no_ap():
    ev = from_ranks([([], 0), ([], 0)])
    assert np.isnan(curves.mean_precision_at(ev, 3)[1]).all()
    assert np.isnan(curves.cmc_curve(ev, 3)[1]).all()
    queries, ap = ev.ap_values()
    assert len(queries) == len(ap) == 0


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "5"])
def test_bad_depth_is_an_input_error(bad):
    with pytest.raises(InputError, match="curve depth"):
        curves.mean_precision_at(from_ranks(HAND), bad)
    with pytest.raises(InputError, match="curve depth"):
        curves.cmc_curve(from_ranks(HAND), bad)


@pytest.mark.parametrize("bad", [4, -1, True, 1.0])
def test_unknown_query_is_an_input_error(bad):
    with pytest.raises(InputError, match=f"no query {bad!r}: there are 4 queries"):
        curves.query_precision_at(from_ranks(HAND), bad, 3)


@st.composite
def ragged(draw):
    """Per query: n positives (0..6) and a sorted subset of at most n ranks below 30."""
    out = []
    for _ in range(draw(st.integers(1, 8))):
        n = draw(st.integers(0, 6))
        ranks = draw(st.lists(st.integers(0, 29), max_size=n, unique=True))
        out.append((sorted(ranks), n))
    return out


@settings(max_examples=150, deadline=None)
@given(ragged(), st.integers(1, 35), st.sampled_from(["finite", "trapezoid"]))
def test_curves_are_bounded_monotone_and_match_the_batch_metrics(case, max_k, rule):
    protocol = MARKET.override(ap=rule, ks=(1, 3, 10, 30), cmc_ks=(1, 3, 10, 30))
    ev = from_ranks(case, protocol)
    p = ev.positives
    ok = ev.evaluated
    ks, mean_p = curves.mean_precision_at(ev, max_k)
    cks, cmc = curves.cmc_curve(ev, max_k)
    assert ks.tolist() == cks.tolist() == list(range(1, max_k + 1))
    if not ok.any():
        assert np.isnan(mean_p).all() and np.isnan(cmc).all()
        return
    assert np.all((mean_p >= 0) & (mean_p <= 1))
    assert np.all((cmc >= 0) & (cmc <= 1)) and np.all(np.diff(cmc) >= 0)
    for k in protocol.ks:
        if k <= max_k:
            assert mean_p[k - 1] == pytest.approx(ev.summary[f"mP@{k}"], abs=1e-12)
            assert cmc[k - 1] == pytest.approx(ev.summary[f"CMC@{k}"], abs=1e-12)
    # every k against the batch metrics (the per-query conventions), means over evaluated
    batch = metrics.ragged(p.ranks, p.offsets, p.n_positives)
    by_k = np.column_stack([batch.precision_at_k(int(k)) for k in ks])
    np.testing.assert_allclose(mean_p, by_k[ok].mean(axis=0), atol=1e-12)
    first = metrics.ragged(p.ranks, p.offsets, p.n_positives).cmc_first_match(ks)
    np.testing.assert_allclose(cmc, first[ok].mean(axis=0), atol=1e-12)
    for q in range(len(ok)):
        mine = curves.query_precision_at(ev, q, max_k)[1]
        if ok[q]:
            np.testing.assert_allclose(mine, by_k[q], atol=1e-12)
            assert np.all(np.diff(np.round(mine * ks)) >= 0)  # hits never decrease
        else:
            assert np.isnan(mine).all()
    queries, ap = ev.ap_values()
    assert queries.tolist() == np.flatnonzero(ok).tolist()
    assert np.all((ap >= 0) & (ap <= 1))
    assert ap.mean() == pytest.approx(ev.summary["mAP"], abs=1e-12)
