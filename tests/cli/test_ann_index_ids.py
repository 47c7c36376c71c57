"""Which image each id of an index file is: an index over the dataset's gallery in the
dataset's order is read as such whatever the descriptor file's layout (one table with the
queries interleaved included), one in the file's order as the file's rows, one in any other
order through ``--ann-names``; the output says which order was taken, and an order the
index does not follow is refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from irviewer.cli import main
from tests.ann_cases import clustered_set, unit

faiss = pytest.importorskip("faiss")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("ids")
    manifest, npz = clustered_set(root / "set", n_instances=12, per=8, dim=16)
    z = np.load(npz)
    names, rows = np.array([str(n) for n in z["names"]]), z["features"]
    n_g = sum(1 for n in names if "_q" not in n)
    rng = np.random.default_rng(4)
    # One table, the queries interleaved with the gallery.
    mixed = rng.permutation(len(names))
    np.savez(root / "mixed.npz", names=names[mixed], features=rows[mixed])
    # Two tables, the gallery in another order than the dataset's.
    shuffled = rng.permutation(n_g)
    np.savez(root / "two.npz", queries=rows[n_g:], query_names=names[n_g:],
             gallery=rows[shuffled], gallery_names=names[shuffled])

    def write(order, name, kind="Flat"):
        index = faiss.index_factory(16, kind, faiss.METRIC_INNER_PRODUCT)
        vectors = unit(rows[order])
        index.train(vectors)
        index.add(vectors)
        faiss.write_index(index, str(root / name))

    write(np.arange(n_g), "dataset.faiss")
    write(np.arange(n_g), "dataset_ivf.faiss", "IVF4,Flat")
    write(mixed, "mixed_rows.faiss")  # every row of mixed.npz, queries included
    write(shuffled, "two_rows.faiss")
    other = rng.permutation(n_g)
    write(other, "other.faiss")
    (root / "other.txt").write_text("\n".join(names[other]) + "\n", encoding="utf-8")
    return root, manifest, names, n_g, other


def _run(args, out, capsys):
    code = main(["eval", *args, "--json", str(out)])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    return json.loads(out.read_text()), printed.out


def _ap(report):
    return [q["AP"] for q in report["evaluations"][0]["queries"]]


@pytest.mark.parametrize(("descriptors", "index", "order"), [
    ("mixed.npz", "dataset.faiss", "FAISS id i read as gallery image i in the dataset's order: "
                                   "64 of 64 sampled gallery images found themselves under it"),
    ("mixed.npz", "mixed_rows.faiss", "FAISS id i read as gallery row i of mixed.npz, in the "
                                      "file's order: 64 of 64 sampled gallery images found "
                                      "themselves under it"),
    ("two.npz", "dataset.faiss", "FAISS id i read as gallery image i in the dataset's order: "
                                 "64 of 64 sampled gallery images found themselves under it, "),
    ("two.npz", "two_rows.faiss", "FAISS id i read as gallery row i of two.npz, in the file's "
                                  "order: 64 of 64 sampled gallery images found themselves "
                                  "under it, "),
    ("set/desc.npz", "dataset.faiss", "FAISS id i read as gallery image i in the dataset's "
                                      "order, which is desc.npz's too: 64 of 64 sampled"),
])
def test_an_exhaustive_index_in_either_order_ranks_as_the_exact_multiply(
        data, descriptors, index, order, tmp_path, capsys):
    root, manifest, *_ = data
    exact, _ = _run([str(manifest), "-d", str(root / descriptors)], tmp_path / "e.json", capsys)
    report, printed = _run([str(manifest), "-d", str(root / descriptors), "--ann",
                            str(root / index)], tmp_path / "a.json", capsys)
    np.testing.assert_allclose(_ap(report), _ap(exact), atol=1e-6)
    member = report["evaluations"][0]["ann"]
    assert member["id_order"].startswith(order), member["id_order"]
    assert f"  note: {order}" in printed
    assert member["recall@10"] == 1.0


def test_an_index_in_another_order_is_read_through_a_names_file(data, tmp_path, capsys):
    root, manifest, *_ = data
    exact, _ = _run([str(manifest), "-d", str(root / "mixed.npz")], tmp_path / "e.json", capsys)
    report, _ = _run([str(manifest), "-d", str(root / "mixed.npz"), "--ann",
                      str(root / "other.faiss"), "--ann-names", str(root / "other.txt")],
                           tmp_path / "a.json", capsys)
    np.testing.assert_allclose(_ap(report), _ap(exact), atol=1e-6)
    assert report["evaluations"][0]["ann"]["id_order"] == (
        "FAISS id i read as the image on line i + 1 of other.txt: 64 of 64 sampled gallery "
        "images found themselves under it")


def test_an_approximate_index_file_keeps_its_exact_comparison(data, tmp_path, capsys):
    root, manifest, *_ = data
    report, _ = _run([str(manifest), "-d", str(root / "mixed.npz"), "--ann",
                      f"{root / 'dataset_ivf.faiss'}:nprobe=1,4"], tmp_path / "a.json", capsys)
    settings = report["sweep"]["settings"]
    assert [s["setting"].rsplit(":", 1)[-1] for s in settings] == ["nprobe=1", "nprobe=4"]
    assert settings[1]["recall@10"] == 1.0  # every list probed: exhaustive


def _fails(args, capsys) -> str:
    assert main(["eval", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err.removeprefix("irviewer: error: ")


def test_an_index_in_an_order_it_cannot_tell_is_refused(data, capsys):
    root, manifest, *_ = data
    said = _fails([str(manifest), "-d", str(root / "mixed.npz"), "--ann",
                   str(root / "other.faiss")], capsys)
    assert said.startswith("--ann other.faiss: the index's ids do not follow the dataset's or "
                           "the file's order (of 64 sampled gallery images, "), said
    assert said.endswith("found themselves as gallery image i in the dataset's order); name "
                         "the image of each FAISS id with --ann-names FILE"), said


@pytest.mark.parametrize(("write", "message"), [
    (lambda names, other: names[other][:-1], "--ann other.faiss: bad.txt names 107 images but "
                                             "the index holds 108 vectors; give one line per "
                                             "FAISS id"),
    (lambda names, other: [*names[other][:-1], names[other][0]],
     "--ann other.faiss: bad.txt: lines 1 and 108 name the same image"),
    (lambda names, other: [*names[other][:-1], "stranger.jpg"],
     "--ann other.faiss: bad.txt: 1 gallery image is not named, e.g. "),
    (lambda names, other: [*names[other][:5], "", *names[other][6:]],
     "--ann-names bad.txt: line 6 is empty; each line names the image of one FAISS id"),
])
def test_bad_names_files_are_one_sentence(data, write, message, capsys):
    root, manifest, names, _n_g, other = data
    (root / "bad.txt").write_text("\n".join(write(names, other)) + "\n", encoding="utf-8")
    said = _fails([str(manifest), "-d", str(root / "mixed.npz"), "--ann",
                   str(root / "other.faiss"), "--ann-names", str(root / "bad.txt")], capsys)
    assert said.startswith(message), said


def test_a_names_file_that_is_not_utf8_is_one_sentence(data, capsys):
    root, manifest, names, _n_g, other = data
    (root / "latin.txt").write_bytes("\n".join(names[other]).encode() + b"\n\xe9t\xe9\n")
    said = _fails([str(manifest), "-d", str(root / "mixed.npz"), "--ann",
                   str(root / "other.faiss"), "--ann-names", str(root / "latin.txt")], capsys)
    assert said == "--ann-names latin.txt: line 109 is not UTF-8 text; save the file as UTF-8"


def test_a_names_file_needs_an_index_file(data, capsys):
    root, manifest, *_ = data
    said = _fails([str(manifest), "-d", str(root / "mixed.npz"), "--ann", "IVF4,Flat",
                   "--ann-names", str(root / "other.txt")], capsys)
    assert said == ("--ann-names FILE: names the images of an index file's ids, and no --ann "
                    "SPEC is an index file (a factory string is built in the dataset's order)")
