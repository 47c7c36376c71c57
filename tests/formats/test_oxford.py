"""Oxford5k/Paris6k gt_files: the reader, the benchmark's conventions, a hand-checked mAP."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from irviewer.cli import main
from irviewer.core.descriptors import AlignedDescriptors, normalise_rows
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import rank
from irviewer.formats.base import ReadOptions
from irviewer.formats.oxford import read_oxford, sniff_oxford
from irviewer.formats.registry import detect
from tests.core import reference

NAMES = [f"tower_{i:06d}" for i in range(8)]


def write_gt(folder: Path, files: dict[str, str | None] | None = None) -> Path:
    """Write a two-query gt_files folder (Oxford style and Paris style); ``files`` replaces
    (text) or deletes (None) single files."""
    folder.mkdir(exist_ok=True)
    default: dict[str, str | None] = {
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


def in_index_order(n_queries: int) -> AlignedDescriptors:
    """Descriptors under which every query ranks the gallery in index order (the score falls
    with the index, from 1 to cos 3 < 0: negative scores included)."""
    angles = np.linspace(0.0, 3.0, len(NAMES))
    gallery = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    queries = normalise_rows(np.tile([1.0, 0.0], (n_queries, 1)))
    return AlignedDescriptors(queries=queries, gallery=gallery, gallery_rows=None, dim=2)


def test_reads_queries_boxes_groups_and_dedups_with_a_note(tmp_path):
    gt = write_gt(tmp_path / "gt")
    ds = read_oxford(gt, ReadOptions(gallery_names=tuple(NAMES)))
    assert ds.format == "oxford" and ds.groups == ("good", "ok", "junk")
    assert [q.name for q in ds.queries] == ["bridge_1", "tower_1"]
    tower = ds.queries[1]
    assert tower.image == "tower_000000" and tower.self_index == 0  # oxc1_ dropped
    assert tower.box == (10.5, 20.0, 300.25, 400.0)
    assert tower.group("good").tolist() == [0, 2] and tower.group("ok").tolist() == [5]
    assert tower.group("junk").tolist() == [1] and tower.meta["landmark"] == "tower"
    bridge = ds.queries[0]
    assert bridge.image == "tower_000004" and bridge.self_index == 4  # Paris: no prefix
    assert bridge.group("ok").tolist() == [] and bridge.box == (0.0, 0.0, 5.0, 5.0)
    assert ds.notes == ("tower_1_good.txt: 1 name listed more than once, counted once "
                        "(tower_000002)",)
    assert ds.protocols == ("oxford",) and get_protocol("oxford").self_match == "keep"
    assert detect(gt).name == "oxford"


def test_sniff(tmp_path):
    gt = write_gt(tmp_path / "gt")
    assert sniff_oxford(gt)
    (tmp_path / "lonely").mkdir()
    (tmp_path / "lonely" / "a_1_query.txt").write_text("a 0 0 1 1\n")
    assert not sniff_oxford(tmp_path / "lonely")  # no matching _good.txt
    assert not sniff_oxford(gt / "tower_1_query.txt")
    assert not sniff_oxford(tmp_path / "missing")


def test_gallery_from_an_image_folder_sorted(tmp_path):
    gt = write_gt(tmp_path / "gt")
    images = tmp_path / "jpg"
    images.mkdir()
    for n in reversed(NAMES):
        (images / f"{n}.jpg").write_bytes(b"")
    (images / "readme.txt").write_text("not an image")
    ds = read_oxford(gt, ReadOptions(images=images))
    assert ds.gallery == tuple(NAMES)
    assert ds.image_paths["tower_000003"] == images / "tower_000003.jpg"


def test_paris_images_in_landmark_subfolders(tmp_path):
    gt = write_gt(tmp_path / "gt")
    images = tmp_path / "paris"
    for i, n in enumerate(NAMES):
        folder = images / ("tower" if i % 2 else "bridge")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{n}.jpg").write_bytes(b"")
    ds = read_oxford(gt, ReadOptions(images=images))
    assert ds.gallery == tuple(NAMES)
    assert ds.image_paths["tower_000003"] == images / "tower" / "tower_000003.jpg"


def test_gallery_names_drop_extensions_and_query_id_rows(tmp_path):
    gt = write_gt(tmp_path / "gt")
    given = (*[f"{n}.jpg" for n in NAMES], "tower_1", "bridge_1")
    assert read_oxford(gt, ReadOptions(gallery_names=given)).gallery == tuple(NAMES)


def test_hand_checked_trapezoid_map_with_the_query_kept_and_removed(tmp_path):
    ds = read_oxford(write_gt(tmp_path / "gt"), ReadOptions(gallery_names=tuple(NAMES)))
    r = rank(in_index_order(2), ds, k=8)
    ev = evaluate(ds, r, get_protocol("oxford"))
    # Trapezoid AP (compute_ap.cpp): positive j (0-based) at rank r after removing junk adds
    # (j/r + (j+1)/(r+1)) / 2 / n_positives, with j/r read as 1 when r = 0.
    # tower_1: positives 0, 2, 5 (good + ok), junk 1 removed -> ranks 0, 1, 4 of 3
    tower = (1 + 1) / 2 / 3 + (1 / 1 + 2 / 2) / 2 / 3 + (2 / 4 + 3 / 5) / 2 / 3
    # bridge_1: positives 4, 7 -> ranks 4, 7 of 2
    bridge = (0 / 4 + 1 / 5) / 2 / 2 + (1 / 7 + 2 / 8) / 2 / 2
    assert ev.per_query["AP"].tolist() == pytest.approx([bridge, tower])
    assert ev.summary["mAP"] == pytest.approx((bridge + tower) / 2)
    removed = evaluate(ds, r, get_protocol("oxford").override(self_match="remove"))
    # Without its own image: tower_1 positives 2, 5 at ranks 0, 3 (0 and 1 removed);
    # bridge_1 positive 7 at rank 6 (4 removed).
    tower_removed = (1 + 1) / 2 / 2 + (1 / 3 + 2 / 4) / 2 / 2
    bridge_removed = (0 / 6 + 1 / 7) / 2 / 1
    assert removed.per_query["AP"].tolist() == pytest.approx([bridge_removed, tower_removed])


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
     "gt: 1 ground-truth file is missing, e.g. tower_1_junk.txt; every query needs "
     "<q>_query.txt, <q>_good.txt, <q>_ok.txt and <q>_junk.txt"),
    ({"castle_2_good.txt": "tower_000001\n"},  # a good list without its query file
     "gt: 3 ground-truth files are missing, e.g. castle_2_query.txt, castle_2_ok.txt, "
     "castle_2_junk.txt; every query needs"),
    ({"tower_1_query.txt": "oxc1_tower_000000 1 2 3\n"},
     "tower_1_query.txt, line 1: expected 'oxc1_<image> x1 y1 x2 y2', found 4 fields"),
    ({"tower_1_query.txt": "\noxc1_tower_000000 1 2 3 x\n"},
     "tower_1_query.txt, line 2: the box 1 2 3 x is not four numbers"),
    ({"tower_1_query.txt": "oxc1_tower_000000 50 2 10 9\n"},
     "tower_1_query.txt, line 1: the box 50 2 10 9 is not a region (need 0 <= x1 < x2 and "
     "0 <= y1 < y2)"),
    ({"tower_1_query.txt": "oxc1_tower_000000 -1 2 10 9\n"},
     "tower_1_query.txt, line 1: the box -1 2 10 9 is not a region"),
    ({"tower_1_query.txt": "oxc1_tower_000000 1 2 10 nan\n"},
     "tower_1_query.txt, line 1: the box 1 2 10 nan is not a region"),
    ({"tower_1_query.txt": "oxc1_ 1 2 10 20\n"},
     "tower_1_query.txt, line 1: no image name before the box"),
    ({"tower_1_query.txt": "a 1 2 3 4\nb 1 2 3 4\n"},
     "tower_1_query.txt: expected one line 'oxc1_<image> x1 y1 x2 y2', found 2"),
    ({"tower_1_query.txt": ""},
     "tower_1_query.txt: expected one line 'oxc1_<image> x1 y1 x2 y2', found 0"),
    ({"tower_1_ok.txt": "tower_000005\ntower_000006 0.5\n"},
     "tower_1_ok.txt, line 2: expected one image name, found 2 fields (tower_000006 0.5)"),
    ({"tower_1_ok.txt": "tower_000099\n", "bridge_1_junk.txt": "bridge_000001\n"},
     "gt: 2 images named in the ground truth are not in the gallery names, e.g. "
     "bridge_000001 (bridge_1_junk.txt), tower_000099 (tower_1_ok.txt)"),
    ({"tower_1_query.txt": "oxc1_tower_000042 1 2 10 20\n"},
     "gt: 1 image named in the ground truth is not in the gallery names, e.g. "
     "tower_000042 (tower_1_query.txt)"),
]


@pytest.mark.parametrize(("files", "message"), BAD)
def test_malformed_gt_files_give_one_sentence(tmp_path, files, message):
    gt = write_gt(tmp_path / "gt", files)
    with pytest.raises(InputError, match=re.escape(message)):
        read_oxford(gt, ReadOptions(gallery_names=tuple(NAMES)))


def test_not_utf8_list(tmp_path):
    gt = write_gt(tmp_path / "gt")
    (gt / "tower_1_ok.txt").write_bytes(b"tower_00000\xff\n")
    with pytest.raises(InputError, match=re.escape("tower_1_ok.txt: not UTF-8 text (byte 11)")):
        read_oxford(gt, ReadOptions(gallery_names=tuple(NAMES)))


def test_no_gallery_no_queries_no_folder(tmp_path):
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
    with pytest.raises(InputError, match="no such folder"):
        read_oxford(tmp_path / "nope", ReadOptions(gallery_names=tuple(NAMES)))
    with pytest.raises(InputError, match="is a file, not an Oxford/Paris gt_files folder"):
        read_oxford(gt / "tower_1_ok.txt", ReadOptions(gallery_names=tuple(NAMES)))


def test_real_oxford5k_ground_truth_and_regression_map(shared_samples):
    """The real gt_files (read in place, never copied) and the LOPQ fc7 fvecs: the
    regression values of that sample's SOURCE.md (40.29 kept, 34.68 removed)."""
    from irviewer.core.descriptors import align
    from irviewer.formats.descriptor_files import read_descriptors

    features = shared_samples("oxford5k-lopq-fc7-features")
    names = tuple((features / "oxford5k_imlist_sorted.txt").read_text().split())
    ds = read_oxford(shared_samples("oxford5k-gt"), ReadOptions(gallery_names=names))
    assert (ds.n_queries, ds.n_gallery) == (55, 5063)
    assert ds.notes == ("all_souls_1_good.txt: 1 name listed more than once, counted once "
                        "(all_souls_000091)",)
    # The query image is always one of its own positives: good for 41 queries, ok for 14.
    assert sum(q.self_index in q.group("good") for q in ds.queries) == 41
    assert sum(q.self_index in q.group("ok") for q in ds.queries) == 14
    r = rank(align(read_descriptors(features / "oxford_features.fvecs", row_names=names), ds),
             ds, k=100)
    kept = evaluate(ds, r, get_protocol("oxford")).summary["mAP"]
    removed = evaluate(ds, r, get_protocol("oxford").override(self_match="remove"))
    assert round(100 * kept, 2) == 40.29
    assert round(100 * removed.summary["mAP"], 2) == 34.68


