"""Precomputed rankings: TREC runs and .npz result lists read into a truncated Ranking."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from irviewer.core.dataset import Dataset, SkippedQuery, build_query
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import Protocol
from irviewer.formats.rankings import read_ranking, sniff_ranking

FINITE = Protocol("t-finite", "test", positive=("positive",), ignored=("junk",), ap="finite")
TRAPEZOID = replace(FINITE, name="t-trapezoid", ap="trapezoid")


def small() -> Dataset:
    """Six gallery images g0..g5; qa: positives g1, g4, g5, junk g0; qb: positive g2."""
    queries = (build_query("qa", "qa", {"positive": [1, 4, 5], "junk": [0]}),
               build_query("qb", "qb", {"positive": [2], "junk": []}))
    return Dataset(name="s", format="test", path=None,
                   gallery=tuple(f"g{i}" for i in range(6)), queries=queries,
                   groups=("positive", "junk"), protocols=("instance",),
                   skipped_queries=(SkippedQuery("qz", "no gallery image"),))


def run(tmp_path, text: str, name: str = "r.run"):
    path = tmp_path / name
    path.write_text(text)
    return path


# -- TREC runs ----------------------------------------------------------------------------

def test_trec_run_is_read_in_rank_order_with_names_matched_loosely(tmp_path):
    # Lines out of order; g2.jpg matches g2 once the extension is stripped.
    path = run(tmp_path, "qa Q0 g3 2 0.8 x\nqa Q0 g0 1 0.9 x\nqa Q0 g1 3 0.7 x\n"
                         "qb Q0 g2.jpg 1 -0.5 x\nqa Q0 g2 4 0.6 x\nqa Q0 g5 5 0.1 x\n")
    assert sniff_ranking(path)
    ranking, notes = read_ranking(path, small())
    assert notes == ()
    assert ranking.truncated and ranking.source == "r.run" and ranking.k == 5
    assert ranking.top_indices.tolist() == [[0, 3, 1, 2, 5], [2, -1, -1, -1, -1]]
    assert ranking.top_scores[0].tolist() == pytest.approx([0.9, 0.8, 0.7, 0.6, 0.1])
    assert ranking.top_scores[1, 0] == pytest.approx(-0.5)
    # qa's items of interest: g0 (junk) rank 0, g1 rank 2, g4 not listed, g5 rank 4.
    idx, ranks, _ = ranking.items(0)
    assert dict(zip(idx.tolist(), ranks.tolist(), strict=True)) == {0: 0, 1: 2, 4: -1, 5: 4}


def test_truncated_list_scores_a_missing_positive_as_never_retrieved(tmp_path):
    """qa after removing junk g0: g3 (neg), g1 (pos), g2 (neg), g5 (pos); g4 is not listed.

    finite AP = (1/2 + 2/4) / 3 = 1/3 (g4 still counts among the 3 positives);
    trapezoid AP (revisitop compute_ap, ranks 1 and 3 of 3 positives)
      = 1/3 * ((0 + 1/2)/2 + (1/3 + 2/4)/2) = 2/9.
    """
    path = run(tmp_path, "qa Q0 g0 1 0.9 x\nqa Q0 g3 2 0.8 x\nqa Q0 g1 3 0.7 x\n"
                         "qa Q0 g2 4 0.6 x\nqa Q0 g5 5 0.1 x\nqb Q0 g2 1 0.5 x\n")
    ds = small()
    ranking, _ = read_ranking(path, ds)
    ev = evaluate(ds, ranking, FINITE)
    assert ev.per_query["AP"].tolist() == pytest.approx([1 / 3, 1.0])
    assert ev.per_query["P@1"][0] == 0.0
    assert ev.per_query["P@5"][0] == pytest.approx(2 / 5)
    assert ev.positives.of(0).tolist() == [1, 3] and ev.positives.n_positives[0] == 3
    assert evaluate(ds, ranking, TRAPEZOID).per_query["AP"][0] == pytest.approx(2 / 9)


def test_a_constant_rank_column_is_ordered_as_trec_eval_orders(tmp_path):
    # trec_eval's own example writes rank 0 everywhere: score descending, ties by docid
    # descending (strcmp(p2->docno, p1->docno)): g3 before g1 at 0.5.
    path = run(tmp_path, "qa Q0 g1 0 0.5 x\nqa Q0 g4 0 0.2 x\nqa Q0 g3 0 0.5 x\n"
                         "qa Q0 g5 0 0.9 x\nqb Q0 g2 0 1 x\n")
    ranking, notes = read_ranking(path, small())
    assert ranking.top_indices[0].tolist() == [5, 3, 1, 4]
    assert notes == ()


def test_rank_column_wins_over_scores_and_each_disagreement_is_noted(tmp_path):
    # qa: distances, ascending down the ranks (rising scores); qb: a tie kept in rank
    # order g1, g2 (trec_eval would put g2 first); all other queries: none.
    path = run(tmp_path, "qa Q0 g1 1 0.1 x\nqa Q0 g3 2 0.9 x\n"
                         "qb Q0 g1 1 0.5 x\nqb Q0 g2 2 0.5 x\n")
    ranking, notes = read_ranking(path, small())
    assert ranking.top_indices.tolist() == [[1, 3], [1, 2]]
    assert notes == (
        "r.run: in 1 lists the score rises down the rank column, e.g. qa; irviewer follows "
        "the rank column, trec_eval would re-sort by descending score (for distances, "
        "write -distance)",
        "r.run: in 1 lists equal scores are ranked in the rank column's order, e.g. qb; "
        "irviewer keeps it, trec_eval would order them by docid, descending",
    )


def test_missing_lists_and_lists_of_skipped_queries_are_noted(tmp_path):
    path = run(tmp_path, "qa Q0 g1 1 0.5 x\nqz Q0 g2 1 0.5 x\n")
    ds = small()
    ranking, notes = read_ranking(path, ds)
    assert notes == (
        "r.run: result lists of 1 queries that s skipped are ignored, e.g. qz",
        "r.run: 1 of 2 queries have no result list, e.g. qb: nothing was retrieved for "
        "them, so each of their positives counts as missed",
    )
    ev = evaluate(ds, ranking, FINITE)
    assert ev.per_query["AP"].tolist() == pytest.approx([1 / 3, 0.0])


def test_globally_ignored_images_are_dropped_from_a_run_before_counting(tmp_path):
    ds = replace(small(), global_ignored=np.array([3]))
    path = run(tmp_path, "qa Q0 g3 1 0.9 x\nqa Q0 g1 2 0.8 x\nqb Q0 g2 1 0.5 x\n")
    ranking, _ = read_ranking(path, ds)
    assert ranking.top_indices[0].tolist() == [1, -1]
    assert evaluate(ds, ranking, FINITE).per_query["P@1"][0] == 1.0


def test_crlf_lines_a_bom_and_blank_lines_are_accepted(tmp_path):
    path = tmp_path / "r.run"
    path.write_bytes(b"\xef\xbb\xbfqa Q0 g1 1 2.5 x\r\n\r\nqb Q0 g2 1 1e-3 x\r\n")
    ranking, _ = read_ranking(path, small())
    assert ranking.top_indices.tolist() == [[1], [2]]


def test_an_ambiguous_loose_name_is_an_error_never_a_guess(tmp_path):
    ds = replace(small(), gallery=("a/x", "b/x", "g2", "g3", "g4", "g5"))
    with pytest.raises(InputError, match=re.escape(
            "r.run, line 1: the document id x.jpg matches 2 names of the dataset (a/x, b/x); "
            "write the full name")):
        read_ranking(run(tmp_path, "qa Q0 x.jpg 1 0.5 t\n"), ds)
    # One level finer the name is unique: a/x.jpg strips to a/x.
    ranking, _ = read_ranking(run(tmp_path, "qa Q0 a/x.jpg 1 0.5 t\n"), ds)
    assert ranking.top_indices[0].tolist() == [0]


MALFORMED_RUNS = [
    ("qa Q0 g1 1 0.5\n",
     "r.run, line 1: expected 6 fields 'qid Q0 docid rank score tag', found 5"),
    ("qa Q0 g1 1 0.5 x\nqa Q0 g2 2 0.4 x extra\n",
     "r.run, line 2: expected 6 fields 'qid Q0 docid rank score tag', found 7"),
    ("qa Q0 g1 one 0.5 x\n", "r.run, line 1: the rank 'one' (4th field) is not an integer"),
    ("qa Q0 g1 1 high x\n", "r.run, line 1: the score 'high' (5th field) is not a number"),
    ("qa Q0 g1 1 nan x\n", "r.run, line 1: the score 'nan' (5th field) is not a finite number"),
    ("qx Q0 g1 1 0.5 x\nqa Q0 g1 1 0.5 x\nqy Q0 g1 1 0.5 x\nqx Q0 g2 2 0.4 x\n",
     "r.run: 2 query ids are not queries of s, e.g. qx (line 1), qy (line 3)"),
    ("qa Q0 g9 1 0.5 x\nqa Q0 h 2 0.4 x\nqa Q0 g9 3 0.3 x\n",
     "r.run: 2 document ids are not gallery images of s, e.g. g9 (line 1), h (line 2)"),
    ("qa Q0 g1 1 0.5 x\nqb Q0 g1 1 0.5 x\nqa Q0 g1.png 2 0.4 x\n",
     "r.run, line 3: query qa lists gallery image g1 a second time (first on line 1)"),
    ("\n\n", "r.run: no result line; a TREC run has one line 'qid Q0 docid rank score tag' "
             "per result"),
]


@pytest.mark.parametrize(("text", "message"), MALFORMED_RUNS)
def test_malformed_runs(tmp_path, text, message):
    with pytest.raises(InputError, match=re.escape(message)):
        read_ranking(run(tmp_path, text), small())


def test_missing_unreadable_and_wrong_kind_of_files(tmp_path):
    ds = small()
    with pytest.raises(InputError, match=re.escape(f"{tmp_path / 'none.run'}: no such file")):
        read_ranking(tmp_path / "none.run", ds)
    with pytest.raises(InputError, match="is a folder, not a ranking file"):
        read_ranking(tmp_path, ds)
    (tmp_path / "latin.run").write_bytes(b"qa Q0 g\xe9 1 0.5 x\n")
    with pytest.raises(InputError, match=re.escape("latin.run: not UTF-8 text (byte 7)")):
        read_ranking(tmp_path / "latin.run", ds)
    np.save(tmp_path / "bare.npy", np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(InputError, match=re.escape(
            "bare.npy: a .npy file holds one bare array; save an .npz with 'indices'")):
        read_ranking(tmp_path / "bare.npy", ds)
    (tmp_path / "broken.npz").write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(InputError, match=re.escape("broken.npz: not a readable .npz archive")):
        read_ranking(tmp_path / "broken.npz", ds)


# -- .npz result lists --------------------------------------------------------------------

def test_npz_row_numbers_with_scores_and_query_names(tmp_path):
    # Rows in the order qb, qa; -1 pads qb's shorter list.
    np.savez(tmp_path / "r.npz", indices=np.array([[2, -1, -1], [0, 1, 5]]),
             scores=np.array([[0.9, -1.0, -1.0], [0.8, 0.7, -0.2]], dtype=np.float32),
             query_names=np.array(["qb", "qa"]))
    assert sniff_ranking(tmp_path / "r.npz")
    ranking, notes = read_ranking(tmp_path / "r.npz", small())
    assert notes == ()
    assert ranking.top_indices.tolist() == [[0, 1, 5], [2, -1, -1]]
    assert ranking.top_scores[0].tolist() == pytest.approx([0.8, 0.7, -0.2])
    # qa after junk g0: g1 rank 0, g5 rank 1, g4 never retrieved: AP = (1 + 1) / 3.
    ev = evaluate(small(), ranking, FINITE)
    assert ev.per_query["AP"].tolist() == pytest.approx([2 / 3, 1.0])


def test_npz_names_as_str_or_bytes_any_suffix(tmp_path):
    for i, names in enumerate((np.array([["g1.jpg", "g4"], ["g2", ""]]),
                               np.array([[b"g1", b"g4"], [b"g2", b""]]))):
        path = tmp_path / f"r{i}.bin"  # recognised by content, not by suffix
        with path.open("wb") as f:
            np.savez(f, indices=names)
        ranking, _ = read_ranking(path, small())
        assert ranking.top_indices.tolist() == [[1, 4], [2, -1]]


def test_npz_rows_of_an_index_built_in_its_own_order(tmp_path):
    # A FAISS index whose rows are g5, g4, ..., g0: ids are rows of gallery_names.
    np.savez(tmp_path / "r.npz", indices=np.array([[4, 1, 0], [3, -1, -1]]),
             gallery_names=np.array([f"g{i}.png" for i in range(5, -1, -1)]))
    ranking, _ = read_ranking(tmp_path / "r.npz", small())
    assert ranking.top_indices.tolist() == [[1, 4, 5], [2, -1, -1]]


def test_npz_queries_without_rows_and_empty_rows_are_noted(tmp_path):
    np.savez(tmp_path / "a.npz", indices=np.array([[1, 4]]), query_names=np.array(["qa"]))
    _, notes = read_ranking(tmp_path / "a.npz", small())
    assert notes == ("a.npz: 1 of 2 queries have no result list, e.g. qb: nothing was "
                     "retrieved for them, so each of their positives counts as missed",)
    np.savez(tmp_path / "b.npz", indices=np.array([[1, 4], [-1, -1], [1, 2]]),
             query_names=np.array(["qa", "qb", "qz"]))
    ranking, notes = read_ranking(tmp_path / "b.npz", small())
    assert ranking.top_indices.tolist() == [[1, 4], [-1, -1]]
    assert notes == ("b.npz: result lists of 1 queries that s skipped are ignored, e.g. qz",
                     "b.npz: 1 of 2 queries have an empty result list, e.g. qb: nothing was "
                     "retrieved for them, so each of their positives counts as missed")


MALFORMED_NPZ = [
    ({"indices": np.array([[0, 9], [1, -3]])},
     "r.npz: 2 entries of 'indices' are outside the 6 gallery images of s (0..5, -1 pads), "
     "e.g. -3, 9; if they are rows of your own index, save its image names as "
     "'gallery_names'"),
    ({"indices": np.array([1, 2])},
     "r.npz: 'indices' must be a queries x K matrix, found shape (2,)"),
    ({"indices": np.array([[1], [2], [3]])},
     "r.npz: 'indices' has 3 rows but s has 2 queries; save 'query_names' to say which row "
     "is which query"),
    ({"indices": np.array([[1.0], [2.0]])},
     "r.npz: 'indices' must hold gallery row numbers (integers) or names, not float64"),
    ({"indices": np.array([["g1"], ["nope"]])},
     "r.npz: 1 names in 'indices' are not gallery images of s, e.g. nope"),
    ({"indices": np.array([[1, 1], [2, -1]])},
     "r.npz: query qa lists gallery image g1 more than once"),
    ({"indices": np.array([[1], [2]]), "scores": np.zeros((2, 2))},
     "r.npz: 'scores' has shape (2, 2) but 'indices' has shape (2, 1); they must match "
     "entry for entry"),
    ({"indices": np.array([[1], [2]]), "scores": np.array([["a"], ["b"]])},
     "r.npz: 'scores' must be numbers, not <U1"),
    ({"indices": np.array([[1], [2]]), "query_names": np.array(["qa"])},
     "r.npz: 1 'query_names' for 2 rows of 'indices'"),
    ({"indices": np.array([[1], [2]]), "query_names": np.array(["qa", "qx"])},
     "r.npz: 1 'query_names' are not queries of s, e.g. qx"),
    ({"indices": np.array([[1], [2]]), "query_names": np.array(["qa", "qa"])},
     "r.npz: 1 queries have more than one row in 'query_names', e.g. qa"),
    ({"indices": np.array([[1], [2]]), "query_names": np.array([1, 2])},
     "r.npz: 'query_names' must hold names (strings), not int64"),
    ({"indices": np.array([[0], [7]]), "gallery_names": np.array(["g1", "g2"])},
     "r.npz: 1 entries of 'indices' are not rows of 'gallery_names' (0..1, -1 pads), e.g. 7"),
    ({"indices": np.array([[0], [1]]), "gallery_names": np.array(["g1", "zz", "yy"])},
     "r.npz: 1 names in 'gallery_names' that 'indices' uses are not gallery images of s, "
     "e.g. zz"),
    ({"scores": np.zeros((2, 2))},
     "r.npz: holds scores; a ranking needs 'indices' (queries x K) and optionally 'scores', "
     "'query_names', 'gallery_names'"),
    ({"indices": np.array([[1], [2]]), "query_names": np.array(["qa", None], dtype=object)},
     "r.npz: 'query_names' holds Python objects (a pickle), which irviewer does not load; "
     "save plain number or string arrays"),
]


@pytest.mark.parametrize(("arrays", "message"), MALFORMED_NPZ)
def test_malformed_npz_rankings(tmp_path, arrays, message):
    np.savez(tmp_path / "r.npz", **arrays)
    with pytest.raises(InputError, match=re.escape(message)):
        read_ranking(tmp_path / "r.npz", small())


@pytest.mark.parametrize(("name", "content", "expected"), [
    ("r.run", b"q1 Q0 doc7 1 12.5 bm25\n", True),
    ("r.txt", b"\n1 0 doc7 0 -3 tag\n", True),
    ("r.run", b"q1 Q0 doc7 first 12.5 bm25\n", False),
    ("r.run", b"q1 Q0 doc7 1\n", False),
    ("r.csv", b"image,instance,role\n", False),
    ("r.run", b"\xff\xfe\x00garbage", False),
    ("x.results", b"s1.ref,s1.e1\ns1.ref.1,s1.e1.1\n", True),
])
def test_sniff_ranking(tmp_path, name, content, expected):
    (tmp_path / name).write_bytes(content)
    assert sniff_ranking(tmp_path / name) is expected


def test_sniff_npz_and_never_raises(tmp_path):
    np.savez(tmp_path / "a.npz", indices=np.zeros((1, 1), dtype=np.int64))
    np.savez(tmp_path / "b.npz", features=np.zeros((1, 1)))
    np.savez(tmp_path / "c.npz", indices=np.array([None], dtype=object))
    (tmp_path / "d.npz").write_bytes(b"PK\x03\x04broken")
    assert sniff_ranking(tmp_path / "a.npz")
    assert sniff_ranking(tmp_path / "c.npz")  # only the key is looked at; read refuses it
    assert not sniff_ranking(tmp_path / "b.npz")
    assert not sniff_ranking(tmp_path / "d.npz")
    assert not sniff_ranking(tmp_path / "missing.run")
    assert not sniff_ranking(tmp_path)
