"""A vector engine at irviewer's edges: reading never creates or writes a Milvus Lite
database, one held by another program is named as such, credentials are refused without
being repeated, and search parameters (nprobe, ef; a comma list sweeping) reach Milvus as
the collection's index type takes them, with the note of a beam narrower than the depth."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from irviewer.cli import main
from irviewer.core.errors import InputError
from tests.ann_cases import clustered_set, milvus_collection, unit

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")


def indexed_collection(uri: str, name: str, names: list[str], vectors: np.ndarray,
                       index_type: str, params: dict) -> None:
    """Create the collection ``name`` with an ``index_type`` index built (flushed), so that
    searches go through the index and its parameters."""
    from pymilvus import MilvusClient

    milvus_collection(uri, name, names, vectors, index_type, params=params)
    client = MilvusClient(uri=uri)
    client.flush(name)
    client.release_collection(name)
    client.load_collection(name)
    client.close()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("engine_surface")
    manifest, npz = clustered_set(root / "set", n_instances=40, per=10, dim=16, spread=0.9)
    z = np.load(npz)
    names, rows = [str(n) for n in z["names"]], z["features"]
    n_g = sum(1 for n in names if "_q" not in n)
    db = str(root / "gallery.db")
    gallery = unit(rows[:n_g])
    milvus_collection(db, "flat", names[:n_g], gallery)
    indexed_collection(db, "hnsw", names[:n_g], gallery, "HNSW", {"M": 4,
                                                                  "efConstruction": 8})
    indexed_collection(db, "ivf", names[:n_g], gallery, "IVF_FLAT", {"nlist": 16})
    yield root, manifest, npz, db, names, n_g
    # The client keeps an embedded server per database until the process ends: stop this
    # one, so that the tests after these do not share the process with it.
    from milvus_lite.server_manager import server_manager_instance

    server_manager_instance.release_server(db)


def _fails(args, capsys) -> str:
    assert main(["eval", *args]) == 2
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0].removeprefix("irviewer: error: ")


def test_a_missing_lite_database_is_refused_and_not_created(data, capsys):
    root, manifest, npz, *_ = data
    said = _fails([str(manifest), "-d", str(npz), "--engine", str(root / "nosuch.db"),
                   "--collection", "flat"], capsys)
    assert said == (f"--engine {root / 'nosuch.db'}: there is no Milvus Lite database there; "
                    "irviewer reads a vector engine and never creates one, so give the path "
                    "of one that holds the gallery")
    assert not (root / "nosuch.db").exists()


def test_a_file_that_is_not_a_lite_database_is_one_sentence(data, capsys):
    root, manifest, npz, *_ = data
    (root / "notes.db").write_text("a sqlite file, say\n")
    said = _fails([str(manifest), "-d", str(npz), "--engine", str(root / "notes.db"),
                   "--collection", "flat"], capsys)
    assert said == (f"--engine {root / 'notes.db'}: a file, not a Milvus Lite database "
                    "(Milvus Lite keeps a database in a folder named *.db); give the path of "
                    "the database that holds the gallery")
    assert (root / "notes.db").read_text() == "a sqlite file, say\n"


def test_a_folder_milvus_did_not_make_is_never_written_into(data, capsys):
    root, manifest, npz, *_ = data
    folder = root / "photos.db"
    folder.mkdir()
    (folder / "a.jpg").write_bytes(b"jpeg")
    said = _fails([str(manifest), "-d", str(npz), "--engine", str(folder), "--collection",
                   "flat"], capsys)
    assert said.startswith(f"--engine {folder}: a folder Milvus Lite did not make"), said
    assert sorted(p.name for p in folder.iterdir()) == ["a.jpg"]


def test_a_local_path_not_named_db_is_refused(data, capsys):
    root, manifest, npz, *_ = data
    said = _fails([str(manifest), "-d", str(npz), "--engine", str(root / "gallery"),
                   "--collection", "flat"], capsys)
    assert said == (f"--engine {root / 'gallery'}: a Milvus Lite database is a folder named "
                    "*.db (gallery.db); a server's URI begins with http://")


@pytest.mark.parametrize("uri", ["", "  "])
def test_an_empty_engine_is_refused(data, uri, capsys):
    _root, manifest, npz, *_ = data
    said = _fails([str(manifest), "-d", str(npz), "--engine", uri, "--collection", "flat"],
                  capsys)
    assert said == ("--engine: the URI is empty; give a Milvus Lite database (gallery.db) or "
                    "a Milvus server (http://host:19530)")


def test_credentials_in_the_uri_are_refused_and_never_repeated(data, capsys):
    _root, manifest, npz, *_ = data
    assert main(["eval", str(manifest), "-d", str(npz), "--engine",
                 "http://admin:S3cr3tPass@127.0.0.1:9:nprobe=2", "--collection", "flat"]) == 2
    out, err = capsys.readouterr()
    assert "S3cr3tPass" not in out + err and "admin" not in out + err
    assert err.strip() == (
        "irviewer: error: --engine http://127.0.0.1:9:nprobe=2: irviewer takes no user name "
        "or password in the URI, where the shell's history and saved sessions would keep "
        "them; put them in the environment variable IRVIEWER_MILVUS_TOKEN (user:password, "
        "or an API key)")


def test_a_database_held_by_another_program_is_named_as_such(data, tmp_path, capsys):
    _root, manifest, npz, *_ = data
    held = tmp_path / "held.db"
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(sys.path[0])!r})
        import numpy as np
        from tests.ann_cases import milvus_collection
        milvus_collection({str(held)!r}, "flat", ["a"], np.ones((1, 16), dtype=np.float32))
        from pymilvus import MilvusClient
        client = MilvusClient(uri={str(held)!r})
        print("ready", flush=True)
        sys.stdin.read()
    """)
    holder = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              cwd=str(sys.path[0]))
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        said = _fails([str(manifest), "-d", str(npz), "--engine", str(held), "--collection",
                       "flat"], capsys)
    finally:
        holder.communicate("", timeout=30)
    assert said.startswith(f"--engine {held}: the Milvus Lite database is open in process "
                           f"{holder.pid} ("), said
    assert said.endswith("Milvus Lite lets one program use a database at a time; close that "
                         "program (or its MilvusClient) and try again, or serve it with Milvus "
                         "Lite's server command and give its http:// address"), said


