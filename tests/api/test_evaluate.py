"""irviewer.evaluate on a dataset: the document equals what `irviewer eval --json` writes for
the same data (the path of arrays null, their sha256 that of their bytes), through every
kind of method the pipeline makes (plain, re-ranked, an approximate sweep, corrections
applied), and the Result's typed access reads the same numbers."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import irviewer
from irviewer.cli import main
from irviewer.opening.request import demo_paths
from tests.ann_cases import clustered_set


def cli_document(tmp_path: Path, *argv: str) -> dict:
    out = tmp_path / "cli.json"
    assert main(["eval", *argv, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def held_as_file(document: dict, path: Path, sha256: str) -> dict:
    """Return the API's document with its arrays' identity replaced by the file's."""
    document = json.loads(json.dumps(document))
    for record in (document, *document["methods"]):
        record["descriptors"]["path"] = str(path)
        record["descriptors"]["sha256"] = sha256
    return document


def test_the_demo_arrays_give_eval_demo_json_key_for_key(tmp_path, capsys):
    manifest, strong = demo_paths()
    expected = cli_document(tmp_path, "--demo")
    with np.load(strong) as archive:
        z = dict(archive)
    result = irviewer.evaluate(manifest, embeddings=z["features"], names=z["names"],
                               name=strong.name)
    got = result.to_dict()
    assert got["descriptors"]["path"] is None
    assert got["descriptors"]["sha256"] == hashlib.sha256(z["features"].tobytes()).hexdigest()
    assert held_as_file(got, strong, expected["descriptors"]["sha256"]) == expected
    assert json.loads(result.to_json()) == got
    capsys.readouterr()


def test_queries_and_gallery_arrays_give_the_files_numbers(tmp_path, capsys):
    manifest, npz = clustered_set(tmp_path)
    with np.load(npz) as archive:
        z = dict(archive)
    names = [str(n) for n in z["names"]]
    is_query = np.array(["_q" in n for n in names])
    expected = cli_document(tmp_path, str(manifest), "-d", str(npz))
    result = irviewer.evaluate(manifest, queries=z["features"][is_query],
                               gallery=z["features"][~is_query],
                               query_names=np.array(names)[is_query],
                               gallery_names=np.array(names)[~is_query], name="desc.npz")
    got = result.to_dict()
    assert got["evaluations"] == expected["evaluations"]
    assert got["descriptors"]["sha256"] == hashlib.sha256(
        z["features"][is_query].tobytes() + z["features"][~is_query].tobytes()).hexdigest()
    capsys.readouterr()


def test_rows_without_names_follow_the_dataset_order_as_a_files_rows(tmp_path, capsys):
    """A single table of rows without names: the gallery in the dataset's order, then the
    queries that are not gallery images, with the same note as a file's."""
    manifest, npz = clustered_set(tmp_path)
    with np.load(npz) as archive:
        z = dict(archive)
    unnamed = tmp_path / "unnamed.npz"
    np.savez(unnamed, features=z["features"])
    expected = cli_document(tmp_path, str(manifest), "-d", str(unnamed))
    result = irviewer.evaluate(manifest, embeddings=z["features"], name="unnamed.npz")
    assert result.to_dict()["evaluations"] == expected["evaluations"]
    assert any("matched to the dataset by position" in n for n in result.notes)
    assert not any("--row-names" in n for n in result.notes)  # worded by keyword
    assert any("names=" in n for n in result.notes)
    capsys.readouterr()


@pytest.mark.parametrize("extra", [["--rerank", "aqe:n=2"], ["--ap", "trapezoid",
                                                             "--self-match", "keep"],
                                   ["--conventions", "--scores"], ["--depth", "5"],
                                   ["--protocol", "holidays"]])
def test_every_eval_option_gives_the_commands_document(tmp_path, capsys, extra):
    manifest, npz = clustered_set(tmp_path)
    with np.load(npz) as archive:
        z = dict(archive)
    expected = cli_document(tmp_path, str(manifest), "-d", str(npz), *extra)
    keywords = {"--rerank": ("rerank", "aqe:n=2"), "--ap": ("ap", "trapezoid"),
                "--self-match": ("self_match", "keep"), "--depth": ("depth", 5),
                "--protocol": ("protocol", "holidays")}
    options = dict(keywords[f] for f in extra if f in keywords)
    options |= {"conventions": "--conventions" in extra, "pair_scores": "--scores" in extra}
    result = irviewer.evaluate(manifest, embeddings=z["features"], names=z["names"],
                               name="desc.npz", **options)
    sha = expected["descriptors"]["sha256"]
    assert held_as_file(result.to_dict(), npz, sha) == expected
    capsys.readouterr()


