"""Revisited Oxford/Paris pickles: conventions, hand-checked values per protocol, refusals."""

from __future__ import annotations

import pickle
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
from irviewer.formats.registry import detect, read_dataset
from irviewer.formats.revisited import read_revisited, sniff_revisited

IMLIST = [f"img_{i:02d}" for i in range(8)]
GND = {
    "imlist": IMLIST,
    "qimlist": ["q_a", "q_b"],
    "gnd": [
        {"easy": [0, 3], "hard": [5], "junk": [1], "bbx": [1.5, 2.0, 30.0, 40.5]},
        {"easy": [], "hard": [2, 6], "junk": [7], "bbx": [0, 0, 10, 10]},
    ],
}


def write_gnd(tmp_path: Path, gnd: object = GND, name: str = "gnd_rtest.pkl") -> Path:
    path = tmp_path / name
    path.write_bytes(pickle.dumps(gnd, protocol=3))  # revisitop's files are protocol 3
    return path


def in_index_order(n_queries: int, n_gallery: int = len(IMLIST)) -> AlignedDescriptors:
    """Descriptors under which every query ranks the gallery in index order (scores from 1
    down to cos 3 < 0)."""
    angles = np.linspace(0.0, 3.0, n_gallery)
    gallery = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    queries = normalise_rows(np.tile([1.0, 0.0], (n_queries, 1)))
    return AlignedDescriptors(queries=queries, gallery=gallery, gallery_rows=None, dim=2)


def test_reads_groups_boxes_and_three_protocols(tmp_path):
    ds = read_dataset(write_gnd(tmp_path))
    assert ds.format == "revisited" and ds.name == "rtest"
    assert ds.gallery == tuple(IMLIST) and ds.groups == ("easy", "hard", "junk")
    assert ds.protocols == ("revisited-easy", "revisited-medium", "revisited-hard")
    a, b = ds.queries
    assert (a.name, a.image) == ("q_a", "q_a")
    assert a.group("easy").tolist() == [0, 3] and a.group("hard").tolist() == [5]
    assert a.group("junk").tolist() == [1] and b.group("easy").tolist() == []
    assert a.box == (1.5, 2.0, 30.0, 40.5) and b.box == (0.0, 0.0, 10.0, 10.0)
    assert a.self_index == -1 and b.self_index == -1  # query images are not in imlist
    assert ds.notes == ()
    assert detect(tmp_path / "gnd_rtest.pkl").name == "revisited"


def test_self_index_when_the_query_image_is_in_imlist(tmp_path):
    ds = read_revisited(write_gnd(tmp_path, {**GND, "qimlist": ["q_a", "img_04"]}))
    assert [q.self_index for q in ds.queries] == [-1, 4]


def test_sniff_by_name_or_by_content(tmp_path):
    assert sniff_revisited(write_gnd(tmp_path))
    assert sniff_revisited(write_gnd(tmp_path, GND, "my_ground_truth.pkl"))
    assert detect(tmp_path / "my_ground_truth.pkl").name == "revisited"
    assert not sniff_revisited(write_gnd(tmp_path, {"imlist": []}, "other.pkl"))
    assert not sniff_revisited(write_gnd(tmp_path, [1, 2], "list.pkl"))
    (tmp_path / "junk.pkl").write_bytes(b"\x00\x01")
    assert not sniff_revisited(tmp_path / "junk.pkl")
    (tmp_path / "gnd.txt").write_text("x")
    assert not sniff_revisited(tmp_path / "gnd.txt")
    assert not sniff_revisited(tmp_path / "absent.pkl")


class _CreatesAFile:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (open, (str(self.marker), "w"))


def test_sniffing_a_hostile_pickle_runs_nothing(tmp_path):
    marker = tmp_path / "was_run"
    path = write_gnd(tmp_path, {"imlist": [_CreatesAFile(marker)]}, "innocent.pkl")
    assert not sniff_revisited(path)
    assert not marker.exists()


