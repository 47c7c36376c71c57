"""The Google Landmarks v2 retrieval readers: the solution (``id,images,Usage``) and a
submission (``id,images``), detected like every reader, read as delf's dataset_file_io.py
reads them, and refused in one sentence where delf would misread them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irviewer.cli import main
from irviewer.core.errors import InputError
from irviewer.core.ranking.listed import ListedRanking, outside_index
from irviewer.formats.base import ReadOptions
from irviewer.formats.gldv2 import read_gldv2_submission, sniff_gldv2
from irviewer.formats.rankings import read_ranking, sniff_ranking
from irviewer.formats.registry import detect, read_dataset

SOLUTION = ("id,images,Usage\n"
            "t1,i1 i2,Public\n"
            "t2,i3,Private\n"
            "t3,None,Ignored\n"
            "t4,i4 i5 i6,Public\n")


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_solution_is_detected_and_read(tmp_path):
    path = write(tmp_path, "retrieval_solution_v2.1.csv", SOLUTION)
    assert sniff_gldv2(path) and detect(path).name == "gldv2"
    ds = read_dataset(path)
    assert [q.name for q in ds.queries] == ["t1", "t2", "t4"]
    assert ds.gallery == ("i1", "i2", "i3", "i4", "i5", "i6")
    assert ds.protocols == ("gldv2-public", "gldv2-private")
    assert ds.queries[0].group("public").tolist() == [0, 1]
    assert ds.queries[1].group("private").tolist() == [2] and not len(
        ds.queries[1].group("public"))
    assert [s.name for s in ds.skipped_queries] == ["t3"]
    assert any("Ignored is left out" in n for n in ds.notes)
    assert any("the gallery is the 6 index images the solution names" in n for n in ds.notes)


def test_the_gallery_comes_from_the_descriptor_names(tmp_path):
    path = write(tmp_path, "sol.csv", SOLUTION)
    names = tuple(f"i{j}.jpg" for j in range(10))
    ds = read_dataset(path, options=ReadOptions(gallery_names=names))
    assert ds.gallery == names and ds.queries[2].group("public").tolist() == [4, 5, 6]
    with pytest.raises(InputError) as e:
        read_dataset(path, options=ReadOptions(gallery_names=names[:4]))
    assert str(e.value) == ("sol.csv: 3 index images of the solution are not among the 4 "
                            "gallery images (the descriptor file's or the row-name list's), "
                            "e.g. i4, i5, i6")


def test_a_solution_with_only_private_images_has_one_protocol(tmp_path):
    ds = read_dataset(write(tmp_path, "s.csv", "id,images,Usage\nt,a b,Private\n"))
    assert ds.protocols == ("gldv2-private",)


@pytest.mark.parametrize(("text", "message"), [
    ("id,images\nt1,a,Public\n",
     "s.csv: the first line must be the header id,images,Usage, not 'id,images'; delf's "
     "reader skips the first line whatever it holds"),
    ("id,images,Usage\nt1,a\n", "s.csv, line 2: expected id,images,Usage, found 2 fields"),
    ("id,images,Usage\nt1,a,Public\nt1,b,Private\n",
     "s.csv, line 3: test image t1 is repeated (first on line 2); delf would keep the last "
     "row only"),
    ("id,images,Usage\nt1,a,Secret\n",
     "s.csv, line 2: test image t1 has the Usage 'Secret'; it must be Public, Private or "
     "Ignored"),
    ("id,images,Usage\nt1,,Public\n",
     "s.csv, line 2: test image t1 is Public but lists no index image; delf would count one "
     "empty id as its only positive"),
    ("id,images,Usage\nt1,a  b,Public\n",
     "s.csv, line 2: the index images of t1 are not separated by single spaces (an empty "
     "id); delf would count it as a positive"),
    ("id,images,Usage\nt1,a b a,Public\n",
     "s.csv, line 2: test image t1 lists index image a twice; delf would count it twice in "
     "AP's denominator"),
    ("id,images,Usage\nt1,None,Ignored\n",
     "s.csv: no test image is Public or Private, so there is nothing to score"),
    ("id,images,Usage\n,a,Public\n", "s.csv, line 2: the test image id is empty"),
])
def test_a_bad_solution_is_refused_in_one_sentence(tmp_path, text, message):
    with pytest.raises(InputError) as e:
        read_dataset(write(tmp_path, "s.csv", text), format="gldv2")
    assert str(e.value) == message


def test_a_submission_keeps_repeats_and_unknown_ids_at_their_place(tmp_path):
    ds = read_dataset(write(tmp_path, "sol.csv", SOLUTION))
    sub = write(tmp_path, "sub.csv", "id,images\n\nt1,i2 x i2 i1 \nt2,\nt3,i1\n")
    assert sniff_ranking(sub)
    ranking, notes = read_ranking(sub, ds)
    assert isinstance(ranking, ListedRanking)
    assert ranking.outside[int(outside_index(int(ranking.top_indices[0, 1])))] == "x"
    assert ranking.top_indices[0].tolist() == [1, -2, -3, 0]  # i2, x, i2 again, i1
    assert ranking.rank_items(0, np.array([0, 1])).tolist() == [3, 0]
    assert (ranking.top_indices[1] == -1).all()  # t2 predicted nothing
    assert notes == (
        "sub.csv: 2 test images have no prediction and count 0, as in delf, e.g. t2, t4",
        "sub.csv: 1 repeated prediction keeps its place and scores nothing, as delf skips "
        "them",
        "sub.csv: 1 predicted id is not a gallery image and counts as wrong at its place, "
        "e.g. x")


@pytest.mark.parametrize(("text", "message"), [
    ("t1,i1\n", "sub.csv: the first line must be the header id,images, not 't1,i1'; delf's "
                "reader skips the first line whatever it holds"),
    ("id,images\nt1,i1\nt1,i2\n",
     "sub.csv, line 3: test image t1 is repeated (first on line 2), which delf refuses"),
    ("id,images\nt9,i1\n", "sub.csv, line 2: test image 't9' is not in the solution, which "
                           "delf refuses (\"test_id is unrecognized\")"),
    ("id,images\nt1\n", "sub.csv, line 2: expected id,images, found 1 field"),
])
def test_a_bad_submission_is_refused_in_one_sentence(tmp_path, text, message):
    ds = read_dataset(write(tmp_path, "sol.csv", SOLUTION))
    with pytest.raises(InputError) as e:
        read_gldv2_submission(write(tmp_path, "sub.csv", text), ds)
    assert str(e.value) == message


def test_a_submission_scores_a_gldv2_solution_only(tmp_path):
    holidays = tmp_path / "gt.csv"
    holidays.write_text("query_id,reference_id\nQ1,R1\n", encoding="utf-8")
    ds = read_dataset(holidays)
    with pytest.raises(InputError, match=r"scores a GLDv2 retrieval solution, not gt\.csv"):
        read_gldv2_submission(write(tmp_path, "sub.csv", "id,images\nQ1,R1\n"), ds)


def test_eval_prints_both_usages_and_refuses_in_one_line(tmp_path, capsys):
    sol = write(tmp_path, "sol.csv", SOLUTION)
    sub = write(tmp_path, "sub.csv", "id,images\nt1,i2 x i2 i1\nt2,i9 i3\n")
    assert main(["eval", str(sol), "--ranking", str(sub)]) == 0
    out = capsys.readouterr().out
    assert "protocol gldv2-public" in out and "protocol gldv2-private" in out
    assert "mean_position         51.00" in out
    assert "skipped (a test image of another Usage: scored under gldv2-private)" in out
    bad = write(tmp_path, "bad.csv", "id,images\nt1,i1\nt1,i2\n")
    assert main(["eval", str(sol), "--ranking", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["irviewer: error: bad.csv, line 3: test image t1 is repeated (first on line 2), "
                   "which delf refuses"]
