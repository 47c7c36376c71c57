"""Google Landmarks v2 retrieval scored as delf scores it: mAP@100, mean precision at 1, 5, 10
and 100, the mean and median position of the first correct result, per Usage, from a
solution and a submission file read by irviewer, against a transcription of delf's
``metrics.py`` (tests/core/reference_landmarks.py): by hand, then on random sets."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irviewer.core.conventions import all_conventions
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import rank
from irviewer.formats.gldv2 import read_gldv2_submission
from irviewer.formats.registry import read_dataset
from tests.core.helpers import aligned
from tests.core.reference_landmarks import (
    delf_mean_average_precision,
    delf_mean_median_position,
    delf_mean_precisions,
    winners_map_at_k,
)

USAGES = {"public": "Public", "private": "Private"}


def write_solution(folder: Path, rows: list[tuple[str, list[str], str]]) -> Path:
    path = folder / "retrieval_solution_v2.1.csv"
    path.write_text("id,images,Usage\n" + "".join(
        f"{test_id},{' '.join(images) if images else 'None'},{usage}\n"
        for test_id, images, usage in rows), encoding="utf-8")
    return path


def write_submission(folder: Path, lists: dict[str, list[str]]) -> Path:
    path = folder / "submission.csv"
    path.write_text("id,images\n" + "".join(f"{k},{' '.join(v)}\n" for k, v in lists.items()),
                    encoding="utf-8")
    return path


def scored(solution: Path, submission: Path) -> dict[str, dict[str, float]]:
    """Return each Usage's summary as irviewer computes it from the two files."""
    ds = read_dataset(solution)
    ranking, _ = read_gldv2_submission(submission, ds)
    return {p.removeprefix("gldv2-"): evaluate(ds, ranking, get_protocol(p)).summary
            for p in ds.protocols}


def reference(rows: list[tuple[str, list[str], str]],
              lists: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """Return each Usage's numbers as delf's metrics.py computes them (the predictions of
    Ignored test images passed over, as delf's ReadPredictions passes them over)."""
    out = {}
    for usage, word in USAGES.items():
        solution = {t: images for t, images, u in rows if u == word}
        if not solution:
            continue
        predictions = {t: v for t, v in lists.items() if t in solution and v}
        mean, median = delf_mean_median_position(predictions, solution)
        precisions = delf_mean_precisions(predictions, solution)
        out[usage] = {"mAP": delf_mean_average_precision(predictions, solution),
                      **{f"mP@{k}": precisions[k - 1] for k in (1, 5, 10, 100)},
                      "mean_position": mean, "median_position": median}
    return out


def test_a_hand_computed_submission(tmp_path):
    """t1 lists i2, an unknown id, i2 again and i1: AP (1/1 + 2/4) / 2 = 0.75; t4 has no
    prediction: 0; the Public mAP is 0.375. t2 (Private) finds i3 second: AP 1/2."""
    rows = [("t1", ["i1", "i2"], "Public"), ("t2", ["i3"], "Private"),
            ("t3", [], "Ignored"), ("t4", ["i4", "i5", "i6"], "Public")]
    lists = {"t1": ["i2", "x", "i2", "i1"], "t2": ["i9", "i3"], "t3": ["i1"]}
    got = scored(write_solution(tmp_path, rows), write_submission(tmp_path, lists))
    assert got["public"]["mAP"] == pytest.approx(0.375)
    assert got["public"]["mP@1"] == pytest.approx(0.5)
    assert got["public"]["mP@5"] == pytest.approx((2 / 5 + 0) / 2)
    assert got["public"]["mean_position"] == 51 and got["public"]["median_position"] == 51
    assert got["public"]["n_evaluated"] == 2 and got["private"]["n_evaluated"] == 1
    assert got["private"]["mAP"] == pytest.approx(0.5)
    assert got["private"]["mean_position"] == 2
    want = reference(rows, lists)
    for usage in USAGES:
        for key, value in want[usage].items():
            assert got[usage][key] == pytest.approx(value, abs=1e-12), (usage, key)


def test_only_the_first_100_places_count_and_the_denominator_is_capped(tmp_path):
    """150 relevant images, listed from place 2 on: AP counts the 99 within the first 100
    places and divides by min(150, 100); the first correct is at place 2."""
    relevant = [f"r{i}" for i in range(150)]
    rows = [("t", relevant, "Private")]
    lists = {"t": ["wrong", *relevant]}
    got = scored(write_solution(tmp_path, rows), write_submission(tmp_path, lists))["private"]
    expected = sum((i - 1) / i for i in range(2, 101)) / 100
    assert got["mAP"] == pytest.approx(expected, abs=1e-12)
    assert got["mP@100"] == pytest.approx(99 / 100)
    assert got["mean_position"] == 2
    assert got == pytest.approx({**got, **reference(rows, lists)["private"]}, abs=1e-12)


def test_a_test_image_beyond_100_places_has_position_101(tmp_path):
    rows = [("t", ["good"], "Public"), ("u", ["also"], "Public")]
    lists = {"t": [f"w{i}" for i in range(100)] + ["good"], "u": ["also"]}
    got = scored(write_solution(tmp_path, rows), write_submission(tmp_path, lists))["public"]
    assert got["mean_position"] == (101 + 1) / 2 and got["median_position"] == 51
    assert got["mAP"] == pytest.approx(0.5)


@st.composite
def gldv2_sets(draw):
    """A solution (4-12 test images, each Public, Private or Ignored, 1-6 relevant index
    images from a pool of 30) and a submission (lists of 0-110 ids from the pool and a few
    unknown ones, repeats allowed; some test images without a row)."""
    pool = [f"i{j}" for j in range(30)]
    n = draw(st.integers(4, 12))
    rows = []
    for t in range(n):
        usage = draw(st.sampled_from(["Public", "Private", "Ignored"]))
        relevant = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=6, unique=True))
        rows.append((f"t{t}", relevant, usage))
    if not any(u != "Ignored" for _, _, u in rows):
        rows[0] = (rows[0][0], rows[0][1], "Public")
    ids = st.sampled_from([*pool, "u1", "u2"])
    lists = {}
    for t, _, _ in rows:
        if draw(st.booleans()) or draw(st.booleans()):
            long = draw(st.booleans()) and draw(st.booleans())
            lists[t] = draw(st.lists(ids, min_size=0, max_size=110 if long else 12))
    return rows, lists


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gldv2_sets())
def test_every_usage_equals_delf_on_random_sets(case):
    rows, lists = case
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        got = scored(write_solution(folder, rows), write_submission(folder, lists))
    want = reference(rows, lists)
    assert set(got) == set(want)
    for usage, numbers in want.items():
        for key, value in numbers.items():
            assert math.isclose(got[usage][key], value, abs_tol=1e-12), (usage, key)