def test_hand_checked_map_for_each_protocol(tmp_path):
    ds = read_revisited(write_gnd(tmp_path))
    r = rank(in_index_order(2), ds, k=8)
    # Trapezoid AP (revisitop compute_ap): positive j (0-based) at rank r after the
    # protocol's removals adds (j/r + (j+1)/(r+1)) / 2 / n_positives, j/r = 1 when r = 0.
    easy = evaluate(ds, r, get_protocol("revisited-easy"))
    # q_a Easy: positives 0, 3; junk 1 and hard 5 removed -> ranks 0, 2 of 2
    assert easy.per_query["AP"][0] == pytest.approx((1 + 1) / 2 / 2 + (1 / 2 + 2 / 3) / 2 / 2)
    medium = evaluate(ds, r, get_protocol("revisited-medium"))
    # q_a Medium: positives 0, 3, 5; junk 1 removed -> ranks 0, 2, 4 of 3
    q_a = (1 + 1) / 2 / 3 + (1 / 2 + 2 / 3) / 2 / 3 + (2 / 4 + 3 / 5) / 2 / 3
    # q_b Medium: positives 2, 6; junk 7 is after both -> ranks 2, 6 of 2
    q_b = (0 / 2 + 1 / 3) / 2 / 2 + (1 / 6 + 2 / 7) / 2 / 2
    assert medium.per_query["AP"].tolist() == pytest.approx([q_a, q_b])
    assert medium.summary["mAP"] == pytest.approx((q_a + q_b) / 2)
    hard = evaluate(ds, r, get_protocol("revisited-hard"))
    # q_a Hard: positive 5; junk 1 and easy 0, 3 removed -> rank 2 of 1
    assert hard.per_query["AP"][0] == pytest.approx((0 / 2 + 1 / 3) / 2)
    # revisitop mP@5 for q_a Medium: positives at 1-based ranks 1, 3, 5 -> kq = min(5, 5):
    # 3/5; true P@5 is 3/5 too. mP@10: kq = min(10, 5) = 5 -> 3/5, true P@10 = 3/10.
    assert medium.per_query["P@5(revisitop)"][0] == pytest.approx(3 / 5)
    assert medium.per_query["P@10(revisitop)"][0] == pytest.approx(3 / 5)
    assert medium.per_query["P@10"][0] == pytest.approx(3 / 10)


def test_easy_skips_the_two_queries_without_easy_positives(tmp_path):
    """Shaped like rOxford (balliol_000187, hertford_000082 have no easy image): Easy
    reports 2 skipped and averages the rest; Medium and Hard skip none."""
    gnd = {
        "imlist": IMLIST,
        "qimlist": ["all_souls_q", "balliol_q", "hertford_q"],
        "gnd": [
            {"easy": [1], "hard": [2], "junk": [0], "bbx": [0, 0, 4, 4]},
            {"easy": [], "hard": [3, 4], "junk": [5], "bbx": [0, 0, 4, 4]},
            {"easy": [], "hard": [6], "junk": [], "bbx": [0, 0, 4, 4]},
        ],
    }
    ds = read_revisited(write_gnd(tmp_path, gnd))
    r = rank(in_index_order(3), ds, k=8)
    easy = evaluate(ds, r, get_protocol("revisited-easy"))
    assert easy.summary["n_skipped"] == 2 and easy.summary["n_evaluated"] == 1
    assert [name for name, _ in easy.skipped()] == ["balliol_q", "hertford_q"]
    # all_souls_q Easy: positive 1; junk 0 and hard 2 removed -> rank 0: AP 1, not 1/3.
    assert easy.summary["mAP"] == pytest.approx(1.0)
    for level in ("medium", "hard"):
        assert evaluate(ds, r, get_protocol(f"revisited-{level}")).summary["n_skipped"] == 0


