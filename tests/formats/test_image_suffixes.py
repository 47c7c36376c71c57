"""One list of image extensions for every path that takes images: a ``.webp`` (or ``.pgm``)
photo is an image for the readers that list image folders, for the descriptor files' name
matching, for dropped files and for the photo search alike (it was accepted by one path and
refused by another)."""

from __future__ import annotations

from pathlib import Path

import pytest

from irviewer.core.descriptors import name_key
from irviewer.core.image_names import IMAGE_SUFFIXES
from irviewer.formats.base import ReadOptions, list_images
from irviewer.formats.holidays import read_holidays
from irviewer.formats.instance_names import read_instance_names
from irviewer.formats.oxford import read_oxford
from irviewer.formats.reid import read_reid
from irviewer.opening.request import classify_paths
from tests.formats.test_oxford import NAMES, write_gt

#: The extensions one path or another used to leave out.
ONCE_REFUSED = (".webp", ".pgm", ".tiff", ".bmp")


def touch(folder: Path, names: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        (folder / n).write_bytes(b"")


@pytest.mark.parametrize("suffix", [*IMAGE_SUFFIXES, *(s.upper() for s in IMAGE_SUFFIXES)])
def test_every_suffix_is_an_image_name_a_listed_file_and_a_dropped_photo(tmp_path, suffix):
    assert name_key(f"images/a{suffix}") == "a"
    touch(tmp_path, [f"a{suffix}", "notes.txt"])
    assert list_images(tmp_path) == [tmp_path / f"a{suffix}"]
    assert classify_paths([tmp_path / f"a{suffix}"]).images == (tmp_path / f"a{suffix}",)


@pytest.mark.parametrize("suffix", ONCE_REFUSED)
def test_oxford_image_folder_lists_every_image_suffix(tmp_path, suffix):
    touch(tmp_path / "jpg", [f"{n}{suffix}" for n in NAMES])
    ds = read_oxford(write_gt(tmp_path / "gt"), ReadOptions(images=tmp_path / "jpg"))
    assert ds.gallery == tuple(NAMES)
    with_extension = read_oxford(write_gt(tmp_path / "gt"),
                                 ReadOptions(gallery_names=tuple(f"{n}{suffix}" for n in NAMES)))
    assert with_extension.gallery == tuple(NAMES)  # the names' extensions are dropped


@pytest.mark.parametrize("suffix", ONCE_REFUSED)
def test_reid_folders_list_every_image_suffix(tmp_path, suffix):
    root = tmp_path / "market1501"
    touch(root / "bounding_box_test", [f"0001_c2s1_000102_01{suffix}", f"0002_c1s1_2{suffix}"])
    touch(root / "query", [f"0001_c1s1_000100_00{suffix}"])
    ds = read_reid(root)
    assert ds.gallery == ("0001_c2s1_000102_01", "0002_c1s1_2")
    assert ds.queries[0].group("positive").tolist() == [0]


@pytest.mark.parametrize("suffix", ONCE_REFUSED)
def test_holidays_folder_reads_every_image_suffix(tmp_path, suffix):
    touch(tmp_path / "holidays", [f"{n}{suffix}" for n in ("100000", "100001", "100100")])
    ds = read_holidays(tmp_path / "holidays")
    assert ds.gallery == ("100000", "100001", "100100")
    assert [q.name for q in ds.queries] == ["100000", "100100"]


@pytest.mark.parametrize("suffix", ONCE_REFUSED)
def test_instance_folders_list_every_image_suffix(tmp_path, suffix):
    touch(tmp_path / "gallery", [f"tower-1{suffix}", f"tower-2{suffix}", f"bridge-1{suffix}"])
    touch(tmp_path / "query", [f"tower-q{suffix}"])
    ds = read_instance_names(tmp_path, ReadOptions())
    assert ds.gallery == ("gallery/bridge-1", "gallery/tower-1", "gallery/tower-2")
    assert [q.name for q in ds.queries] == ["query/tower-q"]