def test_an_approximate_sweep_on_arrays_is_the_files_sweep(tmp_path, capsys):
    pytest.importorskip("faiss")
    manifest, npz = clustered_set(tmp_path)
    with np.load(npz) as archive:
        z = dict(archive)
    spec = "IVF4,Flat:nprobe=1,2"
    expected = cli_document(tmp_path, str(manifest), "-d", str(npz), "--ann", spec)
    got = irviewer.evaluate(manifest, embeddings=z["features"], names=z["names"],
                            name="desc.npz", ann=spec).to_dict()
    for key in ("sweep", "sweeps", "evaluations"):
        a, b = json.dumps(got[key], sort_keys=True), json.dumps(expected[key], sort_keys=True)
        assert _without_times(json.loads(a)) == _without_times(json.loads(b)), key
    capsys.readouterr()


def _without_times(value: object) -> object:
    """Return ``value`` without the measured times (seconds, queries per second), which
    differ between two runs of the same search."""
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items()
                if not (k.endswith("_s") or k.startswith("ms_") or "time" in k)}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def test_a_corrections_file_applies_to_arrays_as_to_files(tmp_path, capsys):
    manifest, npz = clustered_set(tmp_path)
    with np.load(npz) as archive:
        z = dict(archive)
    fixes = tmp_path / "fixes.csv"
    fixes.write_text("query,item,label\ni00_q,i01_g0,positive\n")
    expected = cli_document(tmp_path, str(manifest), "-d", str(npz), "--corrections",
                            str(fixes))
    got = irviewer.evaluate(manifest, embeddings=z["features"], names=z["names"],
                            name="desc.npz", corrections=fixes).to_dict()
    assert got["evaluations"] == expected["evaluations"]
    assert got["corrections"] == expected["corrections"]
    assert got["corrections"]["n_applied"] == 1
    capsys.readouterr()


def test_a_descriptor_file_given_by_path_is_the_commands_method(tmp_path, capsys):
    manifest, npz = clustered_set(tmp_path)
    expected = cli_document(tmp_path, str(manifest), "-d", str(npz))
    assert irviewer.evaluate(manifest, descriptors=npz).to_dict() == expected
    capsys.readouterr()


def test_a_dataset_read_once_gives_the_same_document_as_its_path(tmp_path):
    manifest, npz = clustered_set(tmp_path)
    with np.load(npz) as archive:
        z = dict(archive)
    dataset = irviewer.read_dataset(manifest)
    by_path = irviewer.evaluate(manifest, embeddings=z["features"], names=z["names"])
    by_dataset = irviewer.evaluate(dataset, embeddings=z["features"], names=z["names"])
    assert by_dataset.to_dict() == by_path.to_dict()


def test_a_score_matrix_ranks_as_the_vectors_it_came_from(tmp_path):
    """Scores of unit vectors are their cosines: the same ranks, the same numbers; the
    matrix's rows and columns may come in another order, named."""
    manifest, npz = clustered_set(tmp_path)
    with np.load(npz) as archive:
        z = dict(archive)
    names = np.array([str(n) for n in z["names"]])
    dataset = irviewer.read_dataset(manifest)
    rows = {n: i for i, n in enumerate(names)}
    unit = z["features"] / np.linalg.norm(z["features"], axis=1, keepdims=True)
    q = unit[[rows[n + ".jpg"] if n + ".jpg" in rows else rows[n]
              for n in dataset.query_names]]
    g = unit[[rows[n + ".jpg"] if n + ".jpg" in rows else rows[n] for n in dataset.gallery]]
    by_vectors = irviewer.evaluate(dataset, queries=q, gallery=g,
                                   query_names=list(dataset.query_names),
                                   gallery_names=list(dataset.gallery))
    shuffled = np.random.default_rng(3).permutation(len(dataset.gallery))
    by_scores = irviewer.evaluate(dataset, scores=(q @ g.T)[:, shuffled],
                                  gallery_names=np.array(dataset.gallery)[shuffled])
    by_distances = irviewer.evaluate(manifest, distances=2 - 2 * (q @ g.T))
    for result in (by_scores, by_distances):
        np.testing.assert_allclose(result.per_query("AP"), by_vectors.per_query("AP"))
        assert result.summary["mAP"] == pytest.approx(by_vectors.summary["mAP"])
    record = by_distances.to_dict()["scores"]
    assert record["order"] == "lower first" and record["path"] is None
    assert record["shape"] == [len(dataset.query_names), len(dataset.gallery)]
    assert by_distances.to_dict()["methods"][0]["kind"] == "scores"


