"""Derived methods where they meet other features: an approximate method compared with its
exact one at the depth it returned (compare, eval's ann block, the sweep and its figure
agree; an exhaustive index differs by nothing), several descriptor files each searched by
every setting of a sweep (one evaluation per file and setting, uniquely named, counts
adding up), the sweep's per-query values in the JSON and the per-query CSV, and --depth
taken by every command that opens methods."""

from __future__ import annotations

import csv
import json
import shutil

import numpy as np
import pytest

from irviewer.cli import main
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest
from tests.ann_cases import clustered_set

faiss = pytest.importorskip("faiss")

#: Results kept per query: well below the 176 gallery images, so the depth matters.
DEPTH = 30


@pytest.fixture
def data(tmp_path):
    return clustered_set(tmp_path / "set", n_instances=16, per=10, dim=24, spread=1.0)


def _json(args, out):
    assert main([*args, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_an_exhaustive_index_differs_from_the_exact_ranking_by_nothing(data, tmp_path):
    """compare -d F --ann Flat: the exact ranking cut at the depth against the index's
    lists of that depth: ΔAP 0 on every query, no test significant; the exact ranking's
    whole-list mean is said beside it."""
    manifest, npz = data
    report = _json(["compare", str(manifest), "-d", str(npz), "--ann", "Flat", "--depth",
                    str(DEPTH)], tmp_path / "c.json")
    (row,) = report["comparisons"]
    assert row["method"] == "desc.npz + Flat" and row["depth_compared"] == DEPTH
    assert all(q["delta"] == 0.0 for q in row["queries"])
    assert (row["wins"], row["losses"], row["ties"]) == (0, 0, 16)
    assert row["mean_delta"] == 0.0 and row["tests"]["randomization"]["p_value"] == 1.0
    whole = _json(["eval", str(manifest), "-d", str(npz)], tmp_path / "e.json")
    assert row["mean_baseline_whole"] == whole["evaluations"][0]["summary"]["mAP"]
    assert row["mean_baseline"] < row["mean_baseline_whole"]  # positives past 30 missed


def test_the_ann_block_the_sweep_and_compare_agree_query_by_query(data, tmp_path):
    manifest, npz = data
    spec = "IVF8,Flat:nprobe=1,8"
    report = _json(["eval", str(manifest), "-d", str(npz), "--ann", spec, "--depth",
                    str(DEPTH)], tmp_path / "e.json")
    compared = _json(["compare", str(manifest), "-d", str(npz), "--ann", spec, "--depth",
                      str(DEPTH)], tmp_path / "c.json")
    sweep = report["sweep"]
    assert sweep["depth_compared"] == DEPTH and sweep["mAP_exact"] < sweep["mAP_exact_full"]
    for entry, setting, row in zip(report["evaluations"], sweep["settings"],
                                   compared["comparisons"], strict=True):
        member = entry["ann"]
        assert member["mAP_exact"] == sweep["mAP_exact"] == row["mean_baseline"]
        deltas = [q["delta_AP"] for q in member["queries"]]
        assert deltas == [q["delta_AP"] for q in setting["queries"]]
        assert deltas == [q["delta"] for q in row["queries"]]
        assert [q["AP"] for q in entry["queries"]] == [q["AP"] for q in setting["queries"]]
        assert entry["setting"] == setting["setting"]
    assert all(q["delta_AP"] == 0.0 for q in sweep["settings"][1]["queries"])  # exhaustive


def test_several_files_each_swept_give_one_evaluation_per_file_and_setting(data, tmp_path,
                                                                           capsys):
    """Two descriptor files with one file name in two folders, one sweep: four methods,
    each named by its file and setting, every count per method adding up to the queries."""
    manifest, npz = data
    a, b = tmp_path / "a" / "desc.npz", tmp_path / "b" / "desc.npz"
    for path, seed in ((a, 1), (b, 2)):
        path.parent.mkdir()
        z = np.load(npz)
        noise = np.random.default_rng(seed).normal(scale=0.3, size=z["features"].shape)
        np.savez(path, names=z["names"], features=(z["features"] + noise).astype(np.float32))
    spec = "IVF8,Flat:nprobe=1,2"
    report = _json(["eval", str(manifest), "-d", str(a), "-d", str(b), "--ann", spec,
                    "--per-query", str(tmp_path / "q.csv")], tmp_path / "e.json")
    names = ["a/desc.npz + IVF8,Flat:nprobe=1", "a/desc.npz + IVF8,Flat:nprobe=2",
             "b/desc.npz + IVF8,Flat:nprobe=1", "b/desc.npz + IVF8,Flat:nprobe=2"]
    assert [e["method"] for e in report["evaluations"]] == names
    assert [m["name"] for m in report["methods"]] == names
    assert [s["base"] for s in report["sweeps"]] == ["a/desc.npz", "b/desc.npz"]
    for record in report["sweeps"]:
        assert [s["method"] for s in record["settings"]] == [
            f"{record['base']} + IVF8,Flat:nprobe={n}" for n in (1, 2)]
        assert len(record["first_reaching_exact"]) == 16  # every evaluated query, once
    assert report["sweep"] == report["sweeps"][0]
    table = capsys.readouterr().out
    for name in names:
        assert f"  {name}:" in table  # each method's approximate-search lines
    assert table.count("of 16 evaluated, queries reaching their exact AP first") == 2
    with open(tmp_path / "q.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4 * 16
    assert {(r["method"], r["setting"]) for r in rows} == {
        (n, n.split(" + ")[1]) for n in names}


def test_a_setting_column_is_empty_for_a_method_that_is_not_swept(data, tmp_path):
    manifest, npz = data
    report = _json(["eval", str(manifest), "-d", str(npz), "--ann", "IVF8,Flat:nprobe=1,2",
                    "--ann", "Flat", "--per-query", str(tmp_path / "q.csv")],
                   tmp_path / "e.json")
    assert [e.get("setting") for e in report["evaluations"]] == [
        "IVF8,Flat:nprobe=1", "IVF8,Flat:nprobe=2", None]
    with open(tmp_path / "q.csv", newline="") as f:
        settings = {r["method"]: r["setting"] for r in csv.DictReader(f)}
    assert settings["desc.npz + Flat"] == ""


def test_depth_is_taken_by_every_command_that_opens_methods(data, tmp_path, capsys, qapp):
    manifest, npz = data
    other = tmp_path / "other.npz"
    shutil.copy(npz, other)
    assert main(["compare", str(manifest), "-d", str(npz), str(other), "--depth",
                 "5063"]) == 0
    assert main(["figure", str(manifest), "-d", str(npz), "--ann", "Flat", "--depth", "12",
                 "--worst", "2", "--out", str(tmp_path / "f.png")]) == 0
    assert main(["compare", str(manifest), "-d", str(npz), str(other), "--depth", "0"]) == 2
    assert "--depth must be at least 1, not 0" in capsys.readouterr().err


def test_the_sweep_figure_names_the_depth_of_the_exact_line(data):
    from irviewer.opening.base_comparison import sweep_of
    from irviewer.view.sweep_view import sweep_view

    manifest, npz = data
    opened = open_now(OpenRequest(manifest, (npz,), ann=("IVF8,Flat:nprobe=1,8",), k=DEPTH))
    searched = [m for m in opened.methods if " + " in m]
    view = sweep_view(sweep_of(opened, searched, "instance"), "desc.npz + IVF8,Flat")
    exact = opened.evaluation("desc.npz", "instance", depth=DEPTH).summary["mAP"]
    whole = opened.evaluation("desc.npz", "instance").summary["mAP"]
    assert view.exact_percent == pytest.approx(100 * exact)
    assert view.exact_label == (f"exact ranking, first {DEPTH}: {100 * exact:.2f} (whole "
                                f"ranking: {100 * whole:.2f})")
    assert view.points[-1].map_percent == pytest.approx(100 * exact)  # nprobe=8: every list
    assert view.reaching.startswith("Of 16 queries, reaching their exact AP first: ")
