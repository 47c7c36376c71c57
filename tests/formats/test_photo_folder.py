"""Listing a curator's photo folder: both layouts and their mix, what is passed over, unique
names, and one sentence for a folder that cannot be used."""

from __future__ import annotations

import os

import pytest

from irviewer.core.descriptors import name_key
from irviewer.core.errors import InputError
from irviewer.formats.photo_folder import FLAT, FOLDERS, MIXED, list_photo_folder, photo_suffixes
from tests.collection_photos import artwork_image


def photo(path, seed=0):
    path.parent.mkdir(parents=True, exist_ok=True)
    artwork_image(seed, (40, 30)).save(path)
    return path


def test_flat_folder_one_artwork_per_photo_id_is_the_stem(tmp_path):
    photo(tmp_path / "mona-lisa.jpg")
    photo(tmp_path / "the wave.PNG")
    photo(tmp_path / "swing.tiff")
    found = list_photo_folder(tmp_path)
    assert found.layout == FLAT
    assert [(p.artwork, p.relative, p.name) for p in found.photos] == [
        ("mona-lisa", "mona-lisa.jpg", "mona-lisa"), ("swing", "swing.tiff", "swing"),
        ("the wave", "the wave.PNG", "the wave")]
    stat = (tmp_path / "swing.tiff").stat()
    assert (found.photos[1].size, found.photos[1].mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    assert found.artworks == ("mona-lisa", "swing", "the wave")


def test_folder_of_subfolders_each_subfolder_one_artwork_at_any_depth(tmp_path):
    photo(tmp_path / "mona" / "IMG_1.jpg")
    photo(tmp_path / "mona" / "IMG_2.jpg")
    photo(tmp_path / "wave" / "IMG_1.jpg")
    photo(tmp_path / "wave" / "details" / "IMG_1.jpg")
    found = list_photo_folder(tmp_path)
    assert found.layout == FOLDERS
    assert [(p.artwork, p.name) for p in found.photos] == [
        ("mona", "mona:IMG_1"), ("mona", "mona:IMG_2"), ("wave", "wave:IMG_1"),
        ("wave", "wave:details:IMG_1")]
    assert found.photos[3].relative == "wave/details/IMG_1.jpg"
    # descriptor rows are matched by name without folders: every name keeps its own key
    assert len({name_key(p.name) for p in found.photos}) == 4


def test_mixed_layout_and_a_file_beside_a_folder_of_the_same_artwork(tmp_path):
    photo(tmp_path / "mona.jpg")
    photo(tmp_path / "mona" / "side.jpg")
    photo(tmp_path / "wave.jpg")
    found = list_photo_folder(tmp_path)
    assert found.layout == MIXED
    assert [(p.artwork, p.name) for p in found.photos] == [
        ("mona", "mona:side"), ("mona", "mona"), ("wave", "wave")]


def test_hidden_files_non_images_and_clutter_are_passed_over(tmp_path):
    photo(tmp_path / "a.jpg")
    photo(tmp_path / ".hidden.jpg")
    photo(tmp_path / ".thumbnails" / "x.jpg")
    photo(tmp_path / "__MACOSX" / "a.jpg")
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "Thumbs.db").write_bytes(b"\0")
    found = list_photo_folder(tmp_path)
    assert [p.relative for p in found.photos] == ["a.jpg"]
    assert found.notes == ()


def test_photo_types_pillow_cannot_read_and_empty_subfolders_are_named(tmp_path):
    photo(tmp_path / "a.jpg")
    (tmp_path / "phone.HEIC").write_bytes(b"ftypheic")
    (tmp_path / "empty").mkdir()
    notes = list_photo_folder(tmp_path).notes
    assert notes == ("1 photo of a type Pillow cannot read was passed over, e.g. phone.HEIC; "
                     "save it as JPEG to index them",
                     "1 subfolder holds no photo and is not an artwork: empty")


def test_two_photos_with_one_stem_are_views_of_one_artwork_with_unique_names(tmp_path):
    photo(tmp_path / "a.jpg")
    photo(tmp_path / "a.png", 1)
    found = list_photo_folder(tmp_path)
    assert [(p.artwork, p.name) for p in found.photos] == [("a", "a"), ("a", "a~2")]
    assert "shared by photos of different types, e.g. a" in found.notes[0]


def test_the_collection_folder_inside_the_photos_is_skipped(tmp_path):
    photo(tmp_path / "a.jpg")
    photo(tmp_path / "coll" / "stray.jpg")
    assert [p.relative for p in list_photo_folder(tmp_path, skip=tmp_path / "coll").photos] \
        == ["a.jpg"]


def test_every_suffix_is_one_pillow_opens_and_the_usual_ones_are_there():
    suffixes = photo_suffixes()
    assert {".jpg", ".jpeg", ".png", ".tif", ".tiff", ".webp", ".bmp", ".gif"} <= suffixes
    assert ".h5" not in suffixes and ".pdf" not in suffixes


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "nope", "nope: no such folder; give the folder that holds the photos"),
    (lambda p: (p / "f.jpg").write_bytes(b"x") and p / "f.jpg", "f.jpg: is a file, not a folder"),
    (lambda p: p, "holds no photo irviewer reads"),
])
def test_unusable_folders_get_one_sentence(tmp_path, make, message):
    (tmp_path / "readme.txt").write_text("no photos here")
    with pytest.raises(InputError, match=message.replace(".", r"\.")):
        list_photo_folder(make(tmp_path))


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links here")
def test_a_linked_folder_is_not_followed(tmp_path):
    photo(tmp_path / "photos" / "a.jpg")
    os.symlink(tmp_path / "photos", tmp_path / "photos" / "loop")
    assert [p.relative for p in list_photo_folder(tmp_path / "photos").photos] == ["a.jpg"]
