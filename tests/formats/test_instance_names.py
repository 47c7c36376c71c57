"""Instance sets named by file (CLICIDE / GaRoFou style): folders, label rules, the manifest's
ignore list and orphan removal, a hand-checked AP and P@1, one sentence per malformed input."""

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
from irviewer.formats.instance_names import (
    READER,
    label_rule,
    read_instance_names,
    sniff_instance_names,
)
from irviewer.formats.registry import detect

GALLERY = ["monalisa-1.jpg", "monalisa-2.jpg", "wave-1.jpg", "wave-2.png", "blank-1.jpg"]
QUERY = ["monalisa-q.jpg", "wave-q.jpg", "ghost-q.jpg", "blank-q.jpg"]


def touch(folder: Path, names: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        (folder / n).write_bytes(b"")


def clicide(tmp_path: Path, gallery: str = "Train", query: str = "Test") -> Path:
    root = tmp_path / "clicide"
    touch(root / gallery, GALLERY)
    touch(root / query, QUERY)
    return root


def scored(ds, scores, protocol="instance"):
    """Evaluate with query q scoring gallery image i at ``scores[q][i]`` (one-hot gallery)."""
    queries = normalise_rows(np.asarray(scores, dtype=np.float64))
    aligned = AlignedDescriptors(queries, np.eye(ds.n_gallery, dtype=np.float32), None,
                                 ds.n_gallery)
    return evaluate(ds, rank(aligned, ds, k=ds.n_gallery), get_protocol(protocol))


@pytest.mark.parametrize(("rule", "stem", "label"), [
    (None, "monalisa-03", "monalisa"),
    ("dash", "saint-jerome-2", "saint"),
    ("dash", "monalisa", None),
    ("dash", "-3", None),
    ("underscore2", "room1_obj07_v2", "room1_obj07"),
    ("underscore2", "room1_obj07", "room1_obj07"),
    ("underscore2", "room1", None),
    ("underscore2", "room1__v2", None),
    (r"^obj(\d+)", "obj042_left", "042"),
    (r"[a-z]+", "12_wave_3", "wave"),  # no group: the whole match
    (r"^obj(\d+)", "wave-1", None),
    (r"^(x?)", "wave-1", None),  # an empty label is no label
])
def test_label_rules(rule, stem, label):
    assert label_rule(rule)(stem) == label


def test_reads_folders_and_manifest_conventions(tmp_path):
    root = clicide(tmp_path)
    ds = read_instance_names(root)
    # Gallery in path order; .png counts too.
    assert ds.gallery == ("Train/blank-1", "Train/monalisa-1", "Train/monalisa-2",
                          "Train/wave-1", "Train/wave-2")
    assert ds.gallery_labels.tolist() == ["blank", "monalisa", "monalisa", "wave", "wave"]
    assert [q.name for q in ds.queries] == ["Test/blank-q", "Test/monalisa-q", "Test/wave-q"]
    blank, mona, wave = ds.queries
    assert mona.group("positive").tolist() == [1, 2] and mona.self_index == -1
    assert mona.meta["label"] == "monalisa" and wave.group("positive").tolist() == [3, 4]
    assert [(s.name, s.reason) for s in ds.skipped_queries] == [
        ("Test/ghost-q", "instance 'ghost' has no other gallery image")]
    assert ds.protocols == ("instance",) and ds.format == "instances" and ds.name == "clicide"
    assert ds.image_paths["Train/wave-2"] == root / "Train" / "wave-2.png"
    assert ds.notes == () and len(ds.global_ignored) == 0
    assert blank.group("positive").tolist() == [0]


def test_ignore_list_and_orphans_as_the_manifest(tmp_path):
    root = clicide(tmp_path)
    ds = read_instance_names(root, ReadOptions(ignore_labels=("blank", "nosuch")))
    assert [q.name for q in ds.queries] == ["Test/monalisa-q", "Test/wave-q"]
    assert ds.global_ignored.tolist() == [0]
    assert ("Test/blank-q", "instance 'blank' is on the ignore list") in [
        (s.name, s.reason) for s in ds.skipped_queries]
    assert ds.notes == ("ignore list: 1 label(s) appear nowhere in clicide, e.g. nosuch",)
    kept = read_instance_names(root, ReadOptions(drop_orphans=False))
    assert "Test/ghost-q" in [q.name for q in kept.queries]
    ghost = kept.queries[kept.query_by_name("Test/ghost-q")]
    assert ghost.group("positive").tolist() == [] and ghost.meta["label"] == "ghost"


@pytest.mark.parametrize(("gallery", "query"), [
    ("gallery", "query"), ("Database", "Queries"), ("db", "QUERY"), ("train", "test"),
])
def test_accepted_folder_names(tmp_path, gallery, query):
    root = clicide(tmp_path, gallery, query)
    assert sniff_instance_names(root) and detect(root).name == "instances"
    assert read_instance_names(root).gallery[0] == f"{gallery}/blank-1"


def test_images_in_subfolders_and_a_regex_rule(tmp_path):
    root = tmp_path / "garofou"
    touch(root / "gallery" / "room1", ["obj01_a.jpg", "obj01_b.jpg"])
    touch(root / "gallery" / "room2", ["obj02_a.jpg"])
    touch(root / "query", ["obj01_q.jpg", "obj02_q.jpg"])
    ds = read_instance_names(root, ReadOptions(instance_rule=r"^(obj\d+)_"))
    assert ds.gallery == ("gallery/room1/obj01_a", "gallery/room1/obj01_b",
                          "gallery/room2/obj02_a")
    assert [q.meta["label"] for q in ds.queries] == ["obj01", "obj02"]
    assert ds.queries[1].group("positive").tolist() == [2]


def test_hand_checked_ap_and_p_at_1(tmp_path):
    ds = read_instance_names(clicide(tmp_path), ReadOptions(ignore_labels=("blank",)))
    # Gallery: 0 blank-1 (ignored for every query), 1 monalisa-1, 2 monalisa-2, 3 wave-1,
    # 4 wave-2.
    scores = [
        # monalisa-q: 0 (removed), 1 (positive), 4, 3, 2 (positive, negative cosine)
        # -> positives at 1-based ranks 1 and 4: AP (1/1 + 2/4)/2, P@1 = 1.
        [0.9, 0.8, -0.2, 0.1, 0.3],
        # wave-q: 1, 4 (positive), 2, 0 (removed), 3 (positive)
        # -> positives at ranks 2 and 4: AP (1/2 + 2/4)/2, P@1 = 0.
        [0.0, 0.5, 0.4, -0.1, 0.45],
    ]
    ev = scored(ds, scores)
    assert ev.per_query["AP"] == pytest.approx([(1 + 2 / 4) / 2, (1 / 2 + 2 / 4) / 2])
    assert ev.per_query["P@1"].tolist() == [1.0, 0.0]
    assert ev.summary["mAP"] == pytest.approx(0.625)
    assert ev.summary["mP@1"] == pytest.approx(0.5)
    # Without the ignore list blank-1 is a negative ranked first for monalisa-q.
    plain = read_instance_names(clicide(tmp_path / "again"))
    mona = plain.query_by_name("Test/monalisa-q")
    ev = scored(plain, [[0.0] * 5, scores[0], scores[1]])
    assert ev.per_query["AP"][mona] == pytest.approx((1 / 2 + 2 / 5) / 2)
    assert ev.per_query["P@1"][mona] == 0.0


def test_sniff(tmp_path):
    root = clicide(tmp_path)
    assert READER.name == "instances" and READER.priority == 5
    assert not sniff_instance_names(root / "Train")
    assert not sniff_instance_names(root / "Train" / "wave-1.jpg")
    assert not sniff_instance_names(tmp_path / "nowhere")
    touch(root / "gallery", ["x-1.jpg"])
    assert not sniff_instance_names(root)  # two gallery folders: not sure, so no


def _setup_query_only(root: Path) -> None:
    touch(root / "query", ["a-1.jpg"])


def _setup_gallery_only(root: Path) -> None:
    touch(root / "gallery", ["a-1.jpg"])


def _setup_two_gallery_folders(root: Path) -> None:
    touch(root / "gallery", ["a-1.jpg"])
    touch(root / "Train", ["a-2.jpg"])
    touch(root / "query", ["a-q.jpg"])


def _setup_unlabelled(root: Path) -> None:
    touch(root / "gallery", ["a-1.jpg", "IMG_0001.jpg", "IMG_0002.jpg"])
    touch(root / "query", ["a-q.jpg", "IMG_0003.jpg", "IMG_0004.jpg"])


def _setup_same_stem(root: Path) -> None:
    touch(root / "gallery", ["a-1.jpg", "a-2.jpg"])
    touch(root / "query", ["a-1.png"])


def _setup_empty_query(root: Path) -> None:
    touch(root / "gallery", ["a-1.jpg"])
    touch(root / "query", ["notes.txt"])


def _setup_all_orphans(root: Path) -> None:
    touch(root / "gallery", ["a-1.jpg"])
    touch(root / "query", ["b-q.jpg", "c-q.jpg"])


BAD = [
    (_setup_query_only, None,
     "set: no gallery folder; expected one of gallery/, database/, db/, train/ (any case)"),
    (_setup_gallery_only, None,
     "set: no query folder; expected one of query/, queries/, test/ (any case)"),
    (_setup_two_gallery_folders, None,
     "set: 2 folders could be the gallery folder (Train/, gallery/); keep one, or list the "
     "images in a CSV manifest"),
    (_setup_unlabelled, None,
     "set: the instance rule 'dash' gives no label for 4 file names, e.g. IMG_0001.jpg, "
     "IMG_0002.jpg, IMG_0003.jpg, ...; choose --instance-rule dash, underscore2 or a regular "
     "expression"),
    (_setup_unlabelled, r"^([a-z])-",
     "set: the instance rule '^([a-z])-' gives no label for 4 file names, e.g. IMG_0001.jpg"),
    (_setup_unlabelled, "underscore2",
     "set: the instance rule 'underscore2' gives no label for 2 file names, e.g. a-1.jpg, "
     "a-q.jpg"),
    (_setup_unlabelled, "(",
     "instance rule '(' is not a valid regular expression (missing ), unterminated subpattern "
     "at position 0); use dash, underscore2 or a regular expression"),
    (_setup_same_stem, None,
     "set: 1 file name appears twice, e.g. gallery/a-1 and query/a-1; descriptor rows are "
     "matched by file name, so give every image its own name (or list them in a CSV manifest)"),
    (_setup_empty_query, None, "set/query: holds no image"),
    (_setup_all_orphans, None,
     "set: all 2 queries were removed (instance 'b' has no other gallery image, ...); nothing "
     "is left to evaluate"),
]


@pytest.mark.parametrize(("setup", "rule", "message"), BAD)
def test_malformed_sets_give_one_sentence(tmp_path, setup, rule, message):
    root = tmp_path / "set"
    root.mkdir()
    setup(root)
    with pytest.raises(InputError, match=re.escape(message)):
        read_instance_names(root, ReadOptions(instance_rule=rule))


def test_not_a_folder(tmp_path):
    path = tmp_path / "set.zip"
    path.write_bytes(b"PK")
    with pytest.raises(InputError, match=re.escape(f"{path}: not a folder; an instance set")):
        read_instance_names(path)


def test_unreadable_folder(tmp_path, monkeypatch):
    root = clicide(tmp_path)
    real_iterdir = Path.iterdir

    def iterdir(self):
        if self == root:
            raise PermissionError(13, "Permission denied")
        return real_iterdir(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    assert not sniff_instance_names(root)
    with pytest.raises(InputError, match=re.escape(
            f"{root}: cannot list the folder (Permission denied)")):
        read_instance_names(root)