def test_sign_binarised_fc7_ranks_exact_ties_in_gallery_order(tmp_path, shared_samples):
    """The real fc7 descriptors cut to their signs: cosines take 65 values, ties by the
    hundreds, which float32 makes unequal. The headline is the order that keeps equal
    cosines in gallery order (32.72, against 32.47 or 32.57 by the float rounding of one
    machine or another), per query equal to that order computed in whole numbers, and
    every row of the exported lists has its score."""
    import csv

    from irviewer.formats.descriptor_files import read_descriptors

    features = shared_samples("oxford5k-lopq-fc7-features")
    names_file = features / "oxford5k_imlist_sorted.txt"
    names = tuple(names_file.read_text().split())
    signs = np.sign(read_descriptors(features / "oxford_features.fvecs",
                                     row_names=names).tables[0].vectors).astype(np.float32)
    np.save(tmp_path / "signs.npy", signs)
    gt = shared_samples("oxford5k-gt")
    out = tmp_path / "out.json"
    assert main(["eval", str(gt), "-d", str(tmp_path / "signs.npy"), "--row-names",
                 str(names_file), "--json", str(out), "--export-csv",
                 str(tmp_path / "lists")]) == 0
    import json

    (evaluation,) = json.loads(out.read_text())["evaluations"]
    assert round(100 * evaluation["summary"]["mAP"], 2) == 32.72
    ds = read_oxford(gt, ReadOptions(gallery_names=names))
    dots = np.sign(signs[[q.self_index for q in ds.queries]]) @ signs.T  # whole numbers
    expected = []
    for query, row in zip(ds.queries, dots, strict=True):
        order = np.lexsort((np.arange(len(row)), -row))  # equal cosines: gallery order
        positive = set(query.group("good").tolist()) | set(query.group("ok").tolist())
        junk = set(query.group("junk").tolist())
        listed = [int(g) in positive for g in order if int(g) not in junk]
        expected.append(reference.ap_trapezoid(listed, len(positive)))
    got = [q["AP"] for q in evaluation["queries"]]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    with (tmp_path / "lists.oxford.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) > 55 * 100 and all(r["score"] for r in rows)


def test_the_missing_gallery_sentence_names_the_dialog_fields_in_the_window(tmp_path):
    gt = write_gt(tmp_path / "gt")
    with pytest.raises(InputError) as caught:
        read_oxford(gt)
    assert caught.value.for_window() == (
        "gt: the Oxford/Paris ground truth does not list the gallery; give “Images” in the "
        "Open dialog, a descriptor file with names, or “Row names” in the Open dialog")
