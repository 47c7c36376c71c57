"""Bad approximate-index inputs: each exits 2 with one sentence, never a crash or a
traceback, within the time limit (FAISS reads an index file in a child process first)."""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest

from irviewer.cli import main
from tests.ann_cases import clustered_set, unit

faiss = pytest.importorskip("faiss")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("ann_bad")
    manifest, npz = clustered_set(root / "set", n_instances=6, per=6, dim=16)
    rows = np.load(npz)["features"]
    n_gallery = 6 * 6 + 6
    good = faiss.IndexFlatIP(16)
    good.add(unit(rows[:n_gallery]))
    faiss.write_index(good, str(root / "good.faiss"))
    data = (root / "good.faiss").read_bytes()
    (root / "truncated.faiss").write_bytes(data[: len(data) // 2])
    (root / "garbage.faiss").write_bytes(b"\x00\xff" * 500)
    (root / "empty.faiss").write_bytes(b"")
    # A header that declares far more vectors than the file holds.
    lying = bytearray(data)
    lying[8:16] = (10**12).to_bytes(8, "little")
    (root / "lying.faiss").write_bytes(bytes(lying))
    wrong_dim = faiss.IndexFlatIP(8)
    wrong_dim.add(np.ones((n_gallery, 8), dtype=np.float32))
    faiss.write_index(wrong_dim, str(root / "dim8.faiss"))
    fewer = faiss.IndexFlatIP(16)
    fewer.add(unit(rows[:10]))
    faiss.write_index(fewer, str(root / "fewer.faiss"))
    return root, manifest, npz


@pytest.mark.parametrize(("spec", "message"), [
    ("missing.faiss", "--ann {root}/missing.faiss: no such index file"),
    ("empty.faiss", "--ann empty.faiss: 0 bytes, too short to be a FAISS index file "
                    "(truncated or another kind of file)"),
    ("garbage.faiss", "--ann garbage.faiss: not a FAISS index file (it does not begin with a "
                      "FAISS index header)"),
    ("truncated.faiss", "--ann truncated.faiss: FAISS cannot read this index file (corrupt, "
                        "truncated or not an index"),
    ("lying.faiss", "--ann lying.faiss: FAISS cannot read this index file (corrupt, "
                    "truncated or not an index"),
    ("dim8.faiss", "--ann dim8.faiss: the index holds 8-dimensional vectors but desc.npz has "
                   "16 dimensions"),
    ("fewer.faiss", "--ann fewer.faiss: the index holds 10 vectors but desc.npz has 48 or 42 "
                    "gallery rows; build it over those rows, in the file's order"),
    ("good.faiss:efSearch=3", "--ann good.faiss:efSearch=3: the index (IndexFlatIP) takes "
                              "no search parameter efSearch (IVF indexes take nprobe, HNSW "
                              "indexes efSearch)"),
])
def test_bad_index_files_exit_2_with_one_sentence(files, spec, message, capsys):
    root, manifest, npz = files
    start = time.monotonic()
    code = main(["eval", str(manifest), "-d", str(npz), "--ann", str(root / spec)])
    assert code == 2
    assert time.monotonic() - start < 60
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert err.startswith("irviewer: error: " + message.format(root=root)), err


@pytest.mark.parametrize(("spec", "message"), [
    ("IVFx,Flat", "--ann IVFx,Flat: FAISS cannot build this index factory string"),
    ("IVF4096,Flat", "--ann IVF4096,Flat: FAISS cannot train this index on 42 gallery "
                     "vectors"),
])
def test_bad_factory_strings_exit_2_with_one_sentence(files, spec, message, capsys):
    _, manifest, npz = files
    assert main(["eval", str(manifest), "-d", str(npz), "--ann", spec]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("irviewer: error: " + message), err


def test_without_faiss_one_sentence_names_the_extra(files, monkeypatch, capsys):
    _, manifest, npz = files
    monkeypatch.setitem(sys.modules, "faiss", None)
    assert main(["eval", str(manifest), "-d", str(npz), "--ann", "HNSW8"]) == 2
    assert capsys.readouterr().err.strip() == (
        "irviewer: error: --ann: approximate indexes need FAISS, which is not installed: "
        "install irviewer[ann] (pip install 'irviewer[ann]')")