def _report(args, out, capsys):
    code = main(["eval", *args, "--json", str(out)])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    return json.loads(out.read_text()), printed.out


def _milvus_own(db, collection, queries, depth, params):
    """Return Milvus Lite's own lists (names) for ``queries`` with ``params``."""
    from pymilvus import MilvusClient

    client = MilvusClient(uri=db)
    found = client.search(collection, data=queries.tolist(), limit=depth,
                          output_fields=["name"], anns_field="vec",
                          search_params={"metric_type": "IP", "params": params})
    return [[h["entity"]["name"] for h in hits] for hits in found]


def test_ef_sweeps_an_hnsw_collection_with_milvus_own_lists(data, tmp_path, capsys, monkeypatch):
    import pymilvus

    _root, manifest, npz, db, names, n_g = data
    sent: list[dict] = []
    real = pymilvus.MilvusClient.search

    def spy(self, *args, **kwargs):
        sent.append(kwargs.get("search_params"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pymilvus.MilvusClient, "search", spy)
    depth = 30
    report, printed = _report([str(manifest), "-d", str(npz), "--engine", f"{db}:ef=4,64",
                               "--collection", "hnsw", "--depth", str(depth)],
                              tmp_path / "e.json", capsys)
    monkeypatch.undo()
    assert {json.dumps(p, sort_keys=True) for p in sent} == {
        '{"metric_type": "IP", "params": {"ef": 4}}', '{"metric_type": "IP", "params": {"ef": 64}}'}
    settings = report["sweep"]["settings"]
    assert [s["setting"] for s in settings] == ["milvus:hnsw:ef=4", "milvus:hnsw:ef=64"]
    assert settings[0]["recall@10"] < settings[1]["recall@10"]
    # The first setting's lists are Milvus Lite's own at ef=4, scored as a ranking file.
    queries = unit(np.load(npz)["features"][n_g:])
    own = _milvus_own(db, "hnsw", queries, depth, {"ef": 4})
    gallery = names[:n_g]
    index = {n: i for i, n in enumerate(gallery)}
    ids = np.array([[index[n] for n in row] + [-1] * (depth - len(row)) for row in own])
    scores = np.where(ids >= 0, -np.arange(depth, dtype=np.float32)[None, :], -np.inf)
    ranking = tmp_path / "own.npz"
    np.savez(ranking, indices=ids, scores=scores, query_names=np.array(names[n_g:]),
             gallery_names=np.array(gallery))
    direct, _ = _report([str(manifest), "--ranking", str(ranking)], tmp_path / "own.json",
                        capsys)
    np.testing.assert_allclose([q["AP"] for q in report["evaluations"][0]["queries"]],
                               [q["AP"] for q in direct["evaluations"][0]["queries"]],
                               atol=1e-9)
    member = report["evaluations"][0]["ann"]
    assert member["beam_note"].startswith(
        "HNSW's ef (4) is below the depth (30): Milvus Lite returns 30 results per query from "
        "a search beam 4 wide")
    assert f"  note: {member['beam_note']}" in printed


def test_nprobe_and_efsearch_reach_milvus_by_its_names(data, tmp_path, capsys):
    _root, manifest, npz, db, *_ = data
    # Milvus Lite builds 128 lists whatever nlist says (milvus-lite 3): 128 probes them all.
    report, _ = _report([str(manifest), "-d", str(npz), "--engine", f"{db}:nprobe=1,128",
                         "--collection", "ivf", "--depth", "30"], tmp_path / "i.json", capsys)
    settings = report["sweep"]["settings"]
    assert [s["setting"] for s in settings] == ["milvus:ivf:nprobe=1", "milvus:ivf:nprobe=128"]
    assert settings[0]["recall@10"] < 1.0 and settings[1]["recall@10"] == 1.0
    assert report["evaluations"][0]["ann"]["beam_note"] is None
    # FAISS's name for HNSW's beam is Milvus's ef.
    alias, _ = _report([str(manifest), "-d", str(npz), "--engine", f"{db}:efSearch=64",
                        "--collection", "hnsw", "--depth", "30"], tmp_path / "h.json", capsys)
    assert alias["evaluations"][0]["ann"]["setting"] == "milvus:hnsw:ef=64"
    assert alias["evaluations"][0]["ann"]["beam_note"] is None


def test_milvus_lite_default_ef_below_the_depth_is_noted(data, tmp_path, capsys):
    _root, manifest, npz, db, *_ = data
    report, _ = _report([str(manifest), "-d", str(npz), "--engine", db, "--collection",
                         "hnsw", "--depth", "100"], tmp_path / "d.json", capsys)
    assert report["evaluations"][0]["ann"]["beam_note"].startswith(
        "HNSW's ef (64) is below the depth (100): Milvus Lite returns 100 results")


@pytest.mark.parametrize(("engine", "collection", "message"), [
    (":nprobe=8", "flat", "--engine {db}:nprobe=8: the FLAT index of the collection flat "
                          "takes no search parameter nprobe"),
    (":nprobe=8", "hnsw", "--engine {db}:nprobe=8: the HNSW index of the collection hnsw "
                          "takes ef, not nprobe"),
    (":ef=0", "hnsw", "--engine {db}:ef=0: ef=0 is below 1; ef (the width of HNSW's search "
                      "beam) takes whole numbers from 1"),
    (":efSearch=0", "hnsw", "--engine {db}:efSearch=0: efSearch=0 is below 1"),
    (":ef=8:efSearch=16", "hnsw", "--engine {db}:ef=8:efSearch=16: ef is given twice "
                                  "(efSearch is FAISS's name for it)"),
    (":nprobe=1.5", "ivf", "--engine {db}:nprobe=1.5: nprobe=1.5 is not a whole number"),
    (":ef=2000000000", "hnsw", "--engine {db}:ef=2000000000: ef=2000000000 is above "
                               "1,048,576, the most it takes"),
    (":nprobe=x", "ivf", "--engine {db}:nprobe=x: nprobe=x is not a number"),
])
def test_bad_engine_parameters_are_one_sentence(data, engine, collection, message, capsys):
    _root, manifest, npz, db, *_ = data
    said = _fails([str(manifest), "-d", str(npz), "--engine", f"{db}{engine}", "--collection",
                   collection], capsys)
    assert said.startswith(message.format(db=db)), said


def test_a_session_naming_a_missing_database_creates_nothing(data, tmp_path):
    from irviewer.opening.opener import open_now
    from irviewer.opening.session_file import load_session, open_request

    _root, manifest, npz, *_ = data
    planted = tmp_path / "planted.db"
    irv = tmp_path / "shared.irv"
    irv.write_text(json.dumps({
        "format": "irviewer-session", "version": 1, "dataset": str(manifest),
        "descriptors": [str(npz)],
        "engine": {"uri": str(planted), "collection": "flat", "names": None}}))
    request = open_request(load_session(irv))
    with pytest.raises(InputError) as e:
        open_now(request)
    assert str(e.value).startswith(f"--engine {planted}: there is no Milvus Lite database")
    assert not planted.exists()


def test_the_window_adds_a_swept_engine_and_a_session_reopens_each_setting(data):
    from irviewer.core.progress import result_of
    from irviewer.methods.searched import iter_searched, plan_engine
    from irviewer.opening.opener import open_now
    from irviewer.opening.request import OpenRequest
    from irviewer.opening.session_file import SessionFile, open_request

    _root, manifest, npz, db, *_ = data
    opened = open_now(OpenRequest(manifest, (npz,), k=30))
    plain = opened.first
    plan = plan_engine(opened.methods, opened.dataset, plain.name, f"{db}:ef=8,64", "hnsw")
    assert plan.names == [f"{plain.name} + milvus:hnsw:ef=8", f"{plain.name} + milvus:hnsw:ef=64"]
    opened.add(result_of(iter_searched(plain, plan, opened.dataset)))
    assert opened.request.engines == ((0, (f"{db}:ef=8", "hnsw", None)),
                                      (0, (f"{db}:ef=64", "hnsw", None)))
    session = SessionFile(dataset=manifest, descriptors=(npz,), engines=opened.request.engines)
    again = open_now(open_request(session, k=30))
    assert list(again.methods) == list(opened.methods)
    for name in plan.names:
        np.testing.assert_array_equal(again.methods[name].ranking.top_indices,
                                      opened.methods[name].ranking.top_indices)


def test_the_window_refuses_an_engine_with_credentials(data):
    from irviewer.methods.searched import plan_engine
    from irviewer.opening.opener import open_now
    from irviewer.opening.request import OpenRequest

    _root, manifest, npz, *_ = data
    opened = open_now(OpenRequest(manifest, (npz,)))
    with pytest.raises(InputError) as e:
        plan_engine(opened.methods, opened.dataset, opened.first.name,
                    "http://u:Pa55@host:19530", "hnsw")
    assert "Pa55" not in str(e.value) and "u:" not in str(e.value)


def test_a_failure_with_the_database_held_here_is_not_blamed_on_another_program(
        data, monkeypatch, capsys):
    """This process's client keeps serving a database it opened (the fixture's): a
    connection that fails for another reason says that reason."""
    import pymilvus

    _root, manifest, npz, db, *_ = data

    def refuse(*_args, **_kwargs):
        raise ConnectionError("GOAWAY received")

    monkeypatch.setattr(pymilvus, "MilvusClient", refuse)
    said = _fails([str(manifest), "-d", str(npz), "--engine", db, "--collection", "flat"],
                  capsys)
    assert said == f"--engine {db}: the engine cannot be reached (GOAWAY received)"


def test_figure_sweep_draws_an_engines_swept_parameter(data, tmp_path, capsys, qapp):
    _root, manifest, npz, db, _names, _n_g = data
    out = tmp_path / "sweep.png"
    assert main(["figure", str(manifest), "-d", str(npz), "--engine", f"{db}:ef=4,64",
                 "--collection", "hnsw", "--sweep", "--out", str(out)]) == 0
    assert "2 settings of milvus:hnsw" in capsys.readouterr().out
    assert out.stat().st_size > 1000
