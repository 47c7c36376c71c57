"""Oxford5k/Paris6k gt_files: the reader, the benchmark's conventions, a hand-checked mAP."""

from __future__ import annotations

import re

import numpy as np
import pytest

from irviewer.cli import main
from irviewer.core.descriptors import AlignedDescriptors, normalise_rows
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import rank
from irviewer.formats.base import ReadOptions
from irviewer.formats.oxford import read_oxford
from irviewer.formats.registry import detect

NAMES = [f"tower_{i:06d}" for i in range(8)]


def write_gt(folder, files=None):
    folder.mkdir(exist_ok=True)
    default = {
        "tower_1_query.txt": "oxc1_tower_000000 10.5 20 300.25 400\n",
        "tower_1_good.txt": "tower_000000\ntower_000002\ntower_000002\n",
        "tower_1_ok.txt": "tower_000005\n",
        "tower_1_junk.txt": "tower_000001\n",
        "bridge_1_query.txt": "tower_000004 0 0 5 5\n",  # Paris6k style: no oxc1_ prefix
        "bridge_1_good.txt": "tower_000004\ntower_000007\n",
        "bridge_1_ok.txt": "",
        "bridge_1_junk.txt": "",
    }
    for name, text in {**default, **(files or {})}.items():
        if text is None:
            (folder / name).unlink(missing_ok=True)
        else:
            (folder / name).write_text(text)
    return folder


def test_reads_queries_boxes_and_dedups_with_a_note(tmp_path):
    gt = write_gt(tmp_path / "gt")
    ds = read_oxford(gt, ReadOptions(gallery_names=tuple(NAMES)))
    assert [q.name for q in ds.queries] == ["bridge_1", "tower_1"]
    tower = ds.queries[1]
    assert tower.image == "tower_000000" and tower.self_index == 0
    assert tower.box == (10.5, 20.0, 300.25, 400.0)
    assert tower.group("good").tolist() == [0, 2] and tower.group("junk").tolist() == [1]
    assert ds.queries[0].image == "tower_000004"
    assert ds.notes == ("tower_1_good.txt: 1 repeated line(s) counted once (tower_000002)",)
    assert ds.protocols == ("oxford",) and detect(gt).name == "oxford"


def test_gallery_from_an_image_folder(tmp_path):
    gt = write_gt(tmp_path / "gt")
    images = tmp_path / "jpg"
    images.mkdir()
    for n in reversed(NAMES):
        (images / f"{n}.jpg").write_bytes(b"")
    ds = read_oxford(gt, ReadOptions(images=images))
    assert ds.gallery == tuple(NAMES)  # sorted
    assert ds.image_paths["tower_000003"] == images / "tower_000003.jpg"


def test_query_id_rows_are_not_gallery_images(tmp_path):
    gt = write_gt(tmp_path / "gt")
    ds = read_oxford(gt, ReadOptions(gallery_names=(*NAMES, "tower_1", "bridge_1")))
    assert ds.gallery == tuple(NAMES)


def test_hand_checked_trapezoid_map_with_the_query_kept(tmp_path):
    ds = read_oxford(write_gt(tmp_path / "gt"), ReadOptions(gallery_names=tuple(NAMES)))
    angles = np.linspace(0.0, 3.0, 8)  # every query ranks the gallery in index order
    gallery = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    r = rank(AlignedDescriptors(normalise_rows(np.array([[1.0, 0], [1.0, 0]])), gallery,
                                None, 2), ds, k=8)
    ev = evaluate(ds, r, get_protocol("oxford"))
    # tower_1: positives 0, 2, 5 (good + ok), junk 1 removed -> ranks 0, 1, 4:
    # (1+1)/2/3 + (1/1 + 2/2)/2/3 + (2/4 + 3/5)/2/3
    assert ev.per_query["AP"][1] == pytest.approx(1 / 3 + 1 / 3 + (2 / 4 + 3 / 5) / 6)
    # bridge_1: positives 4, 7 -> ranks 4, 7: (0/4 + 1/5)/2/2 + (1/7 + 2/8)/2/2
    assert ev.per_query["AP"][0] == pytest.approx((1 / 5) / 4 + (1 / 7 + 2 / 8) / 4)
    removed = evaluate(ds, r, get_protocol("oxford").override(self_match="remove"))
    # tower_1 without its own image: positives 2, 5 at ranks 0, 3 of 2
    assert removed.per_query["AP"][1] == pytest.approx(0.5 + (1 / 3 + 2 / 4) / 4)


def test_cli_takes_the_gallery_from_row_names(tmp_path, capsys):
    gt = write_gt(tmp_path / "gt")
    rows = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    data = np.hstack([np.full((8, 1), 4, np.int32).view(np.float32), rows]).astype("<f4")
    data.tofile(tmp_path / "d.fvecs")
    (tmp_path / "names.txt").write_text("\n".join(NAMES))
    assert main(["eval", str(gt), "-d", str(tmp_path / "d.fvecs"), "--row-names",
                 str(tmp_path / "names.txt")]) == 0
    out = capsys.readouterr().out
    assert "(oxford): 2 queries, 8 gallery images" in out and "trapezoid AP" in out


BAD = [
    ({"tower_1_junk.txt": None},
     "tower_1_junk.txt is missing: every query needs _query, _good, _ok and _junk files"),
    ({"tower_1_query.txt": "oxc1_tower_000000 1 2 3\n"},
     "tower_1_query.txt, line 1: expected 'oxc1_<image> x1 y1 x2 y2', found 4 fields"),
    ({"tower_1_query.txt": "oxc1_tower_000000 1 2 3 x\n"},
     "tower_1_query.txt, line 1: the box 1 2 3 x is not four numbers"),
    ({"tower_1_query.txt": "oxc1_tower_000000 50 2 10 9\n"},
     "tower_1_query.txt, line 1: the box 50 2 10 9 is not a region (need 0 <= x1 < x2 and "
     "0 <= y1 < y2)"),
    ({"tower_1_query.txt": "a 1 2 3 4\nb 1 2 3 4\n"},
     "tower_1_query.txt: expected one line 'oxc1_<image> x1 y1 x2 y2', found 2"),
    ({"tower_1_ok.txt": "tower_000099\n"},
     "gt: 1 images named in the ground truth are not in the gallery names, e.g. tower_000099"),
]


@pytest.mark.parametrize(("files", "message"), BAD)
def test_malformed_gt_files_give_one_sentence(tmp_path, files, message):
    gt = write_gt(tmp_path / "gt", files)
    with pytest.raises(InputError, match=re.escape(message)):
        read_oxford(gt, ReadOptions(gallery_names=tuple(NAMES)))


def test_no_gallery_and_no_queries(tmp_path):
    gt = write_gt(tmp_path / "gt")
    with pytest.raises(InputError, match=re.escape(
            "gt: the Oxford/Paris ground truth does not list the gallery; give --images DIR, "
            "a descriptor file with names, or --row-names FILE")):
        read_oxford(gt)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=re.escape("no *_query.txt file")):
        read_oxford(tmp_path / "empty", ReadOptions(gallery_names=tuple(NAMES)))
    with pytest.raises(InputError, match="the image folder does not exist"):
        read_oxford(gt, ReadOptions(images=tmp_path / "nope"))
