"""The DISC21 copy-detection readers: the ground truth (``query_id,reference_id``, empty for
a query without a copy) and predictions (``query_id,reference_id,score``), detected like
every reader, read as isc2021's io.py reads them, and refused in one sentence where its
evaluator refuses or would miscount; pairs made from a descriptor file end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from irviewer.cli import main
from irviewer.core.copy_pairs import PairSettings
from irviewer.core.errors import InputError
from irviewer.core.ranking.listed import outside_index
from irviewer.formats.base import ReadOptions
from irviewer.formats.disc21 import read_disc21_predictions, sniff_disc21
from irviewer.formats.rankings import sniff_ranking
from irviewer.formats.registry import detect, read_dataset

GROUND_TRUTH = "query_id,reference_id\nQ1,R1\nQ2,\nQ3,R3\nQ3,R4\nQ4,\n"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text", [GROUND_TRUTH, "Q00001,R001234\nQ00002,\n",
                                  "\ufeffquery_id,reference_id\r\nQ1,\r\n"])
def test_the_ground_truth_is_detected_with_or_without_its_header(tmp_path, text):
    path = write(tmp_path, "public_ground_truth.csv", text)
    assert sniff_disc21(path) and detect(path).name == "disc21"


def test_the_ground_truth_is_read(tmp_path):
    ds = read_dataset(write(tmp_path, "gt.csv", GROUND_TRUTH))
    assert [q.name for q in ds.queries] == ["Q1", "Q2", "Q3", "Q4"]
    assert ds.gallery == ("R1", "R3", "R4") and ds.protocols == ("disc21",)
    assert [q.group("copy").tolist() for q in ds.queries] == [[0], [], [1, 2], []]
    assert ("2 queries with a copy (3 ground-truth pairs), 2 without: microAP counts every "
            "answer for them as a false positive") in ds.notes


@pytest.mark.parametrize(("text", "message"), [
    ("query_id,reference_id\nQ1,R1,0.5\n",
     "gt.csv, line 2: expected query_id,reference_id, found 3 fields"),
    ("query_id,reference_id\nQ1,R1\nQ1,R1\n",
     "gt.csv, line 3: the pair Q1,R1 is repeated (first on line 2); isc2021 would count it "
     "twice in microAP's denominator"),
    ("query_id,reference_id\n,R1\n", "gt.csv, line 2: the query id is empty"),
    ("query_id,reference_id\n", "gt.csv: no query; a DISC21 ground truth has one line "
                                "query_id,reference_id per copy (the reference empty for a "
                                "query without one)"),
])
def test_a_bad_ground_truth_is_refused_in_one_sentence(tmp_path, text, message):
    with pytest.raises(InputError) as e:
        read_dataset(write(tmp_path, "gt.csv", text), format="disc21")
    assert str(e.value) == message


@pytest.mark.parametrize("text", ["query_id,reference_id,score\nQ1,R1,0.5\n",
                                  "Q1,R1,-0.5\n", "Q00001,R000001,1e-3\n"])
def test_predictions_are_recognised_as_a_ranking(tmp_path, text):
    assert sniff_ranking(write(tmp_path, "p.csv", text))


def test_a_manifest_like_csv_is_not_taken_for_predictions(tmp_path):
    assert not sniff_ranking(write(tmp_path, "p.csv", "name,label,year\na.jpg,x,1999\n"))
    assert not sniff_ranking(write(tmp_path, "q.csv", "1,2,0.5\n"))


@pytest.mark.parametrize(("text", "message"), [
    ("Q1,R1\n", "p.csv, line 1: expected query_id,reference_id,score, found 2 fields"),
    ("query_id,reference_id,score\nQ1,R1,high\n",
     "p.csv, line 2: the score 'high' is not a number"),
    ("query_id,reference_id,score\nQ1,R1,nan\n",
     "p.csv, line 2: the score 'nan' is not a finite number"),
    ("query_id,reference_id,score\nQ1,R1,0.5\nQ2,R1,0.4\nQ1,R1,0.3\n",
     "p.csv, line 4: the pair Q1,R1 is predicted again (first on line 2); isc2021's evaluate "
     "refuses duplicate predictions"),
])
def test_bad_predictions_are_refused_in_one_sentence(tmp_path, text, message):
    ds = read_dataset(write(tmp_path, "gt.csv", GROUND_TRUTH))
    with pytest.raises(InputError) as e:
        read_disc21_predictions(write(tmp_path, "p.csv", text), ds)
    assert str(e.value) == message


def test_more_predictions_than_the_cap_are_refused_unless_the_cap_is_raised(tmp_path):
    ds = read_dataset(write(tmp_path, "gt.csv", GROUND_TRUTH))
    rows = "".join(f"Q1,R{j},{j}\n" for j in range(6))
    path = write(tmp_path, "p.csv", "query_id,reference_id,score\n" + rows)
    with pytest.raises(InputError) as e:
        read_disc21_predictions(path, ds, PairSettings(cap=5))
    assert str(e.value) == ("p.csv: 6 predictions, more than the 5 isc2021's "
                            "compute_metrics.py accepts (its max_results); give --copy-pairs "
                            "cap=6 to score them all")
    ranking, _ = read_disc21_predictions(path, ds, PairSettings(cap=6))
    assert ranking.pairs is not None and len(ranking.pairs) == 6


def test_predictions_outside_the_dataset_are_kept_and_said(tmp_path):
    ds = read_dataset(write(tmp_path, "gt.csv", GROUND_TRUTH))
    path = write(tmp_path, "p.csv", "Q2,R7,0.95\nQ9,R1,0.1\nQ1,R1,0.9\n")
    ranking, notes = read_disc21_predictions(path, ds)
    assert ranking.pairs is not None and ranking.pairs.query.tolist() == [1, -1, 0]
    assert ranking.outside[int(outside_index(int(ranking.top_indices[1, 0])))] == "R7"
    assert notes == ("p.csv: 1 prediction names 1 query the ground truth does not list, e.g. "
                     "Q9: false positives in microAP, as isc2021's evaluate counts them",
                     "p.csv: 1 predicted reference is not in the gallery, e.g. R7: false "
                     "answers, shown by name")


def descriptor_set(folder: Path) -> tuple[Path, Path]:
    """Return (ground truth, .npz) of 5 queries and 40 references: Q0 and Q2 are near
    copies of R3 and R10, Q4 of R20 (unlisted as a copy: a false answer), Q1 and Q3 copy
    nothing."""
    rng = np.random.default_rng(5)
    gallery = rng.standard_normal((40, 32)).astype(np.float32)
    queries = rng.standard_normal((5, 32)).astype(np.float32)
    for q, r in ((0, 3), (2, 10), (4, 20)):
        queries[q] = gallery[r] + 0.05 * rng.standard_normal(32).astype(np.float32)
    npz = folder / "desc.npz"
    np.savez(npz, queries=queries, gallery=gallery,
             query_names=np.array([f"Q{i}" for i in range(5)]),
             gallery_names=np.array([f"R{j}" for j in range(40)]))
    gt = write(folder, "gt.csv", "query_id,reference_id\nQ0,R3\nQ1,\nQ2,R10\nQ3,\nQ4,\n")
    return gt, npz


def test_eval_makes_pairs_from_descriptors_and_names_the_settings(tmp_path, capsys):
    gt, npz = descriptor_set(tmp_path)
    out = tmp_path / "out.json"
    assert main(["eval", str(gt), "-d", str(npz), "--copy-pairs", "knn=4",
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert ("pairs        20 made by the isc2021 descriptor track: each query's 4 nearest "
            "references (its knn=4, no global cap); score = negated squared L2 distance of "
            "the raw vectors (faiss METRIC_L2)") in text
    report = json.loads(out.read_text())
    ev = report["evaluations"][0]
    assert ev["summary"]["n_predictions"] == 20 and ev["summary"]["n_ground_truth_pairs"] == 2
    # Q4's best answer (R20, its near copy, not a copy in the ground truth) outscores Q2's
    # true copy: one false positive ahead of a true one.
    queries = {q["name"]: q for q in ev["queries"]}
    assert queries["Q4"]["n_answers"] == 4 and queries["Q4"]["top_score"] is not None
    assert "skipped" in queries["Q4"] and "AP" in queries["Q4"]
    assert queries["Q0"]["AP"] == 1.0


def test_pairs_from_descriptors_equal_the_brute_force_scored_by_isc2021(tmp_path):
    from irviewer.core.evaluation import evaluate
    from irviewer.core.protocols import get_protocol
    from irviewer.opening.opener import open_now
    from irviewer.opening.request import OpenRequest
    from tests.core.reference_landmarks import isc_evaluate

    gt, npz = descriptor_set(tmp_path)
    opened = open_now(OpenRequest(gt, (npz,), options=ReadOptions(copy_pairs="cap=30")))
    got = opened.evaluations["disc21"].summary
    with np.load(npz) as f:
        q, g = f["queries"].astype(np.float64), f["gallery"].astype(np.float64)
    cost = ((q[:, None, :] - g[None, :, :]) ** 2).sum(axis=2)
    best = sorted((cost[i, j], i, j) for i in range(5) for j in range(40))[:30]
    rows = [(f"Q{i}", f"R{j}", -c) for c, i, j in best]
    want = isc_evaluate([("Q0", "R3"), ("Q2", "R10")], rows)
    for key in ("microAP", "recall@rank1", "recall@rank10"):
        assert got[key] == pytest.approx(want[key], abs=1e-6), key
    assert got["n_predictions"] == 30
    ev = evaluate(opened.dataset, opened.ranking, get_protocol("disc21"))
    assert ev.summary["microAP"] == got["microAP"]


def test_too_many_dimensions_exit_2_in_one_line(tmp_path, capsys):
    gt, npz = descriptor_set(tmp_path)
    assert main(["eval", str(gt), "-d", str(npz), "--copy-pairs", "max_dim=16"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "irviewer: error: desc.npz: 32 dimensions, more than the 16 the DISC21 descriptor "
        "track accepts (isc2021's max_dim); reduce them (PCA) or give --copy-pairs "
        "max_dim=32 to score them anyway"]


def test_the_pair_settings_apply_to_disc21_only(tmp_path, capsys):
    sol = write(tmp_path, "sol.csv", "id,images,Usage\nt,a,Public\n")
    sub = write(tmp_path, "sub.csv", "id,images\nt,a\n")
    assert main(["eval", str(sol), "--ranking", str(sub), "--copy-pairs", "knn=3"]) == 2
    assert "--copy-pairs does not apply to this dataset" in capsys.readouterr().err
