"""DISC21 copy detection scored as isc2021's ``evaluate`` scores it (microAP with tied scores
in the worst order, recall and threshold at precision 90 %, recall at rank 1 and 10), from
a ground truth and a predictions file read by irviewer, against a transcription of
isc2021's metrics.py (tests/core/reference_landmarks.py); and the pairs made from
descriptors as its descriptor track makes them, against a brute force."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irviewer.core import copy_pairs
from irviewer.core.copy_detection import micro_metrics
from irviewer.core.copy_pairs import PairSettings, iter_pairs, parse_pair_settings
from irviewer.core.descriptors import AlignedDescriptors
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import get_protocol
from irviewer.formats.disc21 import read_disc21_predictions
from irviewer.formats.registry import read_dataset
from tests.core.reference_landmarks import isc_evaluate

KEYS = ("microAP", "recall@P90", "threshold@P90", "recall@rank1", "recall@rank10")


def write_ground_truth(folder: Path, pairs: list[tuple[str, str]]) -> Path:
    path = folder / "public_ground_truth.csv"
    path.write_text("query_id,reference_id\n" + "".join(f"{q},{r}\n" for q, r in pairs),
                    encoding="utf-8")
    return path


def write_predictions(folder: Path, rows: list[tuple[str, str, float]]) -> Path:
    path = folder / "predictions.csv"
    path.write_text("query_id,reference_id,score\n"
                    + "".join(f"{q},{r},{s!r}\n" for q, r, s in rows), encoding="utf-8")
    return path


def scored(gt: Path, predictions: Path) -> dict[str, float]:
    ds = read_dataset(gt)
    ranking, _ = read_disc21_predictions(predictions, ds)
    return evaluate(ds, ranking, get_protocol("disc21")).summary


def assert_same(got: dict[str, float], want: dict[str, float | None]) -> None:
    for key in KEYS:
        value = want[key]
        if value is None:
            assert math.isnan(got[key]), key
        else:
            assert math.isclose(got[key], value, abs_tol=1e-12), (key, got[key], value)


GT = [("Q1", "R1"), ("Q2", ""), ("Q3", "R3"), ("Q3", "R4"), ("Q4", "")]
PREDICTED = [("Q1", "R1", 0.9), ("Q2", "R7", 0.95), ("Q3", "R4", 0.5), ("Q3", "R1", 0.5),
             ("Q4", "R3", 0.2), ("Q9", "R1", 0.1)]


def test_a_hand_computed_set(tmp_path):
    """Worst order: Q2-R7 (false, 0.95), Q1-R1 (true, 0.9), Q3-R1 (false, 0.5, before the true
    pair of equal score), Q3-R4 (true, 0.5), Q4-R3, Q9-R1 (false): microAP = (1/2 + 2/4) / 3
    ground-truth pairs. Precision never reaches 0.9. Q1-R1 is its query's first answer; Q3-R4
    ties with Q3-R1, so its rank is 1; Q3-R3 is never predicted. The prediction for Q9,
    which the ground truth does not list, is a false positive."""
    got = scored(write_ground_truth(tmp_path, GT), write_predictions(tmp_path, PREDICTED))
    assert got["microAP"] == pytest.approx(1 / 3)
    assert math.isnan(got["recall@P90"]) and math.isnan(got["threshold@P90"])
    assert got["recall@rank1"] == pytest.approx(1 / 3)
    assert got["recall@rank10"] == pytest.approx(2 / 3)
    assert got["n_predictions"] == 6 and got["n_ground_truth_pairs"] == 3
    assert got["n_outside_queries"] == 1
    assert_same(got, isc_evaluate([(q, r) for q, r in GT if r], PREDICTED))


def test_recall_at_precision_90_and_its_threshold(tmp_path):
    """Ten true pairs scored 1.0 .. 0.1 and two false ones at 0.55: precision is 1 down to
    0.6, then 5/6, 5/7, 6/8, ... 10/12, never 0.9 again; so recall@P90 = 5/10 at the
    threshold 0.6."""
    gt = [(f"Q{i}", f"R{i}") for i in range(10)]
    rows = [(f"Q{i}", f"R{i}", round(1.0 - 0.1 * i, 2)) for i in range(10)]
    rows += [("Q0", "R9", 0.55), ("Q1", "R8", 0.55)]
    got = scored(write_ground_truth(tmp_path, gt), write_predictions(tmp_path, rows))
    assert got["recall@P90"] == pytest.approx(0.5)
    assert got["threshold@P90"] == pytest.approx(0.6)
    assert_same(got, isc_evaluate(gt, rows))


def test_tied_scores_count_in_the_worst_order(tmp_path):
    """Every pair scored alike: the false ones come first, whatever the file's order."""
    gt = [("Q1", "R1"), ("Q2", "R2")]
    rows = [("Q1", "R1", 0.5), ("Q2", "R2", 0.5), ("Q1", "R2", 0.5), ("Q2", "R1", 0.5)]
    got = scored(write_ground_truth(tmp_path, gt), write_predictions(tmp_path, rows))
    assert got["microAP"] == pytest.approx((1 / 3 + 2 / 4) / 2)
    assert got["recall@rank1"] == 0  # each copy ties with its query's other answer