def test_cirtorch_original_oxford_layout(tmp_path):
    """cirtorch's gnd_oxford5k.pkl: ok (good + ok merged) and junk, query image in imlist."""
    gnd = {"imlist": IMLIST, "qimlist": ["img_00"],
           "gnd": [{"ok": [0, 2, 5], "junk": [1], "bbx": [1, 2, 3, 4]}]}
    ds = read_revisited(write_gnd(tmp_path, gnd, "gnd_oxford5k.pkl"))
    assert ds.protocols == ("oxford",) and ds.groups == ("good", "ok", "junk")
    assert ds.queries[0].group("ok").tolist() == [0, 2, 5] and ds.queries[0].self_index == 0
    assert "cirtorch's original Oxford/Paris layout" in ds.notes[0]
    ev = evaluate(ds, rank(in_index_order(1), ds, k=8), get_protocol("oxford"))
    # As the gt_files test: positives 0, 2, 5, junk 1 -> ranks 0, 1, 4 of 3.
    assert ev.per_query["AP"][0] == pytest.approx(
        (1 + 1) / 2 / 3 + (1 / 1 + 2 / 2) / 2 / 3 + (2 / 4 + 3 / 5) / 2 / 3)


def test_distractors_extend_the_gallery(tmp_path):
    (tmp_path / "d.txt").write_text("x1\nx2.jpg\n\nsub/dir/x3.JPG\n")
    ds = read_revisited(write_gnd(tmp_path), ReadOptions(distractors=tmp_path / "d.txt"))
    assert ds.gallery[-3:] == ("x1", "x2", "sub/dir/x3") and ds.n_gallery == 11
    assert ds.notes == ("3 distractor images added from d.txt",)
    # The published indices still point into imlist.
    assert ds.queries[0].group("easy").tolist() == [0, 3]


@pytest.mark.parametrize(("text", "message"), [
    ("\n  \n", "list.txt is empty: a distractor list has one image name per line"),
    ("x1\nimg_01\nimg_02.jpg\n", "list.txt: 2 distractor names are already database images "
                                 "of gnd_rtest.pkl, e.g. img_01, img_02"),
    ("x1\nx2\nx1.jpg\n", "list.txt: 1 distractor name repeats, e.g. x1"),
    ("img_03\n", "list.txt: 1 distractor name is already a database image of gnd_rtest.pkl, "
                 "e.g. img_03"),
])
def test_bad_distractor_lists(tmp_path, text, message):
    (tmp_path / "list.txt").write_text(text)
    with pytest.raises(InputError, match=re.escape(message)):
        read_revisited(write_gnd(tmp_path), ReadOptions(distractors=tmp_path / "list.txt"))


