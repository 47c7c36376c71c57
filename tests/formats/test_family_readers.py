"""Re-identification, INRIA Holidays and instance sets named by file: reading, conventions,
hand-checked metrics and one sentence per malformed input."""

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
from irviewer.formats.holidays import read_holidays
from irviewer.formats.instance_names import read_instance_names
from irviewer.formats.registry import detect
from irviewer.formats.reid import read_reid


def touch(folder, names):
    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        (folder / n).write_bytes(b"")


def lined_up(ds, n_queries):
    """Rank every query's gallery in gallery order (scores fall with the index)."""
    angles = np.linspace(0.0, 3.0, ds.n_gallery)
    gallery = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    queries = normalise_rows(np.tile([1.0, 0.0], (n_queries, 1)))
    return rank(AlignedDescriptors(queries, gallery, None, 2), ds, k=ds.n_gallery)


# -- re-identification ---------------------------------------------------------------------

GALLERY = ["-1_c1s1_000000_00.jpg", "0000_c2s1_000001_00.jpg", "0002_c1s1_000100_01.jpg",
           "0002_c3s1_000200_01.jpg", "0005_c2s1_000300_01.jpg", "0002_c2s1_000400_01.jpg"]
QUERY = ["0002_c1s1_000050_00.jpg", "-1_c2s1_000001_00.jpg"]


def market(tmp_path, name="market1501"):
    root = tmp_path / name
    touch(root / "bounding_box_test", GALLERY)
    touch(root / "query", QUERY)
    return root


def test_reid_conventions(tmp_path):
    ds = read_reid(market(tmp_path))
    # Gallery sorted by file name: -1 (junk), 0000, 0002 c1, 0002 c2, 0002 c3, 0005.
    assert ds.gallery[0].startswith("-1_") and ds.global_ignored.tolist() == [0]
    q = ds.queries[0]
    assert q.meta == {"label": 2, "camera": 1}
    assert q.group("same_camera").tolist() == [2]  # 0002_c1: same id, same camera
    assert q.group("positive").tolist() == [3, 4]
    assert ds.skipped_queries[0].reason == "person id -1 (junk) cannot be a query"
    assert ds.protocols == ("market1501",) and detect(tmp_path / "market1501").name == "reid"
    assert read_reid(market(tmp_path, "CUHK03-np")).protocols == ("cuhk03",)


def test_reid_hand_checked_map_cmc_and_minp(tmp_path):
    ds = read_reid(market(tmp_path))
    ev = evaluate(ds, lined_up(ds, 1), get_protocol("market1501"))
    # Ranked: [junk removed], 0000 (distractor, negative), 0002_c1 (same camera, removed),
    # 0002_c2, 0002_c3, 0005 -> positives at ranks 1, 2 of 2 after removals.
    assert ev.per_query["AP"][0] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert ev.per_query["CMC@1"][0] == 0 and ev.per_query["CMC@5"][0] == 1
    assert ev.per_query["INP"][0] == pytest.approx(2 / 3)


@pytest.mark.parametrize(("setup", "message"), [
    (lambda r: touch(r / "query", ["0001_c1.jpg"]),
     "market: the folder bounding_box_test/ is missing"),
    (lambda r: (touch(r / "query", ["0001_c1.jpg"]), touch(r / "bounding_box_test",
                                                            ["person7.jpg", "x.jpg"])),
     "bounding_box_test/: 2 file names do not carry a person id and camera (PPPP_cC...), "
     "e.g. person7.jpg, x.jpg"),
    (lambda r: (touch(r / "query", []), touch(r / "bounding_box_test", ["0001_c1.jpg"])),
     "query: holds no image"),
])
def test_reid_malformed(tmp_path, setup, message):
    root = tmp_path / "market"
    root.mkdir()
    setup(root)
    with pytest.raises(InputError, match=re.escape(message)):
        read_reid(root)


# -- INRIA Holidays ------------------------------------------------------------------------

