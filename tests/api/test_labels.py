"""irviewer.evaluate on labels alone: leave-one-out sets against a computation per query
written here from the definitions, query -> gallery sets, and a re-identification distance
matrix against torchreid's evaluate_rank (transcribed below)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

import irviewer


def brute_force_leave_one_out(x: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
    """Return every query's AP (finite sum), P@1, R-precision, AP@R (MAP@R's per-query term)
    and Recall@1/2/4/8, each image querying all the others by descending cosine (ties in
    index order), NaN for an image alone in its label."""
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    sims = unit.astype(np.float64) @ unit.astype(np.float64).T
    n = len(x)
    out: dict[str, list[float]] = defaultdict(list)
    for i in range(n):
        others = np.array([j for j in range(n) if j != i])
        order = others[np.argsort(-sims[i, others], kind="stable")]
        rel = (labels[order] == labels[i]).astype(float)
        r = int(rel.sum())
        if r == 0:
            for key in ("AP", "P@1", "R-precision", "AP@R", "Recall@1", "Recall@2",
                        "Recall@4", "Recall@8"):
                out[key].append(np.nan)
            continue
        ranks = np.flatnonzero(rel) + 1
        out["AP"].append(float(np.mean(np.arange(1, r + 1) / ranks)))
        out["P@1"].append(rel[0])
        out["R-precision"].append(rel[:r].sum() / r)
        precision_at = np.cumsum(rel[:r]) / np.arange(1, r + 1)
        out["AP@R"].append(float((precision_at * rel[:r]).sum() / r))
        for k in (1, 2, 4, 8):
            out[f"Recall@{k}"].append(float(rel[:k].any()))
    return {k: np.array(v) for k, v in out.items()}


def test_leave_one_out_equals_a_computation_per_query():
    rng = np.random.default_rng(4)
    labels = np.repeat(np.arange(7), [5, 4, 6, 3, 5, 1, 4])  # label 5: one image alone
    x = rng.normal(size=(len(labels), 12)) + 1.5 * rng.normal(size=(7, 12))[labels]
    order = rng.permutation(len(labels))
    x, labels = x[order], labels[order]
    result = irviewer.evaluate(x, labels=labels)
    expected = brute_force_leave_one_out(x, labels)
    assert result.get().protocol == "metric-learning"
    for key, values in expected.items():
        np.testing.assert_allclose(result.per_query(key), values, rtol=0, atol=1e-12,
                                   err_msg=key)
    assert result.summary["mAP@R"] == pytest.approx(np.nanmean(expected["AP@R"]))
    assert result.summary["Recall@4"] == pytest.approx(np.nanmean(expected["Recall@4"]))
    alone = str(int(np.flatnonzero(labels == 5)[0]))
    assert result.get().skipped == (alone,)
    assert result.queries == tuple(str(i) for i in range(len(labels)))  # positions
    assert any("alone in its label" in n for n in result.notes)
    document = result.to_dict()
    assert document["dataset"]["path"] is None and document["dataset"]["format"] == "labels"


def test_leave_one_out_takes_names_string_labels_and_a_score_matrix():
    rng = np.random.default_rng(5)
    labels = np.array(["cat", "dog", "cat", "dog", "cat", "bird", "bird"])
    x = rng.normal(size=(7, 4))
    names = [f"img{i}.jpg" for i in range(7)]
    by_vectors = irviewer.evaluate(x, labels=labels, names=names)
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    by_scores = irviewer.evaluate(scores=unit @ unit.T, labels=labels, names=names)
    assert by_vectors.queries == tuple(names)
    np.testing.assert_allclose(by_scores.per_query("AP"), by_vectors.per_query("AP"))


def test_query_gallery_labels_score_each_query_against_the_gallery():
    rng = np.random.default_rng(6)
    q_labels, g_labels = rng.integers(0, 4, 6), rng.integers(0, 4, 20)
    q, g = rng.normal(size=(6, 5)), rng.normal(size=(20, 5))
    result = irviewer.evaluate(q, g, query_labels=q_labels, gallery_labels=g_labels)
    assert result.queries == tuple(f"q{i}" for i in range(6))
    assert result.get().protocol == "inshop"
    unit_q = q / np.linalg.norm(q, axis=1, keepdims=True)
    unit_g = g / np.linalg.norm(g, axis=1, keepdims=True)
    for i, ap in enumerate(result.per_query("AP")):
        order = np.argsort(-(unit_g @ unit_q[i]), kind="stable")
        rel = g_labels[order] == q_labels[i]
        if not rel.any():
            assert np.isnan(ap)
            continue
        ranks = np.flatnonzero(rel) + 1
        assert ap == pytest.approx(np.mean(np.arange(1, len(ranks) + 1) / ranks))


# -- torchreid -------------------------------------------------------------------------------

def torchreid_eval_market1501(distmat, q_pids, g_pids, q_camids, g_camids, max_rank=50):
    """torchreid's ``eval_market1501`` (torchreid/metrics/rank.py, KaiyangZhou/deep-person-
    reid at 37f92b7), the Python path of ``evaluate_rank(..., use_metric_cuhk03=False)``,
    transcribed: rank by ascending distance; per query drop the gallery images of the same
    id on the same camera; a query none of whose id is left is skipped; CMC by first
    match; AP = mean of the precision at each match. Returns (CMC over ranks, mAP)."""
    num_q, num_g = distmat.shape
    max_rank = min(max_rank, num_g)
    indices = np.argsort(distmat, axis=1)
    matches = (g_pids[indices] == q_pids[:, np.newaxis]).astype(np.int32)
    all_cmc, all_ap = [], []
    for q_idx in range(num_q):
        order = indices[q_idx]
        remove = (g_pids[order] == q_pids[q_idx]) & (g_camids[order] == q_camids[q_idx])
        raw_cmc = matches[q_idx][~remove]
        if not np.any(raw_cmc):
            continue
        cmc = raw_cmc.cumsum()
        cmc[cmc > 1] = 1
        all_cmc.append(cmc[:max_rank])
        precision = raw_cmc.cumsum() / (np.arange(len(raw_cmc)) + 1.0)
        all_ap.append((precision * raw_cmc).sum() / raw_cmc.sum())
    assert all_ap, "all query identities do not appear in gallery"
    return np.asarray(all_cmc).astype(np.float32).sum(0) / len(all_ap), np.mean(all_ap)


def reid_set(seed: int = 8):
    """Return (query features, gallery features, q_pids, g_pids, q_camids, g_camids): 12
    people on 4 cameras, id 0 distractors in the gallery, one query whose id the gallery
    only has on the query's own camera (skipped by both)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(13, 32))
    q_pids = np.arange(1, 13)
    q_cams = rng.integers(1, 5, 12)
    g_pids = np.concatenate([np.repeat(np.arange(1, 12), 4), np.zeros(10, int), [12, 12]])
    g_cams = rng.integers(1, 5, len(g_pids))
    g_cams[-2:] = q_cams[-1]  # person 12 only on the query's own camera
    q = centres[q_pids] + 0.9 * rng.normal(size=(12, 32))
    g = centres[g_pids] + 0.9 * rng.normal(size=(len(g_pids), 32))
    return q, g, q_pids, g_pids, q_cams, g_cams


