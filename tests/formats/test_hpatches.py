"""HPatches retrieval: .benchmark/.labels reading, the vl_pr AP rule over 50 results, and
.results files read and written."""

from __future__ import annotations

import re

import numpy as np
import pytest

from irviewer.core.descriptors import AlignedDescriptors, normalise_rows
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import rank
from irviewer.formats.base import ReadOptions
from irviewer.formats.hpatches import read_hpatches, read_hpatches_results, write_hpatches_results
from irviewer.formats.registry import detect

POOL = "s1.ref,s1.e1,s2.ref,s2.e1"
PATCHES = ("s1.ref.1", "s1.ref.2", "s1.e1.1", "s1.e1.2", "s2.ref.1", "s2.e1.1")


def write(tmp_path, bench=None, labels=None):
    (tmp_path / "t.benchmark").write_text(bench or f"{POOL}\ns1.ref.1\ns2.ref.1\n")
    if labels is not False:
        (tmp_path / "t.labels").write_text(labels or f"{POOL}\ns1.ref.1,s1.e1.1\n"
                                                     "s2.ref.1,s2.e1.1\n")
    return tmp_path / "t.benchmark"


def read(tmp_path, **kw):
    return read_hpatches(write(tmp_path, **kw), ReadOptions(gallery_names=PATCHES))


def lined_up(ds):
    """Every query ranks the gallery in gallery order."""
    angles = np.linspace(0.0, 3.0, ds.n_gallery)
    gallery = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    queries = normalise_rows(np.tile([1.0, 0.0], (ds.n_queries, 1)))
    return rank(AlignedDescriptors(queries, gallery, None, 2), ds, k=ds.n_gallery)


def test_reading_pool_order_clusters_and_groups(tmp_path):
    ds = read(tmp_path)
    assert ds.gallery == PATCHES  # pool order, then patch index
    q = ds.queries[0]
    assert q.self_index == 0 and q.group("same_patch").tolist() == [0, 2]
    assert q.group("same_image").tolist() == [0, 1, 2, 3]
    assert ds.protocols == ("hpatches-patch", "hpatches-image")
    assert detect(tmp_path / "t.benchmark").name == "hpatches"


def test_vl_pr_ap_over_the_listed_results(tmp_path):
    ds = read(tmp_path)
    r = lined_up(ds)
    patch = evaluate(ds, r, get_protocol("hpatches-patch"))
    # s1.ref.1 (itself removed): list 1, 2, 3, 4, 5 -> positive s1.e1.1 (2) at rank 1: 1/2.
    # s2.ref.1 (itself removed): list 0, 1, 2, 3, 5 -> positive s2.e1.1 (5) at rank 4: 1/5.
    assert patch.per_query["AP"].tolist() == pytest.approx([1 / 2, 1 / 5])
    image = evaluate(ds, r, get_protocol("hpatches-image"))
    # s1.ref.1: patches of images s1.ref and s1.e1 (1, 2, 3) at ranks 0, 1, 2 -> 1.
    assert image.per_query["AP"].tolist() == pytest.approx([1.0, 1 / 5])
    # vl_pr divides by the positives *in the list*: only 2 of 3 image-task positives listed
    # within 2 results -> (1/1 + 2/2) / 2 = 1, where trec_eval would give 2/3.
    short = evaluate(ds, r, get_protocol("hpatches-image").override(list_depth=2))
    assert short.per_query["AP"][0] == pytest.approx(1.0)
    assert evaluate(ds, r, get_protocol("hpatches-image").override(
        list_depth=2, ap_positives="all")).per_query["AP"][0] == pytest.approx(2 / 3)
    # A query with positives but none in its list scores 0 (not skipped), as the official code.
    assert short.per_query["AP"][1] == 0.0 and short.summary["n_skipped"] == 0


def test_results_round_trip(tmp_path):
    ds = read(tmp_path)
    r = lined_up(ds)
    write_hpatches_results(tmp_path / "t.results", ds, r)
    lines = (tmp_path / "t.results").read_text().splitlines()
    assert lines[0] == POOL
    assert lines[1] == "s1.ref.1,s1.ref.2,s1.e1.1,s1.e1.2,s2.ref.1,s2.e1.1"
    assert lines[2] == "s2.ref.1,s1.ref.1,s1.ref.2,s1.e1.1,s1.e1.2,s2.e1.1"
    again = read_hpatches_results(tmp_path / "t.results", ds)
    for name in ds.protocols:
        a = evaluate(ds, r, get_protocol(name)).per_query["AP"]
        b = evaluate(ds, again, get_protocol(name)).per_query["AP"]
        np.testing.assert_allclose(a, b)