@st.composite
def disc21_sets(draw):
    """A ground truth of 3-10 queries (about half without a copy, the others with 1-3 of 12
    references) and 0-40 distinct predictions whose scores come from a few values (many
    ties), some for queries or references the ground truth does not know."""
    n_q = draw(st.integers(3, 10))
    refs = [f"R{j}" for j in range(12)]
    gt: list[tuple[str, str]] = []
    for i in range(n_q):
        copies = draw(st.lists(st.sampled_from(refs), max_size=3, unique=True)) \
            if draw(st.booleans()) else []
        gt += [(f"Q{i}", r) for r in copies] or [(f"Q{i}", "")]
    if all(not r for _, r in gt):
        gt[0] = ("Q0", "R0")
    queries = [f"Q{i}" for i in range(n_q)] + ["Qx"]
    pairs = draw(st.lists(st.tuples(st.sampled_from(queries), st.sampled_from([*refs, "Ry"])),
                          max_size=40, unique=True))
    scores = draw(st.lists(st.sampled_from([-2.5, -1.0, -0.25, 0.0, 0.5, 0.75, 1.0]),
                           min_size=len(pairs), max_size=len(pairs)))
    return gt, [(q, r, s) for (q, r), s in zip(pairs, scores, strict=True)]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(disc21_sets())
def test_equals_isc2021_on_random_sets(case):
    gt, rows = case
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        got = scored(write_ground_truth(folder, gt), write_predictions(folder, rows))
    assert_same(got, isc_evaluate([(q, r) for q, r in gt if r], rows))


@settings(max_examples=80, deadline=None)
@given(disc21_sets())
def test_the_metrics_equal_isc2021_on_arrays(case):
    """The same metrics on index arrays (the pairs irviewer makes itself)."""
    gt, rows = case
    names: dict[str, int] = {}
    index = lambda name: names.setdefault(name, len(names))  # noqa: E731
    truth = [(q, r) for q, r in gt if r]
    result = micro_metrics(np.array([index(q) for q, _, _ in rows], dtype=np.int64),
                           np.array([index(r) for _, r, _ in rows], dtype=np.int64),
                           np.array([s for _, _, s in rows]),
                           np.array([index(q) for q, _ in truth], dtype=np.int64),
                           np.array([index(r) for _, r in truth], dtype=np.int64))
    want = isc_evaluate(truth, rows)
    assert math.isclose(result.average_precision, want["microAP"], abs_tol=1e-12)
    assert result.recall_at_p90 == want["recall@P90"]
    assert result.threshold_at_p90 == want["threshold@P90"]
    assert math.isclose(result.rank1, want["recall@rank1"], abs_tol=1e-12)
    assert math.isclose(result.rank10, want["recall@rank10"], abs_tol=1e-12)


# -- the settings of the descriptor track ---------------------------------------------------

def test_the_settings_default_to_isc2021s():
    default = parse_pair_settings(None)
    assert (default.cap, default.knn, default.metric, default.max_dim) == (500_000, None,
                                                                            "l2", 256)
    assert parse_pair_settings("knn=10,metric=ip,max_dim=512") == PairSettings(
        cap=None, knn=10, metric="ip", max_dim=512)
    assert parse_pair_settings(default.text) == default
    assert "500,000 best pairs" in default.describe()


