"""`irviewer eval --ann SPEC`: an approximate index's lists scored as result lists, compared
with the exact ranking; per-query AP equal to FAISS's own search output scored as a
ranking file, recall by ann-benchmarks' rule, sweeps, and bad inputs in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from irviewer.cli import main
from tests.ann_cases import clustered_set, unit

faiss = pytest.importorskip("faiss")


@pytest.fixture
def data(tmp_path):
    manifest, npz = clustered_set(tmp_path / "set", n_instances=16, per=10, dim=24)
    z = np.load(npz)
    names, rows = [str(n) for n in z["names"]], z["features"]
    n_gallery = sum(1 for n in names if "_q" not in n)
    return manifest, npz, names, rows, n_gallery


def _eval_json(args, out):
    assert main(["eval", *args, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_index_file_ap_equals_faiss_own_search_output(data, tmp_path, capsys):
    manifest, npz, names, rows, n_gallery = data
    index = faiss.index_factory(rows.shape[1], "IVF8,Flat", faiss.METRIC_INNER_PRODUCT)
    gallery = unit(rows[:n_gallery])
    index.train(gallery)
    index.add(gallery)
    path = tmp_path / "gallery.faiss"
    faiss.write_index(index, str(path))
    depth = 30
    report = _eval_json([str(manifest), "-d", str(npz), "--ann", f"{path}:nprobe=2",
                         "--depth", str(depth)], tmp_path / "ann.json")
    # FAISS's own search of the same file, same parameter, same depth, as a ranking file.
    own = faiss.read_index(str(path))
    faiss.ParameterSpace().set_index_parameter(own, "nprobe", 2)
    q_names = [n for n in names if "_q" in n]
    queries = unit(rows[n_gallery:])
    dist, ids = own.search(queries, depth)
    ranking = tmp_path / "faiss_output.npz"
    np.savez(ranking, indices=ids, scores=dist, query_names=np.array(q_names),
             gallery_names=np.array(names[:n_gallery]))
    direct = _eval_json([str(manifest), "--ranking", str(ranking)], tmp_path / "own.json")
    ann_ap = [q["AP"] for q in report["evaluations"][0]["queries"]]
    own_ap = [q["AP"] for q in direct["evaluations"][0]["queries"]]
    np.testing.assert_allclose(ann_ap, own_ap, atol=1e-6)
    # nprobe=2 of 8 lists loses something, so the equality is not that of two exact lists.
    member = report["evaluations"][0]["ann"]
    assert member["recall@10"] < 1.0
    assert member["setting"] == f"{path}:nprobe=2" and member["source"] == "FAISS index file"
    assert report["ann"]["index"] == "IndexIVFFlat"


def test_mean_recall_at_10_is_ann_benchmarks_rule(data, tmp_path):
    manifest, npz, _, rows, n_gallery = data
    report = _eval_json([str(manifest), "-d", str(npz), "--ann", "IVF8,Flat:nprobe=1"],
                        tmp_path / "r.json")
    member = report["evaluations"][0]["ann"]
    # ann-benchmarks by hand: true similarities of the returned items against the exact
    # 10th similarity minus 1e-3.
    gallery, queries = unit(rows[:n_gallery]), unit(rows[n_gallery:])
    sims = queries @ gallery.T
    kth = -np.sort(-sims, axis=1)[:, 9]
    index = faiss.index_factory(gallery.shape[1], "IVF8,Flat", faiss.METRIC_INNER_PRODUCT)
    index.train(gallery)
    index.add(gallery)
    index.nprobe = 1
    _, ids = index.search(queries, 10)
    got = np.take_along_axis(sims, ids, axis=1)
    expected = ((got >= kth[:, None] - 1e-3) & (ids >= 0)).sum(axis=1) / 10
    assert member["recall@10"] == pytest.approx(expected.mean(), abs=1e-3)
    per_query = [q["recall@10"] for q in member["queries"]]
    np.testing.assert_allclose(per_query, expected, atol=1e-9)
    assert member["shown_rule"] == "ann-benchmarks"
    assert "recall@10(tie-aware)" in member


def test_factory_strings_run_and_an_exhaustive_index_loses_nothing(data, tmp_path, capsys):
    manifest, npz, *_ = data
    report = _eval_json([str(manifest), "-d", str(npz), "--ann", "Flat"], tmp_path / "f.json")
    member = report["evaluations"][0]["ann"]
    assert member["recall@1"] == member["recall@10"] == member["recall@100"] == 1.0
    assert all(q["delta_AP"] == pytest.approx(0, abs=1e-12) for q in member["queries"])
    assert all(not q["lost_positives"] for q in member["queries"])
    hnsw = _eval_json([str(manifest), "-d", str(npz), "--ann", "HNSW8:efSearch=4"],
                      tmp_path / "h.json")
    assert hnsw["ann"]["index"] == "IndexHNSWFlat"
    table = capsys.readouterr().out
    assert "approximate search HNSW8:efSearch=4 (FAISS index factory, IndexHNSWFlat)" in table
    assert "recall (ann-benchmarks' rule, shown; big-ann-benchmarks' tie-aware" in table


def test_lost_positives_name_their_exact_rank(data, tmp_path):
    manifest, npz, *_ = data
    report = _eval_json([str(manifest), "-d", str(npz), "--ann", "IVF8,Flat:nprobe=1"],
                        tmp_path / "l.json")
    member = report["evaluations"][0]["ann"]
    lost = [(q, p) for q in member["queries"] for p in q["lost_positives"]]
    assert lost, "nprobe=1 of 8 lists should lose a positive on this set"
    exact = _eval_json([str(manifest), "-d", str(npz), "--per-query", str(tmp_path / "x.csv")],
                       tmp_path / "e.json")
    by_name = {q["name"]: q for q in exact["evaluations"][0]["queries"]}
    for q, p in lost:
        assert p["name"].startswith(q["name"].split("_")[0])  # same instance
        assert 1 <= p["exact_rank"] <= 200
        assert by_name[q["name"]]["AP"] == pytest.approx(q["AP_exact"])
        assert q["delta_AP"] <= 0 or q["delta_AP"] > 0  # a number


def test_sweep_reports_each_setting_and_the_first_reaching_exact(data, tmp_path, capsys):
    manifest, npz, *_ = data
    report = _eval_json([str(manifest), "-d", str(npz), "--ann", "IVF8,Flat:nprobe=1,2,8"],
                        tmp_path / "s.json")
    sweep = report["sweep"]
    assert [s["setting"] for s in sweep["settings"]] == [
        "IVF8,Flat:nprobe=1", "IVF8,Flat:nprobe=2", "IVF8,Flat:nprobe=8"]
    maps = [s["mAP"] for s in sweep["settings"]]
    assert maps[-1] == pytest.approx(sweep["mAP_exact"])  # every list probed: exhaustive
    assert sweep["settings"][-1]["recall@10"] == 1.0
    first = {e["name"]: e["setting"] for e in sweep["first_reaching_exact"]}
    assert set(first.values()) <= {s["setting"] for s in sweep["settings"]}
    table = capsys.readouterr().out
    assert "sweep under instance" in table and "queries reaching their exact AP first" in table


def test_a_search_beam_narrower_than_the_depth_is_noted(data, tmp_path, capsys):
    manifest, npz, *_ = data
    report = _eval_json([str(manifest), "-d", str(npz), "--ann", "HNSW8:efSearch=16,200",
                         "--depth", "100"], tmp_path / "h.json")
    printed = capsys.readouterr().out
    narrow = report["evaluations"][0]["ann"]
    settings = report["sweep"]["settings"]
    assert [s["setting"] for s in settings] == ["HNSW8:efSearch=16", "HNSW8:efSearch=200"]
    note = ("HNSW's efSearch (16) is below the depth (100): FAISS returns 100 results per "
            "query from a search beam 16 wide")
    assert narrow["beam_note"].startswith(note)
    assert f"  note: {note}" in printed
    # FAISS's default efSearch (16) is below the default depth (200) too.
    default = _eval_json([str(manifest), "-d", str(npz), "--ann", "HNSW8"],
                         tmp_path / "d.json")["evaluations"][0]["ann"]
    assert default["beam_note"].startswith("HNSW's efSearch (16) is below the depth (200)")
    wide = _eval_json([str(manifest), "-d", str(npz), "--ann", "HNSW8:efSearch=200",
                       "--depth", "100"], tmp_path / "w.json")["evaluations"][0]["ann"]
    assert wide["beam_note"] is None
    ivf = _eval_json([str(manifest), "-d", str(npz), "--ann", "IVF8,Flat"],
                     tmp_path / "i.json")["evaluations"][0]["ann"]
    assert ivf["beam_note"] is None
