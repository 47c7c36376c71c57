"""Revisited Oxford/Paris pickles and the restricted unpickler: conventions, values, refusals."""

from __future__ import annotations

import pickle
import pickletools
import re

import numpy as np
import pytest

from irviewer.core.descriptors import AlignedDescriptors, normalise_rows
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import rank
from irviewer.formats.base import ReadOptions
from irviewer.formats.registry import detect, read_dataset
from irviewer.formats.revisited import read_revisited
from irviewer.formats.safe_pickle import load_plain_pickle

IMLIST = [f"img_{i:02d}" for i in range(8)]
GND = {
    "imlist": IMLIST,
    "qimlist": ["q_a", "q_b"],
    "gnd": [
        {"easy": [0, 3], "hard": [5], "junk": [1], "bbx": [1.5, 2.0, 30.0, 40.5]},
        {"easy": [], "hard": [2, 6], "junk": [7], "bbx": [0, 0, 10, 10]},
    ],
}


def write_gnd(tmp_path, gnd=GND, name="gnd_rtest.pkl"):
    path = tmp_path / name
    path.write_bytes(pickle.dumps(gnd, protocol=2))
    return path


def test_reads_groups_boxes_and_three_protocols(tmp_path):
    ds = read_dataset(write_gnd(tmp_path))
    assert ds.format == "revisited" and ds.name == "rtest"
    assert ds.gallery == tuple(IMLIST)
    assert ds.protocols == ("revisited-easy", "revisited-medium", "revisited-hard")
    a = ds.queries[0]
    assert a.group("easy").tolist() == [0, 3] and a.group("hard").tolist() == [5]
    assert a.box == (1.5, 2.0, 30.0, 40.5) and a.self_index == -1
    assert detect(tmp_path / "gnd_rtest.pkl").name == "revisited"


def test_hand_checked_map_for_each_protocol_and_the_easy_skip(tmp_path):
    ds = read_revisited(write_gnd(tmp_path))
    # Both queries rank the gallery in index order (score falls with the index).
    angles = np.linspace(0.0, 3.0, 8)
    gallery = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    queries = normalise_rows(np.array([[1.0, 0.0], [1.0, 0.0]]))
    r = rank(AlignedDescriptors(queries, gallery, None, 2), ds, k=8)
    easy = evaluate(ds, r, get_protocol("revisited-easy"))
    # q_a Easy: positives 0, 3; removed junk 1 and hard 5 -> ranks 0, 2 of 2 (trapezoid):
    # (1 + 1)/2/2 + (1/2 + 2/3)/2/2
    assert easy.per_query["AP"][0] == pytest.approx(0.5 + (1 / 2 + 2 / 3) / 4)
    # q_b has no easy positive: reported and skipped under Easy, never scored 0.
    assert easy.summary["n_skipped"] == 1 and easy.skipped()[0][0] == "q_b"
    medium = evaluate(ds, r, get_protocol("revisited-medium"))
    # q_b Medium: positives 2, 6 with 7 junk -> ranks 2, 6: (0/2 + 1/3)/2/2 + (1/6 + 2/7)/2/2
    assert medium.per_query["AP"][1] == pytest.approx((1 / 3) / 4 + (1 / 6 + 2 / 7) / 4)
    hard = evaluate(ds, r, get_protocol("revisited-hard"))
    # q_a Hard: positive 5; junk 1 and easy 0, 3 removed -> rank 2: (0/2 + 1/3)/2
    assert hard.per_query["AP"][0] == pytest.approx((1 / 3) / 2)
    # revisitop P@5 for q_a Medium: positives 0, 3, 5 at ranks 0, 2, 4 -> kq = 5: 3/5.
    assert medium.per_query["P@5(revisitop)"][0] == pytest.approx(3 / 5)


def test_distractors_extend_the_gallery(tmp_path):
    (tmp_path / "d.txt").write_text("x1\nx2.jpg\n\n")
    ds = read_revisited(write_gnd(tmp_path), ReadOptions(distractors=tmp_path / "d.txt"))
    assert ds.gallery[-2:] == ("x1", "x2") and ds.n_gallery == 10
    assert ds.notes == ("2 distractor images added from d.txt",)