def test_the_result_reads_the_documents_numbers(tmp_path):
    manifest, npz = clustered_set(tmp_path)
    with np.load(npz) as archive:
        z = dict(archive)
    result = irviewer.evaluate(manifest, embeddings=z["features"], names=z["names"],
                               rerank="aqe:n=2")
    document = result.to_dict()
    entry = document["evaluations"][0]
    scored = result.get(protocol="instance")
    assert result.methods == ("embeddings + aqe:n=2",)
    assert scored.mAP == entry["summary"]["mAP"] == result.summary["mAP"]
    assert scored.n_evaluated == entry["summary"]["n_evaluated"]
    assert list(result.queries) == [q["name"] for q in entry["queries"]]
    ap = result.per_query("AP")
    assert ap.dtype == np.float64
    assert ap.tolist() == [q["AP"] for q in entry["queries"]]
    assert np.nanmean(ap) == pytest.approx(scored.mAP)
    assert result.per_query("first_positive_rank").tolist() == [
        q["first_positive_rank"] for q in entry["queries"]]
    assert "instance" in repr(result) and "mAP=" in repr(result)
    assert result.table().splitlines()[2].startswith("descriptors  embeddings (in memory)")
    result.to_dict()["evaluations"].clear()  # a copy: the result keeps its own
    assert result.to_dict() == document
    with pytest.raises(irviewer.ArgumentError, match=r"^key: no per-query value is called "
                       r"'MAP@R'; the values are AP, "):
        result.per_query("MAP@R")
    with pytest.raises(irviewer.ArgumentError, match=r"^protocol: 'oxford' was not scored"):
        result.get(protocol="oxford")


def test_write_json_writes_the_commands_text(tmp_path, capsys):
    manifest, npz = clustered_set(tmp_path)
    result = irviewer.evaluate(manifest, descriptors=npz)
    result.write_json(tmp_path / "api.json")
    assert main(["eval", str(manifest), "-d", str(npz), "--json", str(tmp_path / "cli.json")]) \
        == 0
    assert (tmp_path / "api.json").read_text() == (tmp_path / "cli.json").read_text()
    capsys.readouterr()


def test_torch_cpu_tensors_give_the_numpy_numbers(tmp_path):
    torch = pytest.importorskip("torch")
    manifest, npz = clustered_set(tmp_path)
    with np.load(npz) as archive:
        z = dict(archive)
    by_numpy = irviewer.evaluate(manifest, embeddings=z["features"], names=z["names"])
    tensor = torch.from_numpy(z["features"].copy()).requires_grad_(True)
    by_torch = irviewer.evaluate(manifest, embeddings=tensor, names=z["names"])
    assert by_torch.to_dict() == by_numpy.to_dict()
    assert not by_torch.copied_to_host


def test_a_vector_engine_searched_with_arrays_is_the_commands_engine_method(tmp_path, capsys):
    """The queries' arrays alone (the gallery lives in the engine) are searched there as a
    descriptor file holding the queries only is."""
    pytest.importorskip("pymilvus")
    pytest.importorskip("milvus_lite")
    from tests.ann_cases import milvus_collection, unit

    manifest, npz = clustered_set(tmp_path, n_instances=6, per=5, dim=8)
    with np.load(npz) as archive:
        z = dict(archive)
    names = np.array([str(n) for n in z["names"]])
    is_query = np.array(["_q" in n for n in names])
    db = str(tmp_path / "gallery.db")
    milvus_collection(db, "gallery", list(names[~is_query]), unit(z["features"][~is_query]))
    queries_only = tmp_path / "queries.npz"
    np.savez(queries_only, features=z["features"][is_query], names=names[is_query])
    expected = cli_document(tmp_path, str(manifest), "-d", str(queries_only), "--engine", db,
                            "--collection", "gallery")
    got = irviewer.evaluate(manifest, embeddings=z["features"][is_query],
                            names=names[is_query], name="queries.npz", engine=db,
                            collection="gallery").to_dict()
    assert _without_times(got["evaluations"]) == _without_times(expected["evaluations"])
    assert got["methods"][0]["kind"] == "engine"
    capsys.readouterr()
