"""Bad approximate-index inputs: each exits 2 with one sentence, never a crash or a
traceback, within the time limit (FAISS reads an index file in a child process first)."""

from __future__ import annotations

import subprocess
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
    negative = faiss.IndexIDMap(faiss.IndexFlatIP(16))
    negative.add_with_ids(unit(rows[:n_gallery]), np.arange(n_gallery) - 5)
    faiss.write_index(negative, str(root / "negative.faiss"))
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
    ("fewer.faiss", "--ann fewer.faiss: the index holds 10 vectors but the dataset has 42 "
                    "gallery images and desc.npz 48 gallery rows; build it over those in "
                    "order, or name the image of each FAISS id with --ann-names FILE"),
    ("good.faiss:efSearch=3", "--ann good.faiss:efSearch=3: the index (IndexFlatIP) takes "
                              "no search parameter efSearch (IVF indexes take nprobe, HNSW "
                              "indexes efSearch)"),
    ("negative.faiss", "--ann negative.faiss: the index maps its vectors to ids -5 to 36, and "
                       "irviewer reads FAISS id i as an image (row i, or line i + 1 of "
                       "--ann-names FILE); rebuild it with ids from 0"),
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
    ("HNSW0", "--ann HNSW0: a count of 0 (HNSW0)"),
    ("HNSW1", "--ann HNSW1: HNSW1 links each vector to 1 neighbour"),
    ("IVF4,Flat:nprobe=0", "--ann IVF4,Flat:nprobe=0: nprobe=0 is below 1"),
    ("IVF4,Flat:nprobe=-1", "--ann IVF4,Flat:nprobe=-1: nprobe=-1 is below 1"),
    ("IVF4,Flat:nprobe=1e12", "--ann IVF4,Flat:nprobe=1e12: nprobe=1e12 is above "
                              "2,147,483,647, the most FAISS takes"),
    ("IVF4,Flat:nprobe=1.5", "--ann IVF4,Flat:nprobe=1.5: nprobe=1.5 is not a whole number"),
    ("HNSW8:efSearch=-5", "--ann HNSW8:efSearch=-5: efSearch=-5 is below 1"),
    ("IDMap,Flat", "--ann IDMap,Flat: irviewer numbers the gallery itself"),
    ("Pad99999999,Flat", "--ann Pad99999999,Flat: Pad99999999 asks for 99,999,999 dimensions"),
    ("IVF100000000,Flat", "--ann IVF100000000,Flat: FAISS cannot train this index on 42 "
                          "gallery vectors: IVF100000000 asks for 100,000,000 inverted lists"),
    ("IVF4," * 5000 + "Flat", "--ann IVF4,IVF4,"),
    ("NSG2,Flat", "--ann NSG2,Flat: FAISS failed adding the gallery to this index "
                  "(NNDescent.build cannot build a graph smaller than 100)"),
])
def test_bad_factory_strings_exit_2_with_one_sentence(files, spec, message, capsys):
    _, manifest, npz = files
    start = time.monotonic()
    assert main(["eval", str(manifest), "-d", str(npz), "--ann", spec]) == 2
    assert time.monotonic() - start < 30
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    assert err.startswith("irviewer: error: " + message), err
    assert len(err) < 600, err


def test_faiss_never_aborts_the_process(files, tmp_path):
    """The probe's HNSW0 ended the process with a C++ assertion (exit 134); in a fresh
    interpreter, as a user runs it, it is one sentence and exit 2."""
    _, manifest, npz = files
    done = subprocess.run([sys.executable, "-m", "irviewer", "eval", str(manifest), "-d",
                           str(npz), "--ann", "HNSW0"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr.strip().splitlines() == [
        "irviewer: error: --ann HNSW0: a count of 0 (HNSW0); the numbers of a factory string "
        "are counts and dimensions, from 1"]


def test_without_faiss_one_sentence_names_the_extra(files, monkeypatch, capsys):
    _, manifest, npz = files
    monkeypatch.setitem(sys.modules, "faiss", None)
    assert main(["eval", str(manifest), "-d", str(npz), "--ann", "HNSW8"]) == 2
    assert capsys.readouterr().err.strip() == (
        "irviewer: error: --ann: approximate indexes need FAISS, which is not installed: "
        "install irviewer[ann] (pip install 'irviewer[ann]')")
