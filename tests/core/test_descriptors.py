"""Aligning descriptors to a dataset: by name, query id over image, views not copies, and one
exact sentence per bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.core import descriptors as desc_module
from irviewer.core.dataset import Dataset, build_query
from irviewer.core.descriptors import (
    AlignedDescriptors,
    Descriptors,
    DescriptorTable,
    align,
    align_queries,
    bad_rows_message,
    check_gallery_rows,
    holds_gallery,
    name_key,
    name_keys,
    normalise_rows,
    row_norms,
)
from irviewer.core.errors import InputError

GALLERY = ("a", "b", "c", "d")


def make_dataset(gallery: tuple[str, ...] = GALLERY,
                 queries: tuple[tuple[str, str], ...] = (("q1", "q1"), ("b", "b"))) -> Dataset:
    """Return a tiny dataset: ``queries`` are (query id, image name) pairs."""
    qs = tuple(build_query(name, image, {"positive": [0]}) for name, image in queries)
    return Dataset(name="t", format="test", path=None, gallery=gallery, queries=qs,
                   groups=("positive",), protocols=("instance",))


def vectors(n: int, dim: int = 4, seed: int = 0) -> np.ndarray:
    """Return seeded float32 rows well away from zero."""
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32) + 3


def table(names, matrix) -> DescriptorTable:
    return DescriptorTable(tuple(names), matrix)


def descriptors(*tables: DescriptorTable, name: str = "d.npz") -> Descriptors:
    return Descriptors(path=Path(name), tables=tables, dim=int(tables[-1].vectors.shape[1]))


def unit(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


def memmap_of(tmp_path: Path, matrix: np.ndarray) -> np.ndarray:
    np.save(tmp_path / "m.npy", matrix)
    return np.load(tmp_path / "m.npy", mmap_mode="r")


# -- matching by name ---------------------------------------------------------------------

def test_rows_are_matched_by_name_and_gathered_when_out_of_order():
    f = vectors(5)
    d = descriptors(table(["d", "c", "q1", "b", "a"], f))
    al = align(d, make_dataset())
    assert isinstance(al, AlignedDescriptors) and al.dim == 4
    np.testing.assert_array_equal(al.gallery_rows, [4, 3, 1, 0])
    assert al.gallery_rows.dtype == np.int64
    assert al.gallery is f  # unchanged: ranking gathers chunk by chunk
    np.testing.assert_allclose(al.queries, [unit(f[2]), unit(f[3])], rtol=1e-6)
    assert al.queries.dtype == np.float32 and al.queries.flags.c_contiguous
    np.testing.assert_allclose(al.gallery_norms, np.linalg.norm(f[[4, 3, 1, 0]], axis=1),
                               rtol=1e-6)


def test_image_extensions_and_folders_are_ignored_on_both_sides():
    f = vectors(5)
    d = descriptors(table(["x/a.JPG", "b.jpeg", "y\\c.png", "d.TIFF", "q1.ppm"], f))
    al = align(d, make_dataset())
    assert al.gallery_rows is None  # the same order once the names are compared as keys
    np.testing.assert_allclose(al.queries[0], unit(f[4]), rtol=1e-6)
    ds = make_dataset(gallery=("a.jpg", "b.png", "c.bmp", "d.tif"),
                      queries=(("q1.jpg", "q1.jpg"),))
    al = align(descriptors(table(["a", "b", "c", "d", "q1"], f)), ds)
    assert al.gallery_rows is None
    np.testing.assert_allclose(al.queries[0], unit(f[4]), rtol=1e-6)


def test_name_key():
    assert name_key("oxford/all_souls_000013.jpg") == "all_souls_000013"
    assert name_key("C:\\data\\all_souls_000013.JPEG") == "all_souls_000013"
    assert name_key("v_bricks.e3.85") == "v_bricks.e3.85"  # not an image extension
    assert name_key(".jpg") == ".jpg"  # a name that is only an extension stays


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab./\\JPGjpng", max_size=9), max_size=8))
def test_name_keys_equal_name_key_of_each(names):
    assert name_keys(names) == [name_key(n) for n in names]
    assert name_keys(["x.jpg", 3]) == ["x", "3"]  # not all str: one by one


def test_query_id_row_wins_over_the_image_row():
    # Query "crop1" is cut from image "b": the row named "crop1" (a cropped-query
    # descriptor) is used when present, else b's row.
    f = vectors(5)
    d = descriptors(table(["a", "b", "c", "d", "crop1"], f))
    al = align(d, make_dataset(queries=(("crop1", "b"), ("other", "c"))))
    np.testing.assert_allclose(al.queries, [unit(f[4]), unit(f[2])], rtol=1e-6)


def test_query_table_is_searched_before_the_gallery_table():
    q, g = vectors(2, seed=1), vectors(4, seed=2)
    # "b" is both a query image (query table) and a gallery image (gallery table).
    d = descriptors(table(["q1", "b"], q), table(GALLERY, g))
    al = align(d, make_dataset())
    np.testing.assert_allclose(al.queries, [unit(q[0]), unit(q[1])], rtol=1e-6)
    assert al.gallery is g and al.gallery_rows is None
    # A query found in neither its id nor its image in the query table falls back to the
    # gallery table (here: image "c").
    al = align(d, make_dataset(queries=(("crop", "c"),)))
    np.testing.assert_allclose(al.queries[0], unit(g[2]), rtol=1e-6)


def test_the_same_name_in_the_query_and_gallery_tables_is_not_a_repeat():
    d = descriptors(table(["b"], vectors(1)), table(GALLERY, vectors(4, seed=3)))
    assert align(d, make_dataset(queries=(("b", "b"),))).queries.shape == (1, 4)


def test_lookup_prefers_the_earlier_table():
    d = descriptors(table(["b.jpg"], vectors(1)), table(GALLERY, vectors(4)))
    assert d.lookup() == {"b": (0, 0), "a": (1, 0), "c": (1, 2), "d": (1, 3)}


# -- memory maps stay memory maps ---------------------------------------------------------

def test_memmap_gallery_in_order_is_passed_through(tmp_path):
    g = vectors(5).astype(np.float16)  # gallery a..d, then the query-only row q1
    mm = memmap_of(tmp_path, g)
    al = align(descriptors(table([*GALLERY, "q1"], mm)), make_dataset())
    assert al.gallery_rows is None
    assert isinstance(al.gallery, np.memmap) and al.gallery.dtype == np.float16
    assert al.gallery.shape == (4, 4) and np.shares_memory(al.gallery, mm)  # a view, no copy
    np.testing.assert_allclose(al.queries[0], unit(g[4].astype(np.float32)), rtol=1e-3)


def test_memmap_gallery_out_of_order_is_gathered_by_index_not_copied(tmp_path):
    g = vectors(4).astype(np.float16)
    mm = memmap_of(tmp_path, g)
    al = align(descriptors(table(["c", "a", "d", "b"], mm)),
               make_dataset(queries=(("a", "a"),)))
    assert al.gallery is mm
    np.testing.assert_array_equal(al.gallery_rows, [1, 3, 0, 2])
    np.testing.assert_array_equal(np.asarray(al.gallery)[al.gallery_rows], g[[1, 3, 0, 2]])


def test_large_memmap_gallery_is_left_to_ranking_to_check(tmp_path, monkeypatch):
    monkeypatch.setattr(desc_module, "LAZY_CHECK_ROWS", 2)
    g = vectors(5)
    g[3] = 0
    ds = make_dataset()
    al = align(descriptors(table([*GALLERY, "q1"], memmap_of(tmp_path, g)), name="g.npy"), ds)
    assert al.gallery_norms is None  # not scanned here
    norms = row_norms(np.asarray(al.gallery))
    with pytest.raises(InputError) as caught:
        check_gallery_rows(norms, np.arange(4), ds, al)
    assert str(caught.value) == ("g.npy: 1 row is all zero (no direction to compare), "
                                 "e.g. row 3 (d)")
    check_gallery_rows(norms[:3], np.arange(3), ds, al)  # a good chunk passes


def test_large_memmap_gallery_is_checked_during_ranking(tmp_path, monkeypatch):
    from irviewer.core.ranking import rank

    monkeypatch.setattr(desc_module, "LAZY_CHECK_ROWS", 2)
    g = vectors(5)
    g[3] = 0
    ds = make_dataset()
    al = align(descriptors(table([*GALLERY, "q1"], memmap_of(tmp_path, g)), name="g.npy"), ds)
    with pytest.raises(InputError, match=r"^g\.npy: 1 row is all zero .*row 3 \(d\)$"):
        rank(al, ds)


def test_in_memory_large_gallery_is_still_checked_at_align(monkeypatch):
    monkeypatch.setattr(desc_module, "LAZY_CHECK_ROWS", 2)
    g = vectors(5)
    g[1] = np.inf
    with pytest.raises(InputError, match="row 1 \\(b\\)"):
        align(descriptors(table([*GALLERY, "q1"], g)), make_dataset(queries=(("q1", "q1"),)))


def test_integer_vectors_are_accepted_and_kept():
    g = np.arange(1, 21, dtype=np.int16).reshape(5, 4)
    al = align(descriptors(table([*GALLERY, "q1"], g)), make_dataset())
    assert al.gallery.dtype == np.int16 and al.queries.dtype == np.float32
    np.testing.assert_allclose(al.queries[0], unit(g[4]), rtol=1e-6)


# -- helpers ------------------------------------------------------------------------------

def test_normalise_rows():
    x = np.asfortranarray(np.array([[3.0, 4.0], [0.0, 0.0], [1e30, 1e30]]))
    out = normalise_rows(x)
    assert out.dtype == np.float32 and out.flags.c_contiguous
    np.testing.assert_allclose(out, [[0.6, 0.8], [0, 0], [2**-0.5, 2**-0.5]], rtol=1e-6)
    assert x[0, 0] == 3.0  # a copy


def test_row_norms_in_chunks_with_and_without_rows():
    m = vectors(7)
    np.testing.assert_allclose(row_norms(m, chunk_rows=3), np.linalg.norm(m, axis=1),
                               rtol=1e-6)
    np.testing.assert_allclose(row_norms(m, np.array([6, 0]), chunk_rows=1),
                               np.linalg.norm(m[[6, 0]], axis=1), rtol=1e-6)


@pytest.mark.parametrize("scale", [1e25, 1e-25, 1e-40])
def test_row_norms_of_huge_and_tiny_rows_are_true_norms(scale):
    """float32 squares of 1e25 overflow and of 1e-25 vanish; such rows are summed again
    in float64, so their norm is right (and no such row is mistaken for inf or zero)."""
    m = np.array([[3.0, 4.0, 0.0], [1.0, 2.0, 2.0]], dtype=np.float32) * np.float32(scale)
    m = np.vstack([m, [[1.0, 0.0, 0.0]]]).astype(np.float32)  # a normal row beside them
    expected = np.linalg.norm(m.astype(np.float64), axis=1)
    got = row_norms(m, chunk_rows=2)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert np.isfinite(got).all() and (got > 0).all()


def test_row_norms_keep_nan_and_zero_rows_visible():
    m = np.array([[1.0, np.nan], [0.0, 0.0], [np.inf, 1.0], [3.0, 4.0]], dtype=np.float32)
    got = row_norms(m)
    assert np.isnan(got[0]) and got[1] == 0 and np.isinf(got[2]) and got[3] == 5


def test_bad_rows_message_lists_three_examples():
    norms = np.array([1.0, np.nan, 0.0, np.inf, np.nan, np.nan])
    names = ("all_souls_000013", "x", "y", "z", "w", "v")
    assert bad_rows_message("dir/x.npz", norms, np.arange(6), names) == (
        "x.npz: 4 rows contain NaN or infinite values, e.g. row 1 (x), row 3 (z), "
        "row 4 (w), ...")
    assert bad_rows_message("x.npz", norms[[0, 2]], np.array([0, 2]), names) == (
        "x.npz: 1 row is all zero (no direction to compare), e.g. row 2 (y)")
    assert bad_rows_message("x.npz", np.ones(3), np.arange(3), names) is None


# -- one sentence per bad input -----------------------------------------------------------

def _nan_rows(rows, value=np.nan):
    f = vectors(5)
    f[list(rows)] = value
    return f


MANY = tuple(f"all_souls_{i:06d}" for i in range(14))

BAD = [
    ("12 gallery images missing",
     lambda: (descriptors(table([*MANY[:2], "q1"], vectors(3)), name="descriptors.npz"),
              make_dataset(gallery=MANY, queries=(("q1", "q1"),))),
     "descriptors.npz: 12 gallery images have no descriptor, e.g. all_souls_000002, "
     "all_souls_000003, all_souls_000004, ..."),
    ("one gallery image missing",
     lambda: (descriptors(table(["a", "b", "c", "q1"], vectors(4))), make_dataset()),
     "d.npz: 1 gallery image has no descriptor, e.g. d"),
    ("one query missing",
     lambda: (descriptors(table(GALLERY, vectors(4))), make_dataset()),
     "d.npz: 1 query has no descriptor (neither by query id nor by image name), e.g. q1"),
    ("queries missing",
     lambda: (descriptors(table(GALLERY, vectors(4))),
              make_dataset(queries=(("q1", "x1"), ("q2", "x2"), ("q3", "x3"), ("q4", "x4")))),
     "d.npz: 4 queries have no descriptor (neither by query id nor by image name), "
     "e.g. q1, q2, q3, ..."),
    ("repeated name",
     lambda: (descriptors(table([*GALLERY, "q1", "a"], vectors(6))), make_dataset()),
     "d.npz: 1 name appears more than once, e.g. a"),
    ("repeated once the extension is stripped",
     lambda: (descriptors(table([*GALLERY, "q1", "b.jpg", "c.png"], vectors(7))),
              make_dataset()),
     "d.npz: 2 names appear more than once, e.g. b, c"),
    ("NaN gallery row",
     lambda: (descriptors(table([*GALLERY, "q1"], _nan_rows([2]))), make_dataset()),
     "d.npz: 1 row contains NaN or infinite values, e.g. row 2 (c)"),
    ("inf gallery rows after a gather",
     lambda: (descriptors(table(["q1", "d", "c", "b", "a"], _nan_rows([1, 4], np.inf))),
              make_dataset()),
     "d.npz: 2 rows contain NaN or infinite values, e.g. row 4 (a), row 1 (d)"),
    ("zero gallery rows",
     lambda: (descriptors(table([*GALLERY, "q1"], _nan_rows([0, 2], 0))), make_dataset()),
     "d.npz: 2 rows are all zero (no direction to compare), e.g. row 0 (a), row 2 (c)"),
    ("zero query row",
     lambda: (descriptors(table([*GALLERY, "q1"], _nan_rows([4], 0))), make_dataset()),
     "d.npz: 1 query row is all zero (no direction to compare), e.g. row 4 (q1)"),
    ("NaN query row used through its image",
     lambda: (descriptors(table([*GALLERY, "crop"], _nan_rows([1]))),
              make_dataset(queries=(("crop", "crop"), ("b_1", "b"), ("b_2", "b")))),
     "d.npz: 1 query row contains NaN or infinite values, e.g. row 1 (b, query b_1)"),
    ("zero row in the query table",
     lambda: (descriptors(table(["q1", "b"], np.array([[1.0, 0], [0, 0]])),
                          table(GALLERY, vectors(4, dim=2))), make_dataset()),
     "d.npz: 1 query row is all zero (no direction to compare), e.g. queries row 1 (b)"),
    ("different dimensions",
     lambda: (descriptors(table(["q1", "b"], vectors(2, dim=3)), table(GALLERY, vectors(4))),
              make_dataset()),
     "d.npz: the query vectors have 3 dimensions but the gallery vectors have 4"),
]


@pytest.mark.parametrize(("label", "make", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_inputs_give_one_exact_sentence(label, make, message):
    d, ds = make()
    with pytest.raises(InputError) as caught:
        align(d, ds)
    assert str(caught.value) == message


QUERY_CASES = ("one query missing", "queries missing", "repeated name",
               "zero query row", "NaN query row used through its image",
               "zero row in the query table", "different dimensions")


@pytest.mark.parametrize(("label", "make", "message"),
                         [b for b in BAD if b[0] in QUERY_CASES], ids=QUERY_CASES)
def test_queries_alone_give_the_same_sentences(label, make, message):
    d, ds = make()
    with pytest.raises(InputError) as caught:
        align_queries(d, ds)
    assert str(caught.value) == message


def test_queries_alone_need_no_gallery_row():
    rows = vectors(5)
    ds = make_dataset()
    full = align(descriptors(table([*GALLERY, "q1"], rows)), ds)
    alone = align_queries(descriptors(table(["q1", "b"], rows[[4, 1]])), ds)
    np.testing.assert_array_equal(alone.queries, full.queries)
    assert alone.gallery.shape == (0, 4) and alone.dim == 4
    assert holds_gallery(["x/a.jpg", "b", "c", "d", "q1"], ds)
    assert not holds_gallery(["q1", "a"], ds)
