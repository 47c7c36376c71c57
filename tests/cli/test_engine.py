"""`irviewer eval --engine URI --collection NAME`: a Milvus collection as the ranking
source, on Milvus Lite (a local file) and on a Milvus Lite server reached over gRPC on the
loopback address; bad engines exit 2 with one sentence."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from irviewer.cli import main
from tests.ann_cases import clustered_set, milvus_collection, unit

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("engine")
    manifest, npz = clustered_set(root / "set", n_instances=10, per=8, dim=16)
    z = np.load(npz)
    names, rows = [str(n) for n in z["names"]], z["features"]
    n_gallery = sum(1 for n in names if "_q" not in n)
    db = str(root / "gallery.db")
    milvus_collection(db, "gallery", names[:n_gallery], unit(rows[:n_gallery]))
    return root, manifest, npz, db, names, rows, n_gallery


def _report(args, out):
    assert main(["eval", *args, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def _ap(report):
    return [q["AP"] for q in report["evaluations"][0]["queries"]]


def test_a_flat_collection_ranks_as_the_exact_multiply(data, tmp_path):
    _root, manifest, npz, db, *_ = data
    engine = _report([str(manifest), "-d", str(npz), "--engine", db, "--collection",
                      "gallery"], tmp_path / "engine.json")
    exact = _report([str(manifest), "-d", str(npz)], tmp_path / "exact.json")
    np.testing.assert_allclose(_ap(engine), _ap(exact), atol=1e-12)
    member = engine["evaluations"][0]["ann"]
    assert member["setting"] == "milvus:gallery" and member["source"] == "Milvus Lite"
    assert member["index"] == "FLAT IP"
    assert member["recall@10"] == 1.0


def test_compare_counts_an_engine_method_and_a_flat_one_differs_by_nothing(data, tmp_path):
    """compare -d F --engine DB: the engine's method is the second method, compared with F
    at the depth the engine returned (F's list cut there): ΔAP 0 on every query."""
    _root, manifest, npz, db, *_ = data
    out = tmp_path / "c.json"
    assert main(["compare", str(manifest), "-d", str(npz), "--engine", db, "--collection",
                 "gallery", "--depth", "5", "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())["comparisons"]
    assert row["method"] == "desc.npz + milvus:gallery" and row["depth_compared"] == 5
    assert all(q["delta"] == 0.0 for q in row["queries"])
    assert row["mean_baseline"] < row["mean_baseline_whole"]


def test_every_descriptor_file_is_searched_in_the_engine(data, tmp_path):
    _root, manifest, npz, db, *_ = data
    other = tmp_path / "other.npz"
    other.write_bytes(npz.read_bytes())
    report = _report([str(manifest), "-d", str(npz), "-d", str(other), "--engine", db,
                      "--collection", "gallery"], tmp_path / "e.json")
    assert [e["method"] for e in report["evaluations"]] == [
        "desc.npz + milvus:gallery", "other.npz + milvus:gallery"]
    assert [e["ann"]["base"] for e in report["evaluations"]] == ["desc.npz", "other.npz"]


def test_an_ivf_collection_is_compared_with_the_exact_ranking(data, tmp_path):
    _root, manifest, npz, db, names, rows, n_gallery = data
    # The names in another field than the primary key, and a gallery out of order.
    from pymilvus import DataType, MilvusClient

    client = MilvusClient(uri=db)
    if client.has_collection("other"):
        client.drop_collection("other")
    schema = MilvusClient.create_schema(auto_id=True)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("image", DataType.VARCHAR, max_length=256)
    schema.add_field("vec", DataType.FLOAT_VECTOR, dim=16)
    params = client.prepare_index_params()
    params.add_index("vec", index_type="FLAT", metric_type="L2")
    client.create_collection("other", schema=schema, index_params=params)
    order = np.random.default_rng(1).permutation(n_gallery)
    vectors = unit(rows[:n_gallery])
    client.insert("other", [{"image": names[i], "vec": vectors[i].tolist()} for i in order])
    client.close()
    report = _report([str(manifest), "-d", str(npz), "--engine", db, "--collection", "other",
                      "--engine-names", "image"], tmp_path / "other.json")
    exact = _report([str(manifest), "-d", str(npz)], tmp_path / "exact.json")
    np.testing.assert_allclose(_ap(report), _ap(exact), atol=1e-12)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A Milvus Lite server on the loopback address, in a child process."""
    port = _free_port()
    folder = tmp_path_factory.mktemp("milvus_server")
    child = subprocess.Popen([sys.executable, "-m", "milvus_lite", "server", "--data-dir",
                              str(folder), "--host", "127.0.0.1", "--port", str(port)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):  # at most 30 s
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if child.poll() is not None:
                pytest.fail("the Milvus Lite server did not start")
            time.sleep(0.1)
        else:
            pytest.fail("the Milvus Lite server did not listen within 30 s")
        yield f"http://127.0.0.1:{port}"
    finally:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()


def test_the_network_path_to_a_server(data, server, tmp_path):
    _root, manifest, npz, _db, names, rows, n_gallery = data
    milvus_collection(server, "gallery", names[:n_gallery], unit(rows[:n_gallery]))
    report = _report([str(manifest), "-d", str(npz), "--engine", server, "--collection",
                      "gallery"], tmp_path / "net.json")
    exact = _report([str(manifest), "-d", str(npz)], tmp_path / "exact.json")
    np.testing.assert_allclose(_ap(report), _ap(exact), atol=1e-12)
    assert report["evaluations"][0]["ann"]["source"] == "Milvus"


def test_the_token_comes_from_the_environment(data, monkeypatch, tmp_path):
    import pymilvus

    seen = {}
    real = pymilvus.MilvusClient

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **{**kwargs, "token": ""})

    monkeypatch.setattr(pymilvus, "MilvusClient", spy)
    monkeypatch.setenv("IRVIEWER_MILVUS_TOKEN", "user:secret")
    _root, manifest, npz, db, *_ = data
    _report([str(manifest), "-d", str(npz), "--engine", db, "--collection", "gallery"],
            tmp_path / "t.json")
    assert seen["token"] == "user:secret"


@pytest.mark.parametrize(("extra", "message"), [
    (["--engine", "http://127.0.0.1:{port}", "--collection", "gallery"],
     "--engine http://127.0.0.1:{port}: the engine cannot be reached"),
    (["--engine", "{db}", "--collection", "nothing"],
     "--engine {db}: there is no collection 'nothing'; it holds"),
    (["--engine", "{db}", "--collection", "wrongdim"],
     "--engine wrongdim: its vectors have 8 dimensions but the descriptor file's queries "
     "have 16"),
    (["--engine", "{db}"], "--engine {db}: name the collection holding the gallery "
                           "(--collection NAME)"),
    (["--engine", "{db}", "--collection", "gallery", "--engine-names", "title"],
     "--engine gallery: there is no field title to read image names from; it has name, vec"),
    (["--engine", "{root}/no/such/folder/x.db", "--collection", "gallery"],
     "--engine {root}/no/such/folder/x.db: the folder {root}/no/such/folder does not exist"),
])
def test_bad_engines_exit_2_with_one_sentence(data, extra, message, capsys):
    root, manifest, npz, db, *_ = data
    milvus_collection(db, "wrongdim", ["a.jpg"], np.ones((1, 8), dtype=np.float32))
    port = _free_port()
    fill = {"port": port, "db": db, "root": root}
    start = time.monotonic()
    code = main(["eval", str(manifest), "-d", str(npz), *(e.format(**fill) for e in extra)])
    assert code == 2 and time.monotonic() - start < 60
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    assert err.startswith("irviewer: error: " + message.format(**fill)), err


def test_without_the_client_one_sentence_names_the_extra(data, monkeypatch, capsys):
    _root, manifest, npz, db, *_ = data
    monkeypatch.setitem(sys.modules, "pymilvus", None)
    assert main(["eval", str(manifest), "-d", str(npz), "--engine", db, "--collection",
                 "gallery"]) == 2
    assert capsys.readouterr().err.strip() == (
        "irviewer: error: --engine: a vector engine needs the Milvus client, which is not "
        "installed: install irviewer[milvus] (pip install 'irviewer[milvus]')")


@pytest.fixture(scope="module")
def queries_only(data):
    """A descriptor file holding only the queries' vectors (the gallery is in the engine)."""
    root, _manifest, _npz, _db, names, rows, n_gallery = data
    path = root / "queries.npz"
    np.savez(path, names=np.array(names[n_gallery:]), features=rows[n_gallery:])
    return path


def test_a_queries_only_file_ranks_in_the_engine_as_the_exact_multiply(data, queries_only,
                                                                      tmp_path, capsys):
    _root, manifest, npz, db, *_ = data
    engine = _report([str(manifest), "-d", str(queries_only), "--engine", db, "--collection",
                      "gallery"], tmp_path / "engine.json")
    printed = capsys.readouterr().out
    exact = _report([str(manifest), "-d", str(npz)], tmp_path / "exact.json")
    np.testing.assert_allclose(_ap(engine), _ap(exact), atol=1e-12)
    member = engine["evaluations"][0]["ann"]
    assert member["setting"] == "milvus:gallery" and member["index"] == "FLAT IP"
    for k in (1, 10, 100):
        assert member[f"recall@{k}"] is None and member[f"recall@{k}(tie-aware)"] is None
    assert member["mAP_exact"] is None and "queries" not in member
    assert member["exact"].startswith("no exact ranking to compare with")
    assert "no exact ranking to compare with" in printed


def test_a_queries_only_file_opens_the_engine_method_alone(data, queries_only):
    from irviewer.opening.opener import open_now
    from irviewer.opening.request import OpenRequest

    _root, manifest, *_ = data
    opened = open_now(OpenRequest(str(manifest), descriptors=(str(queries_only),),
                                  engine=data[3], collection="gallery"))
    assert list(opened.methods) == ["queries.npz + milvus:gallery"]
    method = opened.first
    assert method.ann is not None and method.base is None and not method.ann.recall


def test_a_queries_only_file_without_an_engine_keeps_the_gallery_sentence(data, queries_only,
                                                                          capsys):
    _root, manifest, *_ = data
    assert main(["eval", str(manifest), "-d", str(queries_only)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("irviewer: error: queries.npz: 90 gallery images have no "
                          "descriptor, e.g. i00_g0, i00_g1, i00_g2, ..."), err