@pytest.mark.parametrize(("spec", "message"), [
    ("knn=5,cap=10", "--copy-pairs knn=5,cap=10: give cap (the best pairs over all queries) "
                     "or knn (each query's nearest), not both"),
    ("k=5", "--copy-pairs k=5: 'k=5' is not a setting; use cap=N, knn=K, metric=l2 or "
            "metric=ip, max_dim=D, separated by commas"),
    ("metric=cosine", "--copy-pairs metric=cosine: metric is l2 or ip, not 'cosine'"),
    ("cap=0", "--copy-pairs cap=0: cap must be a whole number of at least 1, not '0'"),
    ("knn=ten", "--copy-pairs knn=ten: knn must be a whole number of at least 1, not 'ten'"),
])
def test_bad_settings_are_refused_in_one_sentence(spec, message):
    with pytest.raises(InputError) as e:
        parse_pair_settings(spec)
    assert str(e.value) == message


# -- pairs from descriptors -------------------------------------------------------------

def brute_pairs(queries: np.ndarray, gallery: np.ndarray, settings: PairSettings
                ) -> list[tuple[int, int, float]]:
    """Every (query, reference, cost) by hand, then the cap best over all (or k per query),
    equal costs in (query, reference) order; returned as (query, reference, score)."""
    q64, g64 = queries.astype(np.float64), gallery.astype(np.float64)
    if settings.metric == "l2":
        cost = ((q64[:, None, :] - g64[None, :, :]) ** 2).sum(axis=2)
    else:
        cost = -(q64 @ g64.T)
    every = sorted((float(cost[i, j]), i, j) for i in range(len(q64))
                   for j in range(len(g64)))
    if settings.knn is not None:
        kept = [c for c in every if sum(1 for d in every if d[1] == c[1] and d < c)
                < settings.knn]
    else:
        kept = every[:settings.cap]
    return sorted((i, j, -c) for c, i, j in kept)


def run_pairs(queries: np.ndarray, gallery: np.ndarray,
              settings: PairSettings) -> list[tuple[int, int, float]]:
    aligned = AlignedDescriptors(queries=queries, gallery=gallery, gallery_rows=None,
                                 dim=gallery.shape[1])
    last = None
    for step in iter_pairs(queries, aligned, len(gallery), settings):
        last = step.pairs or last
    assert last is not None
    q, g, s = last
    return list(zip(q.tolist(), g.tolist(), s.astype(np.float64).tolist(), strict=True))


@pytest.mark.parametrize("settings", [PairSettings(cap=7), PairSettings(cap=40),
                                      PairSettings(cap=10_000), PairSettings(cap=None, knn=3),
                                      PairSettings(cap=9, metric="ip"),
                                      PairSettings(cap=None, knn=2, metric="ip")])
def test_pairs_equal_a_brute_force_in_small_chunks(settings, monkeypatch):
    """Integer vectors (exact distances, many ties), the gallery read 5 rows at a time and 2
    queries per block: the pairs kept equal the brute force's, ties at the cap in (query,
    reference) order."""
    monkeypatch.setattr(copy_pairs, "chunk_rows", lambda dim: 5)
    monkeypatch.setattr(copy_pairs, "BLOCK_SCORES", 10)
    rng = np.random.default_rng(11)
    queries = rng.integers(-2, 3, size=(7, 4)).astype(np.float32)
    gallery = rng.integers(-2, 3, size=(23, 4)).astype(np.float32)
    got = run_pairs(queries, gallery, settings)
    want = brute_pairs(queries, gallery, settings)
    assert [(i, j) for i, j, _ in got] == [(i, j) for i, j, _ in want]
    np.testing.assert_allclose([s for *_, s in got], [s for *_, s in want], atol=1e-5)


def test_descriptors_of_more_than_256_dimensions_are_refused(tmp_path):
    from irviewer.core.copy_pairs import check_dimensions

    with pytest.raises(InputError) as e:
        check_dimensions(512, PairSettings(), "desc.npz")
    assert str(e.value) == ("desc.npz: 512 dimensions, more than the 256 the DISC21 "
                            "descriptor track accepts (isc2021's max_dim); reduce them (PCA) "
                            "or give --copy-pairs max_dim=512 to score them anyway")
    check_dimensions(512, PairSettings(max_dim=512), "desc.npz")