def test_a_ranking_of_descriptors_is_scored_on_its_first_100(tmp_path):
    """A cosine ranking of 300 index images is scored as the submission of its first 100
    (delf on the lists irviewer ranked: stable, descending cosine)."""
    rng = np.random.default_rng(3)
    n_q, n_g = 8, 300
    gallery = rng.standard_normal((n_g, 16)).astype(np.float32)
    queries = rng.standard_normal((n_q, 16)).astype(np.float32)
    names = [f"i{j}" for j in range(n_g)]
    rows = [(f"t{t}", list(rng.choice(names, int(rng.integers(1, 140)), replace=False)),
             "Public" if t % 2 else "Private") for t in range(n_q)]
    from irviewer.formats.base import ReadOptions

    ds = read_dataset(write_solution(tmp_path, rows),
                      options=ReadOptions(gallery_names=tuple(names)))
    ranking = rank(aligned(queries, gallery), ds, k=120)
    cos = (queries / np.linalg.norm(queries, axis=1, keepdims=True)) @ (
        gallery / np.linalg.norm(gallery, axis=1, keepdims=True)).T
    lists = {f"t{t}": [names[j] for j in np.argsort(-cos[t], kind="stable")[:100]]
             for t in range(n_q)}
    want = reference(rows, lists)
    for p in ds.protocols:
        got = evaluate(ds, ranking, get_protocol(p)).summary
        for key, value in want[p.removeprefix("gldv2-")].items():
            assert got[key] == pytest.approx(value, abs=1e-6), (p, key)


def test_the_conventions_table_shows_the_winners_denominator_beside_delfs(tmp_path):
    """Side by side (``eval --conventions``): delf's min(positives, 100) is the protocol's
    own; the 2019 winners' map_at_k divides by 100 whatever the positives; all positives
    (trec_eval) and the positives within the list (VLFeat) are the other two."""
    rows = [("t1", ["a", "b", "c"], "Public"), ("t2", ["d"], "Public"),
            ("t3", [f"e{i}" for i in range(120)], "Public")]
    lists = {"t1": ["a", "x", "b"], "t2": ["y", "d"], "t3": [f"e{i}" for i in range(100)]}
    ds = read_dataset(write_solution(tmp_path, rows))
    ranking, _ = read_gldv2_submission(write_submission(tmp_path, lists), ds)
    ev = evaluate(ds, ranking, get_protocol("gldv2-public"))
    by_key = {row.key: row for row in all_conventions(ev)}
    own = by_key["AP finite"]
    assert own.own and "MeanAveragePrecision" in own.source
    assert own.mean == pytest.approx(ev.summary["mAP"])
    solution = {t: images for t, images, _ in rows}
    assert by_key["AP finite list"].mean == pytest.approx(winners_map_at_k(lists, solution))
    assert "map_at_k" in by_key["AP finite list"].source
    t1, t2, t3 = (1 + 2 / 3), 1 / 2, 100.0
    assert by_key["AP finite all"].mean == pytest.approx((t1 / 3 + t2 / 1 + t3 / 120) / 3)
    assert by_key["AP finite retrieved"].mean == pytest.approx((t1 / 2 + t2 / 1 + t3 / 100) / 3)
    assert by_key["AP finite list"].mean == pytest.approx((t1 + t2 + t3) / 100 / 3)


def test_a_submission_cut_to_a_common_depth_keeps_its_placeholders(tmp_path):
    """Compared with a method that stops at 3 results, a submission is scored on its first 3
    places, an unknown id and a repeat still holding theirs (delf on the cut lists)."""
    from irviewer.core.ranking.cut import cut_at

    rows = [("t1", ["i1", "i2"], "Public"), ("t2", ["i3"], "Public")]
    lists = {"t1": ["x", "i2", "x", "i1"], "t2": ["i2", "i2", "i3", "i9"]}
    ds = read_dataset(write_solution(tmp_path, rows))
    ranking, _ = read_gldv2_submission(write_submission(tmp_path, lists), ds)
    cut = cut_at(ranking, ds, 3)
    got = evaluate(ds, cut, get_protocol("gldv2-public")).summary
    want = reference(rows, {t: v[:3] for t, v in lists.items()})["public"]
    for key, value in want.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key
    assert got["mAP"] == pytest.approx((1 / 2 / 2 + 1 / 3) / 2)
