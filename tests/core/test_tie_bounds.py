"""Tie bounds of whole evaluations: on binary (+-1) descriptors, whose cosines take few
values and tie by the hundreds, every query's AP_best / AP_worst / AP_expected equal an
independent computation from the full score rows, through every ranking path; a ranking
file's equal scores tie as written; without ties the bounds are the reported values."""

from __future__ import annotations

import numpy as np
import pytest

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.evaluation import IGNORED, POSITIVE, evaluate, query_roles
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import iter_rank, ranking_from_lists
from tests.core.helpers import aligned, random_dataset, sign_vectors
from tests.core.reference import ap_finite, ap_trapezoid
from tests.core.test_ranking import PATHS, exact_scores, ranking_path

REFERENCE = {"finite": ap_finite, "trapezoid": ap_trapezoid}


def flags_in_order(scores: np.ndarray, pos: np.ndarray, ign: np.ndarray, removed: np.ndarray,
                   order: str) -> list[bool]:
    """The ranked list after removals with positives first ("best") or last ("worst")
    among equal scores, written from the definition."""
    role = np.zeros(len(scores), dtype=np.int64)
    role[pos] = POSITIVE
    role[ign] = IGNORED
    keep = np.ones(len(scores), dtype=bool)
    keep[ign] = False
    keep[removed] = False
    idx = np.flatnonzero(keep)
    first = (role[idx] == POSITIVE) if order == "best" else (role[idx] != POSITIVE)
    ranked = idx[np.lexsort((~first, -scores[idx]))]
    return [bool(role[i] == POSITIVE) for i in ranked]


def expected_by_places(scores, pos, ign, removed, rule) -> float:
    """McSherry & Najork written place by place from the groups of equal scores."""
    keep = np.ones(len(scores), dtype=bool)
    keep[ign] = False
    keep[removed] = False
    is_pos = np.zeros(len(scores), dtype=bool)
    is_pos[pos] = True
    idx = np.flatnonzero(keep)
    total, skip, ahead = 0.0, 0, 0
    for value in sorted(set(scores[idx].tolist()), reverse=True):
        members = idx[scores[idx] == value]
        t, r = len(members), int(is_pos[members].sum())
        c = (r - 1) / (t - 1) if t > 1 else 0.0
        for i in range(skip + 1, skip + t + 1):
            before = ahead + (i - skip - 1) * c
            at = (before + 1) / i
            prior = 1.0 if i == 1 else before / (i - 1)
            total += r / t * (at if rule == "finite" else (at + prior) / 2)
        skip, ahead = skip + t, ahead + r
    return total / len(pos)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("chunk", "block"), [(None, None), (37, 5)])
@pytest.mark.parametrize("protocol", ["instance", "holidays"])
def test_binary_descriptors_bounds_equal_an_independent_computation(path, chunk, block,
                                                                    protocol):
    rng = np.random.default_rng(11)
    n_q, n_g = 14, 220
    qv, gv = sign_vectors(rng, n_q, dim=12), sign_vectors(rng, n_g, dim=12)
    removed = rng.choice(n_g, size=9, replace=False)
    ds = random_dataset(rng, n_q, n_g, max_per_group=25, with_self=True,
                        global_ignored=removed)
    with ranking_path(path):
        ranking = list(iter_rank(aligned(qv, gv), ds, k=30, gallery_chunk_rows=chunk,
                                 query_block_rows=block))[-1].ranking
    ev = evaluate(ds, ranking, get_protocol(protocol))
    ties = ev.ties
    s = exact_scores(qv, gv)
    rule = ev.protocol.ap
    n_tied = 0
    for qi, query in enumerate(ds.queries):
        pos, ign = query_roles(query, ev.protocol, ds.ignored_mask)
        if not len(pos):
            assert np.isnan(ties.per_query["AP_best"][qi])
            continue
        best = REFERENCE[rule](flags_in_order(s[qi], pos, ign, removed, "best"), len(pos))
        worst = REFERENCE[rule](flags_in_order(s[qi], pos, ign, removed, "worst"), len(pos))
        assert ties.per_query["AP_best"][qi] == pytest.approx(best, abs=1e-9)
        assert ties.per_query["AP_worst"][qi] == pytest.approx(worst, abs=1e-9)
        assert worst - 1e-12 <= ev.per_query["AP"][qi] <= best + 1e-12
        assert ties.per_query["AP_expected"][qi] == pytest.approx(
            expected_by_places(s[qi], pos, ign, removed, rule), abs=1e-9)
        flags = flags_in_order(s[qi], pos, ign, removed, "best")
        assert ties.per_query["P@1_best"][qi] == float(flags[0])
        n_tied += best - worst > 1e-12
        assert bool(ties.tied[qi]) == (best - worst > 1e-12)
    assert n_tied > n_q // 2  # a tie-heavy set: most queries' AP depends on the order
    ok = ev.evaluated
    for key in ("AP_best", "AP_worst", "AP_expected"):
        assert ties.summary[f"m{key}"] == pytest.approx(
            float(np.mean(ties.per_query[key][ok])), abs=1e-12)
    assert ties.summary["mAP_worst"] <= ev.summary["mAP"] <= ties.summary["mAP_best"]