def test_test_split_without_labels_can_be_ranked_not_scored(tmp_path):
    ds = read(tmp_path, labels=False)
    assert "ground truth withheld" in ds.notes[0]
    ev = evaluate(ds, lined_up(ds), get_protocol("hpatches-patch"))
    assert ev.summary["n_evaluated"] == 0 and ev.summary["n_skipped"] == 2


BAD = [
    ({"labels": "x,y\ns1.ref.1,s1.e1.1\ns2.ref.1,s2.e1.1\n"},
     "t.labels: its first line (the pool) differs from t.benchmark's"),
    ({"labels": f"{POOL}\ns1.ref.1,s1.e1.1\n"}, "t.labels: 1 label lines for 2 queries"),
    ({"labels": f"{POOL}\ns1.e1.1,s1.ref.2\ns2.ref.1,s2.e1.1\n"},
     "t.labels, line 2: the cluster does not hold its query s1.ref.1"),
    ({"bench": f"{POOL}\ns1.ref\n", "labels": f"{POOL}\ns1.ref\n"},
     "t.benchmark: 1 patches of the benchmark have no descriptor, e.g. s1.ref"),
    ({"bench": f"{POOL}\n", "labels": f"{POOL}\n"},
     "t.benchmark: no query patch after the pool line"),
]


@pytest.mark.parametrize(("files", "message"), BAD)
def test_malformed_benchmarks(tmp_path, files, message):
    with pytest.raises(InputError, match=re.escape(message)):
        read(tmp_path, **files)


def test_malformed_results(tmp_path):
    ds = read(tmp_path)
    cases = [
        ("x\na\nb\n", "t.results: its first line (the pool) differs from the benchmark's"),
        (f"{POOL}\ns1.ref.1\n", "t.results: 1 result lines for 2 queries"),
        (f"{POOL}\ns2.ref.1,s1.ref.2\ns2.ref.1\n",
         "t.results, line 2: starts with s2.ref.1, not its query s1.ref.1"),
        (f"{POOL}\ns1.ref.1,s9.ref.1\ns2.ref.1\n",
         "t.results, line 2: 1 patches are not in the pool, e.g. s9.ref.1"),
    ]
    for text, message in cases:
        (tmp_path / "t.results").write_text(text)
        with pytest.raises(InputError, match=re.escape(message)):
            read_hpatches_results(tmp_path / "t.results", ds)


def csv_folder(tmp_path, rows_per_image=3, bad=None):
    """hpatches-benchmark layout: descriptors/<name>/<sequence>/<type>.csv, 0-based lines."""
    root = tmp_path / "descriptors" / "mine"
    rng = np.random.default_rng(0)
    for seq in ("s1", "s2"):
        (root / seq).mkdir(parents=True)
        for image in ("ref", "e1"):
            rows = rng.standard_normal((rows_per_image, 4))
            text = "\n".join(",".join(f"{v:.5f}" for v in row) for row in rows)
            (root / seq / f"{image}.csv").write_text(text + "\n")
    if bad:
        (root / "s2" / "e1.csv").write_text(bad)
    return root


def test_descriptor_csv_folder_names_patches_by_line(tmp_path, capsys):
    from irviewer.cli import main
    from irviewer.formats.descriptor_files import read_descriptors

    folder = csv_folder(tmp_path)
    d = read_descriptors(folder)
    names = d.tables[0].names
    assert names[:4] == ("s1.e1.0", "s1.e1.1", "s1.e1.2", "s1.ref.0") and len(names) == 12
    assert d.dim == 4 and len(d.sha256) == 64
    bench = write(tmp_path)
    assert main(["eval", str(bench), "-d", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "(hpatches): 2 queries, 12 gallery images" in out  # every patch of the pool


@pytest.mark.parametrize(("bad", "message"), [
    ("1,2,3,4\n1,2\n", "mine: s2/e1.csv is not a matrix of comma-separated numbers"),
    ("1,2\n3,4\n", "mine: s2/e1.csv has 2 values per line, the other files 4"),
    ("a,b,c,d\n", "mine: s2/e1.csv is not a matrix of comma-separated numbers"),
])
def test_malformed_descriptor_csv(tmp_path, bad, message):
    from irviewer.formats.descriptor_files import read_descriptors

    with pytest.raises(InputError, match=re.escape(message)):
        read_descriptors(csv_folder(tmp_path, bad=bad))
