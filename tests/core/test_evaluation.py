"""Evaluation: protocol removals, hand-computed values end to end, cheap single-query re-score."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.errors import InputError
from irviewer.core.evaluation import (
    IGNORED,
    NEGATIVE,
    POSITIVE,
    evaluate,
    protocol_ranks,
    query_roles,
)
from irviewer.core.protocols import Protocol, get_protocol
from irviewer.core.ranking import rank
from tests.core.helpers import aligned, random_dataset, sign_vectors


def line_up(n_gallery: int) -> tuple[np.ndarray, np.ndarray]:
    """One query and a gallery whose cosine to it strictly decreases with the gallery index."""
    angles = np.linspace(0.0, 3.0, n_gallery)
    gallery = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    return np.array([[1.0, 0.0]], dtype=np.float32), gallery


def one_query(groups: dict[str, list[int]], n_gallery: int = 10, self_index: int = -1,
              names: tuple[str, ...] = ("positive", "junk")) -> Dataset:
    q = build_query("q", "q", groups, self_index=self_index)
    return Dataset(name="t", format="test", path=None,
                   gallery=tuple(f"g{i}" for i in range(n_gallery)), queries=(q,),
                   groups=names, protocols=("instance",))


PROTO = Protocol("t", "test", positive=("positive",), ignored=("junk",), ap="finite")


def test_hand_computed_ap_with_junk_removed_before_ranks_are_counted():
    # Gallery ranked 0..9 in index order. Positives at 0, 2, 5, 8; junk at 1 and 4.
    # After removing junk the positives sit at ranks 0, 1, 3, 6 (0-based), of 4 positives.
    q, g = line_up(10)
    ds = one_query({"positive": [0, 2, 5, 8], "junk": [1, 4]})
    ev = evaluate(ds, rank(aligned(q, g), ds, k=10), PROTO)
    np.testing.assert_array_equal(ev.positives.of(0), [0, 1, 3, 6])
    assert ev.per_query["AP"][0] == pytest.approx((1 + 1 + 3 / 4 + 4 / 7) / 4)
    assert ev.per_query["P@5"][0] == pytest.approx(3 / 5)
    assert ev.per_query["first_positive_rank"][0] == 0
    trap = evaluate(ds, rank(aligned(q, g), ds, k=10), PROTO.override(ap="trapezoid"))
    # Trapezoid: per positive j at rank r, (j/r + (j+1)/(r+1)) / 2 / n, with j/r = 1 at r=0.
    expected = ((1 + 1) / 2 + (1 / 1 + 2 / 2) / 2 + (2 / 3 + 3 / 4) / 2 + (3 / 6 + 4 / 7) / 2) / 4
    assert trap.per_query["AP"][0] == pytest.approx(expected)
    assert ev.summary["mAP"] == pytest.approx((1 + 1 + 3 / 4 + 4 / 7) / 4)
    assert ev.summary["n_evaluated"] == 1 and ev.summary["n_skipped"] == 0


def test_self_match_keep_and_remove():
    # The query's own image is gallery item 0 (top), and it is in its positive group.
    q, g = line_up(6)
    ds = one_query({"positive": [0, 3]}, n_gallery=6, self_index=0)
    r = rank(aligned(q, g), ds, k=6)
    kept = evaluate(ds, r, PROTO.override(self_match="keep"))
    removed = evaluate(ds, r, PROTO.override(self_match="remove"))
    assert kept.per_query["AP"][0] == pytest.approx((1 + 2 / 4) / 2)
    assert removed.per_query["AP"][0] == pytest.approx(1 / 3)  # item 3 now at rank 2
    assert removed.per_query["n_positives"][0] == 1
    assert removed.relevance(0, np.array([0, 1, 3]))[0] == IGNORED


def test_query_without_positive_is_skipped_not_scored():
    q, g = line_up(6)
    ds = Dataset(name="t", format="test", path=None, gallery=tuple(f"g{i}" for i in range(6)),
                 queries=(build_query("a", "a", {"positive": [2]}),
                          build_query("b", "b", {"positive": [], "junk": [1]})),
                 groups=("positive", "junk"), protocols=("instance",))
    two = np.vstack([q, q])
    ev = evaluate(ds, rank(aligned(two, g), ds, k=6), PROTO)
    assert math.isnan(ev.per_query["AP"][1])
    assert ev.summary["mAP"] == pytest.approx(1 / 3)
    assert (ev.summary["n_evaluated"], ev.summary["n_skipped"]) == (1, 1)
    assert ev.skipped() == [("b", "no positive left after the protocol's removals")]


def test_ignored_wins_when_an_item_is_both_positive_and_ignored():
    ds = one_query({"positive": [1, 2], "junk": [2]})
    pos, ign = query_roles(ds.queries[0], PROTO, np.zeros(10, dtype=bool))
    assert pos.tolist() == [1] and ign.tolist() == [2]


def test_protocol_must_fit_the_dataset_groups():
    q, g = line_up(5)
    ds = one_query({"positive": [1]}, n_gallery=5, names=("positive",))
    with pytest.raises(InputError, match=r"protocol oxford needs relevance group\(s\) good, "
                                         r"ok, junk, but this dataset has positive"):
        evaluate(ds, rank(aligned(q, g), ds), get_protocol("oxford"))


def test_relevance_codes_for_tiles():
    q, g = line_up(8)
    ds = one_query({"positive": [1, 5], "junk": [2]}, n_gallery=8)
    ev = evaluate(ds, rank(aligned(q, g), ds, k=8), PROTO)
    codes = ev.relevance(0, ev.ranking.top_indices[0])
    assert codes.tolist() == [NEGATIVE, POSITIVE, IGNORED, NEGATIVE, NEGATIVE, POSITIVE,
                              NEGATIVE, NEGATIVE]


def test_missed_positives_lists_positives_beyond_k_with_ranks_after_removal():
    q, g = line_up(12)
    ds = one_query({"positive": [0, 6, 10], "junk": [3]}, n_gallery=12)
    ev = evaluate(ds, rank(aligned(q, g), ds, k=12), PROTO)
    idx, ranks = ev.missed_positives(0, k=4)
    assert idx.tolist() == [6, 10] and ranks.tolist() == [5, 9]


def per_query_reference(ds, r, protocol):
    """Positive ranks query by query, the slow obvious way."""
    mask = np.zeros(ds.n_gallery, dtype=bool)
    mask[ds.global_ignored] = True
    out = []
    for qi, query in enumerate(ds.queries):
        pos, ign = query_roles(query, protocol, mask)
        row = r.score_row(qi)
        order = np.argsort(-row.astype(np.float64), kind="stable")
        order = order[np.isfinite(row[order])]
        order = order[~np.isin(order, ign)]
        out.append((np.sort(np.flatnonzero(np.isin(order, pos))), len(pos)))
    return out


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), remove=st.booleans(), n_ign=st.integers(0, 5))
def test_vectorised_protocol_ranks_equal_the_per_query_reference(seed, remove, n_ign):
    rng = np.random.default_rng(seed)
    ignored = rng.choice(40, size=n_ign, replace=False)
    ds = random_dataset(rng, 6, 40, with_self=True, global_ignored=ignored)
    r = rank(aligned(sign_vectors(rng, 6), sign_vectors(rng, 40)), ds, k=10)
    protocol = PROTO.override(self_match="remove" if remove else "keep")
    got = protocol_ranks(ds, r, protocol)
    for qi, (ranks, n) in enumerate(per_query_reference(ds, r, protocol)):
        np.testing.assert_array_equal(got.of(qi), ranks)
        assert got.n_positives[qi] == n


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), remove=st.booleans())
def test_protocol_ranks_of_a_changed_ground_truth_rank_the_images_not_stored(seed, remove):
    """A ranking made before the ground truth changed does not store the new positives and
    junk images: they are ranked from the score row, with the same result as the reference
    (including an image both positive and junk, where junk wins)."""
    rng = np.random.default_rng(seed)
    ds = random_dataset(rng, 5, 50, with_self=True)
    r = rank(aligned(sign_vectors(rng, 5), sign_vectors(rng, 50)), ds, k=6)
    changed = []
    for q in ds.queries:
        positive = rng.choice(50, size=int(rng.integers(0, 8)), replace=False)
        junk = np.concatenate([rng.choice(50, size=int(rng.integers(0, 4)), replace=False),
                               positive[:1]])
        changed.append(build_query(q.name, q.image, {"positive": positive, "junk": junk},
                                   self_index=q.self_index))
    new = replace(ds, queries=tuple(changed))
    protocol = PROTO.override(self_match="remove" if remove else "keep")
    got = protocol_ranks(new, r, protocol)
    for qi, (ranks, n) in enumerate(per_query_reference(new, r, protocol)):
        np.testing.assert_array_equal(got.of(qi), ranks)
        assert got.n_positives[qi] == n


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_with_query_equals_a_full_re_evaluation(seed):
    rng = np.random.default_rng(seed)
    ds = random_dataset(rng, 5, 60, with_self=True)
    r = rank(aligned(sign_vectors(rng, 5), sign_vectors(rng, 60)), ds, k=8)
    ev = evaluate(ds, r, PROTO)
    qi = int(rng.integers(0, 5))
    # A correction: new positives, some far outside the stored items of interest.
    new = build_query(ds.queries[qi].name, ds.queries[qi].image,
                      {"positive": rng.choice(60, size=4, replace=False),
                       "junk": rng.choice(60, size=2, replace=False)},
                      self_index=ds.queries[qi].self_index)
    fast = ev.with_query(qi, new)
    queries = list(ds.queries)
    queries[qi] = new
    slow_ds = replace(ds, queries=tuple(queries))
    slow = evaluate(slow_ds, rank(r.descriptors, slow_ds, k=8), PROTO)
    for key in slow.per_query:
        np.testing.assert_allclose(fast.per_query[key], slow.per_query[key], equal_nan=True)
    assert fast.summary == pytest.approx(slow.summary, nan_ok=True)


def test_permuting_the_gallery_changes_no_metric():
    """Without ties, the gallery order does not matter: same AP and P@k for every query."""
    rng = np.random.default_rng(11)
    qv = rng.standard_normal((8, 32)).astype(np.float32)
    gv = rng.standard_normal((200, 32)).astype(np.float32)
    ds = random_dataset(rng, 8, 200, max_per_group=10)
    perm = rng.permutation(200)
    inverse = np.argsort(perm)
    queries = tuple(build_query(q.name, q.image, {k: inverse[v] for k, v in q.relevance.items()})
                    for q in ds.queries)
    ds2 = replace(ds, queries=queries, gallery=tuple(ds.gallery[i] for i in perm))
    a = evaluate(ds, rank(aligned(qv, gv), ds), PROTO)
    b = evaluate(ds2, rank(aligned(qv, gv[perm]), ds2), PROTO)
    for key in ("AP", "P@1", "P@5", "P@10", "R-precision"):
        np.testing.assert_allclose(a.per_query[key], b.per_query[key], equal_nan=True)


def test_mean_pr_curve_has_the_requested_levels():
    q, g = line_up(10)
    ds = one_query({"positive": [0, 2, 5, 8], "junk": [1, 4]})
    ev = evaluate(ds, rank(aligned(q, g), ds, k=10), PROTO)
    levels, precision = ev.mean_pr()
    assert len(levels) == 11 and precision[0] == pytest.approx(1.0)
    recall, prec = ev.pr_curve(0)
    np.testing.assert_allclose(recall, [0.25, 0.5, 0.75, 1.0])
    np.testing.assert_allclose(prec, [1, 1, 3 / 4, 4 / 7])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), ap=st.sampled_from(["finite", "trapezoid"]))
def test_every_metric_equals_the_naive_reference_on_full_rankings(seed, ap):
    """The whole pipeline against loops over a brute-force ranked list (tests/core/reference)."""
    from tests.core import reference

    rng = np.random.default_rng(seed)
    ds = random_dataset(rng, 6, 50, with_self=True, global_ignored=rng.choice(50, 3,
                                                                             replace=False))
    r = rank(aligned(sign_vectors(rng, 6), sign_vectors(rng, 50)), ds, k=50)
    protocol = PROTO.override(ap=ap, revisitop_pk=True, inp=True, cmc="market",
                              cmc_ks=(1, 3))
    ev = evaluate(ds, r, protocol)
    mask = np.zeros(50, dtype=bool)
    mask[ds.global_ignored] = True
    for qi, query in enumerate(ds.queries):
        pos, ign = query_roles(query, protocol, mask)
        order = [int(g) for g in np.argsort(-r.score_row(qi).astype(np.float64), kind="stable")
                 if not mask[g] and g not in set(ign.tolist())]
        flags = [g in set(pos.tolist()) for g in order]
        n = len(pos)
        if n == 0:
            assert math.isnan(ev.per_query["AP"][qi])
            continue
        want_ap = (reference.ap_finite if ap == "finite" else reference.ap_trapezoid)(flags, n)
        assert ev.per_query["AP"][qi] == pytest.approx(want_ap)
        for k in (1, 5, 10):
            assert ev.per_query[f"P@{k}"][qi] == pytest.approx(reference.precision_at(flags, k))
            assert ev.per_query[f"P@{k}(revisitop)"][qi] == pytest.approx(
                reference.precision_at_revisitop(flags, k))
        assert ev.per_query["INP"][qi] == pytest.approx(reference.inp(flags, n))
        for k in (1, 3):
            assert ev.per_query[f"CMC@{k}"][qi] == reference.cmc(flags, k)


def reid_case(labels: list[int], cameras: list[int], query_label: int, query_camera: int):
    """One query ranked against a gallery line-up (score falls with the gallery index)."""
    q, g = line_up(len(labels))
    lab = np.array(labels)
    same = np.flatnonzero(lab == query_label)
    cam = np.array(cameras)[same] == query_camera
    query = build_query("q", "q", {"positive": same[~cam], "same_camera": same[cam]},
                        meta={"label": query_label})
    ds = Dataset(name="reid", format="test", path=None,
                 gallery=tuple(f"g{i}" for i in range(len(labels))), queries=(query,),
                 groups=("positive", "same_camera"), protocols=("cuhk03",),
                 gallery_labels=lab)
    return ds, rank(aligned(q, g), ds, k=len(labels))


def test_cuhk03_single_gallery_shot_through_the_evaluation():
    # Ranked gallery ids: 4 (same camera as the query: removed), 2, 3, 4, 5.
    # One image per remaining identity, so sampling cannot change anything: the match
    # (id 4, other camera) is third among ids 2, 3, 4, 5 -> CMC@1 = 0, CMC@5 = 1.
    ds, r = reid_case([4, 2, 3, 4, 5], [1, 2, 2, 3, 2], query_label=4, query_camera=1)
    protocol = get_protocol("cuhk03").override(cmc_ks=(1, 2, 3, 5))
    ev = evaluate(ds, r, protocol)
    assert [ev.per_query[f"CMC@{k}"][0] for k in (1, 2, 3, 5)] == [0, 0, 1, 1]
    assert ev.per_query["AP"][0] == pytest.approx(1 / 3)  # positive at rank 2 after removal
    assert ev.summary["CMC@3"] == 1.0 and ev.protocol.describe()["seed"] == 0


def test_cuhk03_is_reproducible_by_seed_and_sampled_per_identity():
    # id 7 (the query's) has images at ranks 0 and 3 (after removal), ids 1 and 2 one each
    # at ranks 1, 2. Drawing the rank-0 image puts the match first (p = 1/2): CMC@1 ~ 1/2.
    ds, r = reid_case([7, 1, 2, 7], [2, 2, 2, 3], query_label=7, query_camera=1)
    protocol = get_protocol("cuhk03").override(cmc_ks=(1, 3), cmc_repeats=4000)
    a = evaluate(ds, r, protocol).per_query["CMC@1"][0]
    b = evaluate(ds, r, protocol).per_query["CMC@1"][0]
    c = evaluate(ds, r, protocol.override(seed=5)).per_query["CMC@1"][0]
    assert a == b and a == pytest.approx(0.5, abs=0.04) and c != a
    assert evaluate(ds, r, protocol).per_query["CMC@3"][0] == 1.0


def test_cuhk03_needs_gallery_identities():
    ds, r = reid_case([4, 2], [1, 2], query_label=4, query_camera=2)
    ds = replace(ds, gallery_labels=None)
    with pytest.raises(InputError, match="CUHK03 single-gallery-shot CMC needs a person id"):
        evaluate(ds, r, get_protocol("cuhk03"))