def test_without_ties_the_bounds_are_the_reported_values():
    rng = np.random.default_rng(5)
    qv = rng.standard_normal((10, 32)).astype(np.float32)
    gv = rng.standard_normal((300, 32)).astype(np.float32)
    ds = random_dataset(rng, 10, 300, max_per_group=20)
    ranking = list(iter_rank(aligned(qv, gv), ds, k=20))[-1].ranking
    ev = evaluate(ds, ranking, get_protocol("instance"))
    ok = ev.evaluated
    for key in ("AP_best", "AP_worst", "AP_expected"):
        np.testing.assert_allclose(ev.ties.per_query[key][ok], ev.per_query["AP"][ok],
                                   atol=1e-12, rtol=0)
    assert ev.ties.n_tied == 0 and not ev.ties.moves_map()


def test_a_ranking_file_ties_equal_scores_as_written():
    # One query, gallery g0..g5, g1 and g4 positive; the file lists g0 (3.0), g1 (2.0),
    # g2 (2.0), g3 (2.0), g4 (1.0): g1 ties with g2 and g3, g4 stands alone.
    ds = Dataset(name="file", format="test", path=None,
                 gallery=tuple(f"g{i}" for i in range(6)),
                 queries=(build_query("q0", "img0", {"positive": [1, 4]}),),
                 groups=("positive",), protocols=("instance",))
    ranking = ranking_from_lists(ds, np.array([[0, 1, 2, 3, 4]]),
                                 np.array([[3.0, 2.0, 2.0, 2.0, 1.0]]), "run.txt")
    ev = evaluate(ds, ranking, get_protocol("instance"))
    # Reported: g1 at rank 1, g4 at rank 4: (1/2 + 2/5) / 2. Best: same. Worst: g1 at 3.
    assert ev.per_query["AP"][0] == pytest.approx((1 / 2 + 2 / 5) / 2)
    assert ev.ties.per_query["AP_best"][0] == pytest.approx((1 / 2 + 2 / 5) / 2)
    assert ev.ties.per_query["AP_worst"][0] == pytest.approx((1 / 4 + 2 / 5) / 2)
    assert ev.ties.per_query["AP_expected"][0] == pytest.approx(
        ((1 / 2 + 1 / 3 + 1 / 4) / 3 + 2 / 5) / 2)


def test_ground_truth_changed_after_ranking_gives_the_same_bounds_as_ranking_again():
    # A correction makes an image positive that the ranking never stored: its tie window
    # comes from the query's score row, and the bounds equal those of a fresh ranking.
    rng = np.random.default_rng(4)
    qv, gv = sign_vectors(rng, 6, dim=10), sign_vectors(rng, 120, dim=10)
    ds = random_dataset(rng, 6, 120, max_per_group=8)
    ranking = list(iter_rank(aligned(qv, gv), ds, k=10))[-1].ranking
    ev = evaluate(ds, ranking, get_protocol("instance"))
    stored = set(ranking.items(0)[0].tolist())
    new = next(g for g in range(120) if g not in stored)
    query = ds.queries[0]
    changed = build_query(query.name, query.image,
                          {"positive": np.append(query.group("positive"), new),
                           "junk": query.group("junk")})
    after = ev.with_query(0, changed)
    fresh_ds = after.dataset
    fresh = evaluate(fresh_ds, list(iter_rank(aligned(qv, gv), fresh_ds, k=10))[-1].ranking,
                     get_protocol("instance"))
    for key in ("AP_best", "AP_worst", "AP_expected"):
        np.testing.assert_allclose(after.ties.per_query[key], fresh.ties.per_query[key],
                                   atol=1e-12, rtol=0)
