"""Person re-identification folders (Market-1501 / DukeMTMC-reID / CUHK03-NP layout): reading,
conventions, a hand-checked mAP / CMC / mINP, and one sentence per malformed input."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

from irviewer.core.descriptors import AlignedDescriptors, normalise_rows
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import rank
from irviewer.formats.registry import detect, read_dataset
from irviewer.formats.reid import (
    READER,
    default_protocol,
    parse_person_camera,
    read_reid,
    sniff_reid,
)


def touch(folder: Path, names: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        (folder / n).write_bytes(b"")


def scored(ds, scores, protocol):
    """Evaluate with query q scoring gallery image i at ``scores[q][i]`` (cosine of a one-hot
    gallery against the query vector, so negative scores are real cosines)."""
    queries = normalise_rows(np.asarray(scores, dtype=np.float64))
    gallery = np.eye(ds.n_gallery, dtype=np.float32)
    aligned = AlignedDescriptors(queries, gallery, None, ds.n_gallery)
    return evaluate(ds, rank(aligned, ds, k=ds.n_gallery), get_protocol(protocol))


# Gallery, in file-name order (index: id, camera).
GALLERY = [
    "-1_c1s1_000001_00.jpg",   # 0: junk, removed for every query
    "0000_c1s1_000002_00.jpg",  # 1: distractor, a negative
    "0001_c1s1_000101_01.jpg",  # 2: id 1, camera 1
    "0001_c2s1_000102_01.jpg",  # 3: id 1, camera 2
    "0001_c3s1_000103_01.jpg",  # 4: id 1, camera 3
    "0002_c1s1_000201_01.jpg",  # 5: id 2, camera 1
    "0002_c1s1_000202_01.jpg",  # 6: id 2, camera 1
    "0002_c4s1_000203_01.jpg",  # 7: id 2, camera 4
]
QUERY = [
    "-1_c3s1_000001_00.jpg",    # junk query: removed, reported
    "0001_c1s1_000100_00.jpg",  # id 1, camera 1
    "0002_c1s1_000200_00.jpg",  # id 2, camera 1
    "0003_c2s1_000300_00.jpg",  # id 3: no gallery image
]


def market(tmp_path: Path, name: str = "market1501") -> Path:
    root = tmp_path / name
    touch(root / "bounding_box_test", [*GALLERY, "Thumbs.db"])
    touch(root / "query", QUERY)
    touch(root / "bounding_box_train", ["0007_c1s1_000001_00.jpg"])
    return root


@pytest.mark.parametrize(("name", "expected"), [
    ("0001_c1s1_001051_00.jpg", (1, 1)),     # Market-1501
    ("-1_c3s2_000001_00.jpg", (-1, 3)),      # Market-1501 junk
    ("0000_c6s4_002252_03.jpg", (0, 6)),     # Market-1501 distractor
    ("0005_c2_f0046182.jpg", (5, 2)),        # DukeMTMC-reID
    ("0003_c1_22.png", (3, 1)),              # CUHK03-NP
    ("person7.jpg", None),
    ("1-2_c1s1_000001_00.jpg", None),        # matches the pattern, not an integer
])
def test_parse_person_camera(name, expected):
    assert parse_person_camera(name) == expected


def test_reads_gallery_queries_and_conventions(tmp_path):
    ds = read_reid(market(tmp_path))
    assert ds.gallery == tuple(n[:-4] for n in GALLERY)
    assert ds.gallery_labels.tolist() == [-1, 0, 1, 1, 1, 2, 2, 2]
    assert ds.global_ignored.tolist() == [0]
    assert [q.name for q in ds.queries] == [n[:-4] for n in QUERY[1:]]
    one, two, three = ds.queries
    assert one.meta == {"label": 1, "camera": 1} and one.self_index == -1
    assert one.group("same_camera").tolist() == [2]
    assert one.group("positive").tolist() == [3, 4]
    assert two.group("same_camera").tolist() == [5, 6] and two.group("positive").tolist() == [7]
    assert len(three.group("positive")) == 0 and len(three.group("same_camera")) == 0
    assert 1 not in np.concatenate([q.group("positive") for q in ds.queries])  # distractor
    assert [(s.name, s.reason) for s in ds.skipped_queries] == [
        ("-1_c3s1_000001_00", "person id -1 (junk) cannot be a query")]
    assert ds.groups == ("positive", "same_camera") and ds.protocols == ("market1501",)
    assert ds.image_paths["0001_c2s1_000102_01"].name == "0001_c2s1_000102_01.jpg"
    assert ds.image_paths["0002_c1s1_000200_00"].parent.name == "query"
    assert ds.format == "reid" and ds.name == "market1501"


def test_duke_names_and_png(tmp_path):
    root = tmp_path / "DukeMTMC-reID"
    touch(root / "bounding_box_test", ["0005_c2_f0046182.jpg", "0005_c5_f0051341.jpg"])
    touch(root / "query", ["0005_c2_f0046170.jpg"])
    q = read_reid(root).queries[0]
    assert q.group("same_camera").tolist() == [0] and q.group("positive").tolist() == [1]
    root = tmp_path / "cuhk03-np" / "detected"
    touch(root / "bounding_box_test", ["0003_c1_21.png", "0003_c2_22.png"])
    touch(root / "query", ["0003_c1_20.png"])
    assert read_reid(root).queries[0].group("positive").tolist() == [1]


@pytest.mark.parametrize(("folder", "protocol"), [
    ("market1501", "market1501"),
    ("DukeMTMC-reID", "market1501"),
    ("CUHK03-NP", "cuhk03"),
    ("cuhk03_labeled", "cuhk03"),
    ("cuhk03-np/detected", "cuhk03"),  # CUHK03-NP: the parent names the set
    ("CUHK03-NP/labeled", "cuhk03"),
    ("cuhk03_runs/market1501", "market1501"),  # any other parent does not count
])
def test_protocol_by_folder_name(tmp_path, folder, protocol):
    assert default_protocol(tmp_path / folder) == protocol
    assert read_reid(market(tmp_path, folder)).protocols == (protocol,)


def test_sniff_and_registry(tmp_path):
    root = market(tmp_path)
    assert sniff_reid(root) and detect(root) is not None and detect(root).name == "reid"
    assert READER.name == "reid" and READER.priority == 10
    assert read_dataset(root, "reid").n_gallery == len(GALLERY)
    assert not sniff_reid(root / "query")
    assert not sniff_reid(root / "query" / QUERY[0])
    assert not sniff_reid(tmp_path / "nowhere")
    touch(tmp_path / "half" / "query", QUERY)
    assert not sniff_reid(tmp_path / "half")


def test_hand_checked_map_cmc_and_minp(tmp_path):
    ds = read_reid(market(tmp_path))
    scores = [
        # id 1, camera 1. Descending: 0 junk (removed), 1 distractor, 2 same camera
        # (removed), 4 positive, 5, 6, 7, 3 positive (negative cosine).
        # After removals: 1, 4, 5, 6, 7, 3 -> positives at 1-based ranks 2 and 6.
        [0.9, 0.8, 0.7, -0.3, 0.6, 0.5, -0.1, -0.2],
        # id 2, camera 1: 5, 6 same camera (removed), then 7, the only positive, first.
        [-0.5, 0.1, 0.2, 0.3, 0.4, 0.9, 0.8, 0.7],
        # id 3: no positive at all -> reported, left out of every mean.
        [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8],
    ]
    ev = scored(ds, scores, "market1501")
    ap = ev.per_query["AP"]
    assert ap[0] == pytest.approx((1 / 2 + 2 / 6) / 2)  # finite AP, torchreid
    assert ap[1] == pytest.approx(1.0)
    assert np.isnan(ap[2])
    assert ev.per_query["CMC@1"][:2].tolist() == [0.0, 1.0]
    assert ev.per_query["CMC@5"][:2].tolist() == [1.0, 1.0]
    assert ev.per_query["INP"][:2] == pytest.approx([2 / 6, 1 / 1])  # n_pos / last rank
    assert ev.summary["mAP"] == pytest.approx(((1 / 2 + 2 / 6) / 2 + 1) / 2)
    assert ev.summary["CMC@1"] == pytest.approx(0.5)
    assert ev.summary["mINP"] == pytest.approx((1 / 3 + 1) / 2)
    assert ev.summary["n_evaluated"] == 2 and ev.summary["n_skipped"] == 1
    assert ev.skipped()[0][0] == "0003_c2s1_000300_00"
    # CUHK03 single-gallery-shot CMC needs the gallery person ids; on this set it is
    # deterministic: the distractor (id 0, score 0.8) always precedes id 1's drawn image,
    # and id 2's only other-camera image (0.7) comes before every other identity.
    cuhk = scored(ds, scores, "cuhk03")
    assert cuhk.per_query["CMC@1"][:2].tolist() == [0.0, 1.0]
    assert cuhk.per_query["CMC@5"][:2].tolist() == [1.0, 1.0]
    assert cuhk.per_query["AP"][:2] == pytest.approx(ap[:2])


def _no_gallery(root: Path) -> None:
    touch(root / "query", ["0001_c1s1_000001_00.jpg"])


def _no_query(root: Path) -> None:
    touch(root / "bounding_box_test", ["0001_c1s1_000001_00.jpg"])


def _bad_names(root: Path) -> None:
    touch(root / "query", ["0001_c1s1_000001_00.jpg"])
    touch(root / "bounding_box_test", ["person7.jpg", "x.jpg", "1-2_c1s1_000001_00.jpg",
                                       "12_c1s1_000001_00.jpg", "0001_c2s1_000001_00.png"])


def _empty_query(root: Path) -> None:
    touch(root / "query", ["readme.txt"])
    touch(root / "bounding_box_test", ["0001_c1s1_000001_00.jpg"])


def _only_junk_queries(root: Path) -> None:
    touch(root / "query", ["-1_c1s1_000001_00.jpg", "-1_c2s1_000001_00.jpg"])
    touch(root / "bounding_box_test", ["0001_c1s1_000001_00.jpg"])


def _one_junk_query(root: Path) -> None:
    touch(root / "query", ["-1_c1s1_000001_00.jpg"])
    touch(root / "bounding_box_test", ["0001_c1s1_000001_00.jpg"])


def _two_extensions(root: Path) -> None:
    touch(root / "query", ["0001_c1s1_000001_00.jpg"])
    touch(root / "bounding_box_test", ["0001_c2s1_000001_00.jpg", "0001_c2s1_000001_00.png"])


BAD = [
    (_no_gallery, "market: the folder bounding_box_test/ is missing; a re-identification set "
                  "needs query/ and bounding_box_test/"),
    (_no_query, "market: the folder query/ is missing; a re-identification set needs query/ "
                "and bounding_box_test/"),
    (_bad_names, "market/bounding_box_test/: 3 file names do not carry a person id and camera "
                 "(PPPP_cC...), e.g. 1-2_c1s1_000001_00.jpg, person7.jpg, x.jpg; Market-1501 "
                 "names look like 0001_c1s1_001051_00.jpg, DukeMTMC-reID like "
                 "0001_c2_f0046182.jpg"),
    (_empty_query, "market/query: holds no image (.jpg, .jpeg, .png, .ppm, .pgm, .bmp, .tif, "
                   ".tiff, .webp)"),
    (_only_junk_queries, "market: all 2 queries have person id -1 (junk), so nothing is left "
                         "to evaluate"),
    (_one_junk_query, "market: the only query has person id -1 (junk), so nothing is left to "
                      "evaluate"),
    (_two_extensions, "market/bounding_box_test/: 1 image name appears twice, e.g. "
                      "0001_c2s1_000001_00.jpg and 0001_c2s1_000001_00.png; keep one file per "
                      "name"),
]


@pytest.mark.parametrize(("setup", "message"), BAD)
def test_malformed_folders_give_one_sentence(tmp_path, setup, message):
    root = tmp_path / "market"
    root.mkdir()
    setup(root)
    with pytest.raises(InputError, match=re.escape(message)):
        read_reid(root)


def test_not_a_folder(tmp_path):
    path = tmp_path / "market.zip"
    path.write_bytes(b"PK")
    with pytest.raises(InputError, match=re.escape(
            "market.zip: not a folder; a re-identification set is a folder with query/ and "
            "bounding_box_test/")):
        read_reid(path)
    assert not sniff_reid(path)


def test_unreadable_folder(tmp_path, monkeypatch):
    root = market(tmp_path)
    gallery = root / "bounding_box_test"
    real_scandir = os.scandir

    def scandir(path):
        if Path(path) == gallery:
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(InputError, match=re.escape(
            f"{gallery}: cannot list the bounding_box_test folder (Permission denied)")):
        read_reid(root)