def test_a_distance_matrix_gives_torchreids_evaluate_rank_numbers():
    q, g, q_pids, g_pids, q_cams, g_cams = reid_set()
    distmat = ((q[:, None, :] - g[None, :, :]) ** 2).sum(-1)  # squared Euclidean
    cmc, mean_ap = torchreid_eval_market1501(distmat, q_pids, g_pids, q_cams, g_cams)
    result = irviewer.evaluate(distances=distmat, query_labels=q_pids, gallery_labels=g_pids,
                               query_cams=q_cams, gallery_cams=g_cams)
    scored = result.get()
    assert scored.protocol == "market1501"
    assert scored.mAP == pytest.approx(mean_ap, abs=1e-12)
    for k in (1, 5, 10, 20):
        assert scored.summary[f"CMC@{k}"] == pytest.approx(float(cmc[k - 1]), abs=1e-6)
    assert scored.n_skipped == 1 and scored.skipped == ("q11",)


def test_torch_distances_give_the_numpy_numbers():
    torch = pytest.importorskip("torch")
    q, g, q_pids, g_pids, q_cams, g_cams = reid_set(9)
    distmat = torch.cdist(torch.from_numpy(q), torch.from_numpy(g))
    common = {"query_labels": q_pids, "gallery_labels": g_pids, "query_cams": q_cams,
              "gallery_cams": g_cams}
    by_torch = irviewer.evaluate(distances=distmat, **common)
    by_numpy = irviewer.evaluate(distances=distmat.numpy(), **common)
    assert by_torch.to_dict() == by_numpy.to_dict()
    labels = {"query_labels": torch.from_numpy(q_pids), "gallery_labels": torch.from_numpy(
        g_pids), "query_cams": torch.from_numpy(q_cams), "gallery_cams": torch.from_numpy(g_cams)}
    assert irviewer.evaluate(distances=distmat, **labels).to_dict() == by_numpy.to_dict()


def test_reid_vectors_follow_the_market_rules_junk_included():
    """Person id -1 is junk, as Market-1501 labels it: such gallery images are removed for
    every query, such queries removed and reported."""
    q, g, q_pids, g_pids, q_cams, g_cams = reid_set(10)
    g_pids = g_pids.copy()
    g_pids[:3] = -1
    q_pids = q_pids.copy()
    q_pids[0] = -1
    result = irviewer.evaluate(q, g, query_labels=q_pids, gallery_labels=g_pids,
                               query_cams=q_cams, gallery_cams=g_cams)
    document = result.to_dict()
    assert [r["name"] for r in document["evaluations"][0]["removed_queries"]] == ["q0"]
    assert "q0" not in result.queries
    kept = g_pids != -1
    unit_g = g / np.linalg.norm(g, axis=1, keepdims=True)
    unit_q = q / np.linalg.norm(q, axis=1, keepdims=True)
    cmc, mean_ap = torchreid_eval_market1501(-(unit_q[1:] @ unit_g[kept].T), q_pids[1:],
                                             g_pids[kept], q_cams[1:], g_cams[kept])
    assert result.summary["mAP"] == pytest.approx(mean_ap, abs=1e-6)
    assert result.summary["CMC@1"] == pytest.approx(float(cmc[0]), abs=1e-6)