def test_missing_distractor_list(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_revisited(write_gnd(tmp_path), ReadOptions(distractors=tmp_path / "none.txt"))


def changed(query: int, **fields: object) -> dict[str, object]:
    """Return GND with some fields of one gnd entry replaced (None deletes the field)."""
    entries = [dict(e) for e in GND["gnd"]]  # type: ignore[union-attr]
    for key, value in fields.items():
        if value is None:
            del entries[query][key]
        else:
            entries[query][key] = value
    return {**GND, "gnd": entries}


BAD = [
    ([1, 2], "gnd_bad.pkl: expected a dict with imlist, qimlist and gnd (the revisited "
             "Oxford/Paris layout), found list"),
    ({"imlist": []}, "gnd_bad.pkl: expected a dict with imlist, qimlist and gnd (the revisited "
                     "Oxford/Paris layout), found imlist"),
    ({**GND, "imlist": "img"}, "gnd_bad.pkl: imlist must be a list, found str"),
    ({**GND, "gnd": GND["gnd"][:1]}, "gnd_bad.pkl: 2 query names but 1 gnd entries"),
    ({**GND, "imlist": ["a", 7, "c"]},
     "gnd_bad.pkl: imlist must hold image names; 1 entry is not, e.g. position 1 (7)"),
    ({**GND, "qimlist": ["q_a", ""]},
     "gnd_bad.pkl: qimlist must hold image names; 1 entry is not, e.g. position 1 ('')"),
    ({**GND, "gnd": [GND["gnd"][0], [1, 2]]},
     "gnd_bad.pkl: gnd entry 1 is a list, not a dict with easy, hard, junk and bbx"),
    (changed(1, hard=None), "gnd_bad.pkl: gnd entry 1 has no hard list (it has bbx, easy, "
                            "junk)"),
    (changed(0, easy=[0, 99]),
     "gnd_bad.pkl: query q_a: easy index 99 is outside the database of 8 images (0..7)"),
    (changed(0, junk=[-1]),
     "gnd_bad.pkl: query q_a: junk index -1 is outside the database of 8 images (0..7)"),
    (changed(0, junk="1"), "gnd_bad.pkl: query q_a: junk must be a list of database indices"),
    (changed(0, hard=[1.0]), "gnd_bad.pkl: query q_a: hard must be a list of database indices"),
    (changed(0, bbx=[5, 5, 1, 9]),
     "gnd_bad.pkl: query q_a: bbx 5 5 1 9 is not a box (need 0 <= x1 < x2 and 0 <= y1 < y2)"),
    (changed(0, bbx=[-5, 5, 10, 9]), "gnd_bad.pkl: query q_a: bbx -5 5 10 9 is not a box"),
    (changed(0, bbx=[5, 5]), "gnd_bad.pkl: query q_a: bbx must be four numbers x1, y1, x2, y2"),
]


@pytest.mark.parametrize(("gnd", "message"), BAD)
def test_malformed_pickles_give_one_sentence(tmp_path, gnd, message):
    path = write_gnd(tmp_path, gnd, "gnd_bad.pkl")
    with pytest.raises(InputError, match=re.escape(message)):
        read_revisited(path)


@pytest.mark.parametrize(("content", "message"), [
    (b"", "gnd_bad.pkl is empty"),
    (pickle.dumps(GND)[:40], "gnd_bad.pkl is truncated: the pickle ends early"),
    (b"not a pickle at all", "gnd_bad.pkl is not a readable pickle"),
])
def test_unreadable_pickles_give_one_sentence(tmp_path, content, message):
    (tmp_path / "gnd_bad.pkl").write_bytes(content)
    with pytest.raises(InputError, match=re.escape(message)):
        read_revisited(tmp_path / "gnd_bad.pkl")


def test_a_gnd_file_with_code_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "was_run"
    path = write_gnd(tmp_path, {**GND, "imlist": [_CreatesAFile(marker)]}, "gnd_evil.pkl")
    with pytest.raises(InputError, match=re.escape(
            "gnd_evil.pkl contains Python code or objects (io.open); irviewer only loads plain "
            "lists, dicts, strings and numbers from a pickle, so nothing in it was run")):
        read_dataset(path)
    assert not marker.exists()


def test_real_revisited_ground_truth(shared_samples):
    """The real gnd files, read in place (never copied): structure facts of SOURCE.md."""
    folder = shared_samples("revisited-oxford-paris-gnd")
    rox = read_revisited(folder / "gnd_roxford5k.pkl")
    assert (rox.name, rox.n_queries, rox.n_gallery) == ("roxford5k", 70, 4993)
    assert all(q.self_index == -1 for q in rox.queries)
    assert [q.name for q in rox.queries if not len(q.group("easy"))] == [
        "balliol_000187", "hertford_000082"]
    assert rox.queries[0].box == (136.5, 34.1, 648.5, 955.7)
    rpa = read_revisited(folder / "gnd_rparis6k.pkl")
    assert (rpa.name, rpa.n_queries, rpa.n_gallery) == ("rparis6k", 70, 6322)
    assert rpa.queries[0].box == (130.0, 17.0, 843.0, 732.0)