def test_holidays_list_conventions_and_trapezoid_ap(tmp_path):
    path = tmp_path / "holidays_images.dat"
    path.write_text("100000.jpg\n100001.jpg\n100002.jpg\n100100.jpg\n100101.jpg\n100201.jpg")
    ds = read_holidays(path)
    assert ds.gallery == ("100000", "100001", "100002", "100100", "100101", "100201")
    assert [q.name for q in ds.queries] == ["100000", "100100"]
    assert ds.queries[0].group("positive").tolist() == [0, 1, 2]
    assert ds.queries[0].self_index == 0
    assert ds.notes[0].startswith("1 groups have no query image (NN = 00), e.g. 1002")
    assert detect(path).name == "holidays"
    ev = evaluate(ds, lined_up(ds, 2), get_protocol("holidays"))
    # 1000: itself removed; 100001, 100002 at ranks 0, 1 -> AP 1.
    assert ev.per_query["AP"][0] == pytest.approx(1.0)
    # 1001: itself (index 3) removed; 100101 at rank 3 of the remaining 5: (0/3 + 1/4)/2.
    assert ev.per_query["AP"][1] == pytest.approx((1 / 4) / 2)
    assert ev.summary["mP@1"] == pytest.approx(0.5)


def test_holidays_folder_and_bad_names(tmp_path):
    touch(tmp_path / "jpg", ["120000.jpg", "120001.jpg"])
    assert read_holidays(tmp_path / "jpg").image_paths["120001"].name == "120001.jpg"
    path = tmp_path / "list.txt"
    path.write_text("100000.jpg\nbeach.jpg\n1000001.jpg\n")
    with pytest.raises(InputError, match=re.escape(
            "list.txt: 2 names are not Holidays names GGGGNN (4-digit group, 2-digit number), "
            "e.g. beach, 1000001")):
        read_holidays(path)
    path.write_text("100001.jpg\n")
    with pytest.raises(InputError, match=re.escape("list.txt: no query image")):
        read_holidays(path)


# -- instance sets named by file -----------------------------------------------------------

def clicide(tmp_path):
    root = tmp_path / "clicide"
    touch(root / "Train", ["monalisa-1.jpg", "monalisa-2.jpg", "wave-1.jpg", "blank-1.jpg"])
    touch(root / "Test", ["monalisa-q.jpg", "wave-q.jpg", "ghost-q.jpg"])
    return root


def test_instance_names_rules_and_conventions(tmp_path):
    root = clicide(tmp_path)
    ds = read_instance_names(root)
    assert ds.gallery == ("Train/blank-1", "Train/monalisa-1", "Train/monalisa-2",
                          "Train/wave-1")
    assert [q.name for q in ds.queries] == ["Test/monalisa-q", "Test/wave-q"]
    assert ds.skipped_queries[0].name == "Test/ghost-q"
    assert ds.queries[0].group("positive").tolist() == [1, 2]
    assert detect(root).name == "instances"
    ev = evaluate(ds, lined_up(ds, 2), get_protocol("instance"))
    # monalisa-q: positives at gallery ranks 1, 2 -> (1/2 + 2/3)/2; wave-q: rank 3 -> 1/4.
    assert ev.per_query["AP"].tolist() == pytest.approx([(1 / 2 + 2 / 3) / 2, 1 / 4])
    assert ev.summary["mP@1"] == 0.0
    ignored = read_instance_names(root, ReadOptions(ignore_labels=("blank",)))
    assert ignored.global_ignored.tolist() == [0]
    regex = read_instance_names(root, ReadOptions(instance_rule=r"^([a-z]+)"))
    assert regex.queries[0].meta["label"] == "monalisa"


@pytest.mark.parametrize(("rule", "message"), [
    ("underscore2", "clicide: the instance rule 'underscore2' gives no label for 7 file names"),
    ("(", "instance rule '(' is not a valid regular expression"),
])
def test_instance_names_bad_rules(tmp_path, rule, message):
    with pytest.raises(InputError, match=re.escape(message)):
        read_instance_names(clicide(tmp_path), ReadOptions(instance_rule=rule))


def test_instance_names_same_file_name_twice(tmp_path):
    root = clicide(tmp_path)
    touch(root / "Test", ["wave-1.jpg"])
    with pytest.raises(InputError, match=re.escape(
            "clicide: 1 file names appear twice, e.g. Train/wave-1 and Test/wave-1")):
        read_instance_names(root)