class Payload:
    """A pickle that would create a file if it were ever run."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_a_pickle_with_code_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "was_run"
    path = tmp_path / "gnd_evil.pkl"
    path.write_bytes(pickle.dumps({"imlist": [Payload(marker)]}))
    with pytest.raises(InputError, match=re.escape(
            "gnd_evil.pkl contains Python code or objects (io.open); irviewer only loads plain "
            "lists, dicts, strings and numbers from a pickle, so nothing in it was run")):
        read_dataset(path)
    assert not marker.exists()


def test_numpy_objects_are_refused_too(tmp_path):
    path = tmp_path / "gnd_np.pkl"
    path.write_bytes(pickle.dumps({"imlist": np.arange(3)}))
    with pytest.raises(InputError, match=r"contains Python code or objects \(numpy"):
        load_plain_pickle(path)


def test_plain_pickle_loads_every_protocol_version(tmp_path):
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        path = tmp_path / f"p{proto}.pkl"
        path.write_bytes(pickle.dumps(GND, protocol=proto))
        assert load_plain_pickle(path) == GND
    assert "GLOBAL" not in {op.name for op, _, _ in pickletools.genops(pickle.dumps(GND))}


def bad(gnd_changes):
    gnd = {**GND, **gnd_changes}
    return gnd


BAD = [
    (b"", "gnd_bad.pkl is empty"),
    (pickle.dumps(GND)[:40], "gnd_bad.pkl is truncated: the pickle ends early"),
    (b"not a pickle at all", "gnd_bad.pkl is not a readable pickle"),
    (pickle.dumps([1, 2]), "gnd_bad.pkl: expected a dict with imlist, qimlist and gnd (the "
                           "revisited Oxford/Paris layout), found list"),
    (pickle.dumps(bad({"gnd": GND["gnd"][:1]})), "gnd_bad.pkl: 2 query names but 1 gnd entries"),
    (pickle.dumps(bad({"gnd": [{**GND["gnd"][0], "easy": [0, 99]}, GND["gnd"][1]]})),
     "gnd_bad.pkl: query q_a: easy index 99 is outside the database of 8 images"),
    (pickle.dumps(bad({"gnd": [{**GND["gnd"][0], "junk": "1"}, GND["gnd"][1]]})),
     "gnd_bad.pkl: query q_a: junk must be a list of database indices"),
    (pickle.dumps(bad({"gnd": [{**GND["gnd"][0], "bbx": [5, 5, 1, 9]}, GND["gnd"][1]]})),
     "gnd_bad.pkl: query q_a: bbx [5.0, 5.0, 1.0, 9.0] is not a box (need 0 <= x1 < x2 and "
     "0 <= y1 < y2)"),
    (pickle.dumps(bad({"gnd": [{**GND["gnd"][0], "bbx": [5, 5]}, GND["gnd"][1]]})),
     "gnd_bad.pkl: query q_a: bbx must be four numbers x1, y1, x2, y2"),
    (pickle.dumps(bad({"imlist": "img"})), "gnd_bad.pkl: imlist must be a list, found str"),
]


@pytest.mark.parametrize(("content", "message"), BAD)
def test_malformed_pickles_give_one_sentence(tmp_path, content, message):
    path = tmp_path / "gnd_bad.pkl"
    path.write_bytes(content)
    with pytest.raises(InputError, match=re.escape(message)):
        read_revisited(path)


def test_bad_distractor_lists(tmp_path):
    gnd = write_gnd(tmp_path)
    (tmp_path / "empty.txt").write_text("\n")
    (tmp_path / "clash.txt").write_text("img_01\n")
    with pytest.raises(InputError, match=re.escape("empty.txt is empty")):
        read_revisited(gnd, ReadOptions(distractors=tmp_path / "empty.txt"))
    with pytest.raises(InputError, match="1 distractor names are already database images"):
        read_revisited(gnd, ReadOptions(distractors=tmp_path / "clash.txt"))
