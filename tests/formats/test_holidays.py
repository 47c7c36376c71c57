"""INRIA Holidays (names GGGGNN.jpg): name lists and folders, conventions, a hand-checked
trapezoid AP, and one sentence per malformed input."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from irviewer.core.descriptors import AlignedDescriptors, normalise_rows
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import rank
from irviewer.formats.base import ReadOptions
from irviewer.formats.holidays import (
    READER,
    holidays_group,
    list_entry_name,
    read_group_list,
    read_holidays,
    sniff_holidays,
)
from irviewer.formats.registry import detect

# Group 1000: query + 2; group 1001: query + 1; group 1002: no query (stays, noted).
NAMES = ["100000.jpg", "100001.jpg", "100002.jpg", "100100.jpg", "100101.jpg", "100201.jpg"]


def touch(folder: Path, names: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        (folder / n).write_bytes(b"")


def write(tmp_path: Path, text: str, name: str = "holidays_images.dat") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def scored(ds, scores, protocol="holidays"):
    """Evaluate with query q scoring gallery image i at ``scores[q][i]`` (one-hot gallery)."""
    queries = normalise_rows(np.asarray(scores, dtype=np.float64))
    aligned = AlignedDescriptors(queries, np.eye(ds.n_gallery, dtype=np.float32), None,
                                 ds.n_gallery)
    return evaluate(ds, rank(aligned, ds, k=ds.n_gallery), get_protocol(protocol))


@pytest.mark.parametrize(("name", "group"), [
    ("100000", "1000"), ("149902", "1499"), ("10000", None), ("1000001", None),
    ("beach", None), ("10000a", None),
])
def test_holidays_group(name, group):
    assert holidays_group(name) == group


@pytest.mark.parametrize(("line", "name"), [
    ("100000.jpg", "100000"), ("  100000.JPG \r", "100000"), ("jpg/100000.jpg", "100000"),
    ("100000", "100000"), ("100000.jpg 1", "100000.jpg 1"), ("100000.txt", "100000.txt"),
])
def test_list_entry_name(line, name):
    assert list_entry_name(line) == name


def test_list_conventions(tmp_path):
    # Unsorted, with a blank line and no newline at the end.
    path = write(tmp_path, "100100.jpg\n100000.jpg\n\n100002.jpg\n100001.jpg\n100101.jpg\n"
                           "100201.jpg")
    ds = read_holidays(path)
    assert ds.gallery == ("100000", "100001", "100002", "100100", "100101", "100201")
    assert [q.name for q in ds.queries] == ["100000", "100100"]
    first, second = ds.queries
    assert first.group("positive").tolist() == [0, 1, 2] and first.self_index == 0
    assert second.group("positive").tolist() == [3, 4] and second.self_index == 3
    assert first.meta == {"label": "1000"} and first.image == "100000"
    assert ds.gallery_labels.tolist() == ["1000", "1000", "1000", "1001", "1001", "1002"]
    assert ds.protocols == ("holidays",) and ds.groups == ("positive",)
    assert ds.notes == ("1 group has no query image (NN = 00), e.g. 1002; its images stay in "
                        "the database as negatives",)
    assert ds.image_paths == {} and len(ds.global_ignored) == 0


def test_folder_and_images_option(tmp_path):
    touch(tmp_path / "jpg", [*NAMES, "notes.txt"])
    ds = read_holidays(tmp_path / "jpg")
    assert ds.n_gallery == 6 and ds.image_paths["100001"] == tmp_path / "jpg" / "100001.jpg"
    path = write(tmp_path, "\n".join(NAMES[:3]) + "\n100099.jpg\n")
    ds = read_holidays(path, ReadOptions(images=tmp_path / "jpg"))
    assert ds.image_paths["100002"] == tmp_path / "jpg" / "100002.jpg"
    assert ds.notes == (f"1 of 4 images is not in {tmp_path / 'jpg'}, e.g. 100099; tiles "
                        "will show names only",)
    with pytest.raises(InputError, match="--images DIR is for a Holidays name list"):
        read_holidays(tmp_path / "jpg", ReadOptions(images=tmp_path))  # refused, not ignored


def test_repeated_names_and_lone_queries_are_noted(tmp_path):
    path = write(tmp_path, "100000.jpg\n100001.jpg\n100000.jpg\n100100.jpg\n", "list.txt")
    ds = read_holidays(path)
    assert ds.gallery == ("100000", "100001", "100100")
    assert ds.notes == (
        "list.txt: 1 name is listed twice, e.g. 100000 (lines 1 and 3); each is kept once",
        "1 query is alone in its group, e.g. 100100; the evaluation reports it as skipped")
    ev = scored(ds, [[1.0, 0.5, 0.2], [0.1, 0.2, 1.0]])
    assert ev.summary["n_evaluated"] == 1 and ev.skipped()[0][0] == "100100"


def test_hand_checked_trapezoid_ap(tmp_path):
    ds = read_holidays(write(tmp_path, "\n".join(NAMES)))
    scores = [
        # 100000: itself (index 0) removed; then 2 (positive), 5, 3, 1 (positive), 4.
        # Positives at 0-based ranks 0 and 3 of 2: trapezoids (1 + 1)/2 and (1/3 + 2/4)/2.
        [1.0, 0.2, 0.9, 0.5, -0.4, 0.6],
        # 100100: itself (index 3) removed; 5, 2, 1, 0, then 4 (positive, negative cosine)
        # at rank 4: the trapezoid (0/4 + 1/5)/2.
        [0.1, 0.2, 0.3, 1.0, -0.9, 0.4],
    ]
    ev = scored(ds, scores)
    first = ((1 + 1) / 2 + (1 / 3 + 2 / 4) / 2) / 2
    second = (0 / 4 + 1 / 5) / 2
    assert ev.per_query["AP"] == pytest.approx([first, second])  # 17/24 and 1/10
    assert ev.summary["mAP"] == pytest.approx((17 / 24 + 1 / 10) / 2)
    assert ev.summary["mP@1"] == pytest.approx(0.5)
    # The finite sum on the same ranks differs, so the rule really is the trapezoid:
    finite = ev.protocol.override(ap="finite")
    assert evaluate(ds, ev.ranking, finite).per_query["AP"] == pytest.approx(
        [(1 + 2 / 4) / 2, 1 / 5])


def test_sniff_and_registry(tmp_path):
    path = write(tmp_path, "\n".join(NAMES))
    assert sniff_holidays(path) and detect(path).name == "holidays"
    assert READER.name == "holidays" and READER.priority == 8
    touch(tmp_path / "jpg", NAMES)
    assert sniff_holidays(tmp_path / "jpg") and detect(tmp_path / "jpg").name == "holidays"
    assert not sniff_holidays(write(tmp_path, "100000.jpg\nbeach.jpg\n", "other.txt"))
    assert not sniff_holidays(write(tmp_path, "", "empty.txt"))
    assert not sniff_holidays(write(tmp_path, "\n".join(NAMES), "names.csv"))
    (tmp_path / "binary.dat").write_bytes(b"\xff\xfe\x00")
    assert not sniff_holidays(tmp_path / "binary.dat")
    touch(tmp_path / "other", ["beach.jpg"])
    assert not sniff_holidays(tmp_path / "other")
    assert not sniff_holidays(tmp_path / "nowhere.dat")


def test_sniff_reads_only_the_head_of_a_long_list(tmp_path):
    names = [f"{g:04d}{n:02d}.jpg" for g in range(1000, 9000) for n in range(2)]
    path = write(tmp_path, "\n".join(names) + "\nnot a holidays name\n")
    assert path.stat().st_size > 65_536
    assert sniff_holidays(path)  # the bad last line is past the sniffed head
    with pytest.raises(InputError, match="1 name is not a Holidays name"):
        read_holidays(path)


def test_inria_holidays_images_dat(shared_samples):
    sample = shared_samples("holidays-imagelist", "holidays_images.dat")
    ds = read_holidays(sample)
    assert sniff_holidays(sample)
    assert (ds.n_gallery, ds.n_queries, ds.notes) == (1491, 500, ())
    sizes = [len(q.group("positive")) for q in ds.queries]
    assert (min(sizes), max(sizes), sizes.count(2)) == (2, 13, 267)
    assert ds.gallery[-1] == "149902"  # the last line has no newline


BAD = [
    ("100000.jpg\nbeach.jpg\n1000001.jpg\n",
     "list.txt: 2 names are not Holidays names GGGGNN (4-digit group, 2-digit number), "
     "e.g. beach, 1000001; the first is on line 2"),
    ("100001.jpg\n100102.jpg\n",
     "list.txt: no query image (a name ending in 00) among 2 images, e.g. 100001, 100102"),
    ("", "list.txt lists no image; a Holidays list has one image name per line, "
         "e.g. 100000.jpg"),
    ("\n  \n", "list.txt lists no image"),
    ("# INRIA Holidays\n100000.jpg\n",
     "list.txt: 1 name is not a Holidays name GGGGNN (4-digit group, 2-digit number), "
     "e.g. # INRIA Holidays; the first is on line 1"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_malformed_lists_give_one_sentence(tmp_path, text, message):
    with pytest.raises(InputError, match=re.escape(message)):
        read_holidays(write(tmp_path, text, "list.txt"))


def test_malformed_files_and_folders(tmp_path):
    path = tmp_path / "list.txt"
    path.write_bytes(b"100000.jpg\n\xff\n")
    with pytest.raises(InputError, match=re.escape("list.txt: not UTF-8 text (byte 11)")):
        read_holidays(path)
    with pytest.raises(InputError, match=re.escape(f"{tmp_path / 'nope.dat'}: no such file")):
        read_holidays(tmp_path / "nope.dat")
    touch(tmp_path / "empty", ["readme.txt"])
    with pytest.raises(InputError, match=re.escape(
            f"{tmp_path / 'empty'}: holds no image (.jpg, .jpeg, .png, .ppm, .pgm, .bmp, "
            ".tif, .tiff, .webp)")):
        read_holidays(tmp_path / "empty")
    touch(tmp_path / "jpg", ["100000.jpg", "100000.jpeg", "100001.jpg"])
    with pytest.raises(InputError, match=re.escape(
            "jpg: 1 image name appears twice, e.g. 100000.jpeg and 100000.jpg; keep one file "
            "per name")):
        read_holidays(tmp_path / "jpg")
    touch(tmp_path / "odd", ["100000.jpg", "IMG_2041.jpg"])
    with pytest.raises(InputError, match=re.escape(
            "odd: 1 name is not a Holidays name GGGGNN (4-digit group, 2-digit number), "
            "e.g. IMG_2041")):
        read_holidays(tmp_path / "odd")


def test_a_name_list_keeps_line_numbers(tmp_path):
    entries, notes = read_group_list(write(tmp_path, "\n100000.jpg\n\n100001.jpg"))
    assert entries == [(2, "100000", None), (4, "100001", None)] and notes == []


def test_notes_agree_with_their_counts(tmp_path):
    ds = read_holidays(write(tmp_path, "100000.jpg\n100001.jpg\n100101.jpg\n100201.jpg\n"
                                       "100300.jpg\n100400.jpg\n"))
    assert ds.notes == (
        "2 groups have no query image (NN = 00), e.g. 1001, 1002; their images stay in the "
        "database as negatives",
        "2 queries are alone in their group, e.g. 100300, 100400; the evaluation reports them "
        "as skipped")
