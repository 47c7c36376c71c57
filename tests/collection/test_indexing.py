"""Indexing a folder of photos into a collection: both layouts, what is written, re-runs
that describe only what changed, bad photos, titles, learning, cancelling, and opening the
result with no descriptor file."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
from importlib.metadata import EntryPoint
from typing import ClassVar

import numpy as np
import pytest
from PIL import Image

from irviewer.collection import indexing
from irviewer.collection.describing import SERIAL, THREADS
from irviewer.collection.indexing import IndexRequest, iter_index
from irviewer.collection.photo_search import open_searcher
from irviewer.core.errors import InputError
from irviewer.extract import registry
from irviewer.formats.collection import (
    artworks_with_views,
    read_collection,
    read_record,
)
from irviewer.formats.descriptor_files import descriptor_extractor, descriptor_extractor_state
from irviewer.formats.registry import read_dataset
from irviewer.io.program import program_command
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest
from tests.collection_photos import artwork_image, flat_folder, folder_of_subfolders, index_now


class Thumb:
    """A plug-in extractor: the photo as 4 x 4 RGB values around mid-grey; counts calls."""

    name = "thumb"
    dim = 48
    calls: ClassVar[list[tuple[int, int]]] = []

    def __call__(self, image: Image.Image) -> np.ndarray:
        Thumb.calls.append(image.size)
        return np.asarray(image.convert("RGB").resize((4, 4)), np.float32).ravel() - 127.4


class Broken:
    name = "broken"
    dim = 3

    def __call__(self, image: Image.Image) -> np.ndarray:
        raise RuntimeError("out of cheese")


@pytest.fixture(autouse=True)
def plugins(monkeypatch):
    """The plug-ins, found by entry point; each test starts with a fresh registry."""
    found = [EntryPoint(name=n, value=f"{__name__}:{cls}", group=registry.GROUP)
             for n, cls in (("thumb", "Thumb"), ("broken", "Broken"))]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: found)
    monkeypatch.setattr(registry, "_loaded", {})
    monkeypatch.setattr(indexing, "LEARN_ROWS", 3000)  # a small vocabulary sample: fast
    Thumb.calls.clear()


def index(photos, out, **kw):
    kw.setdefault("mode", SERIAL)
    kw.setdefault("extractor", "thumb")
    return index_now(IndexRequest(photos, out, **kw))


def test_a_flat_folder_becomes_a_collection_of_one_photo_per_artwork(tmp_path):
    ids = flat_folder(tmp_path / "photos", 4)
    done = index(tmp_path / "photos", tmp_path / "coll")
    coll = tmp_path / "coll"
    assert sorted(os.listdir(coll)) == ["collection.csv", "collection.json", "descriptors.npz",
                                        "local_features.npz"]
    lines = (coll / "collection.csv").read_text().splitlines()
    assert lines[0] == "image,instance,role,name,title"
    assert lines[1] == "../photos/art00.jpg,art00,both,art00,art00"
    record = read_record(coll)
    assert (record.artworks, len(record.photos), record.described, record.reused) == (4, 4, 4, 0)
    assert record.photos_folder == "../photos" and record.layout == "flat"
    assert record.photos_folder_was == str((tmp_path / "photos").resolve())
    assert record.extractor == "thumb" and record.extractor_state is None
    assert descriptor_extractor(coll / "descriptors.npz") == "thumb"
    assert descriptor_extractor_state(coll / "descriptors.npz") is None
    assert done.summary().startswith("indexed 4 artworks, 4 photos in ")
    dataset = read_dataset(coll)
    assert dataset.format == "collection" and dataset.gallery == tuple(ids)
    assert dataset.n_queries == 4 and artworks_with_views(dataset) == 0
    assert dataset.image_paths["art02"] == (tmp_path / "photos" / "art02.jpg").resolve()


def test_subfolders_are_artworks_with_views_and_open_with_no_descriptor_file(tmp_path):
    folder_of_subfolders(tmp_path / "photos", {"mona": 3, "wave": 2, "swing": 1})
    index(tmp_path / "photos", tmp_path / "coll")
    opened = open_now(OpenRequest(tmp_path / "coll"))
    assert opened.first.path == tmp_path / "coll" / "descriptors.npz"
    ds = opened.dataset
    assert ds.gallery == ("mona:1", "mona:2", "mona:3", "swing:1", "wave:1", "wave:2")
    assert artworks_with_views(ds) == 2
    ev = opened.evaluations["instance"]
    # each view searches for the other views of its artwork, its own image removed;
    # swing's only photo has no other view: skipped when scoring, never dropped
    assert int(ev.summary["n_evaluated"]) == 5 and int(ev.summary["n_skipped"]) == 1
    assert ds.queries[0].group("positive").tolist() == [0, 1, 2]
    assert ds.queries[0].self_index == 0


def test_a_rerun_describes_only_new_and_changed_photos_and_drops_removed_ones(tmp_path):
    photos = tmp_path / "photos"
    flat_folder(photos, 5)
    index(photos, tmp_path / "coll")
    before = dict(np.load(tmp_path / "coll" / "descriptors.npz"))
    Thumb.calls.clear()
    artwork_image(50).save(photos / "new.jpg")
    artwork_image(51).save(photos / "art01.jpg")  # changed: other pixels, other size
    (photos / "art03.jpg").unlink()
    done = index(photos, tmp_path / "coll")
    assert len(Thumb.calls) == 2
    record = done.record
    assert (record.described, record.reused, len(record.photos)) == (2, 3, 5)
    assert [p.name for p in record.photos] == ["art00", "art01", "art02", "art04", "new"]
    after = np.load(tmp_path / "coll" / "descriptors.npz")
    old = dict(zip(before["names"].tolist(), before["features"], strict=True))
    new = dict(zip(after["names"].tolist(), after["features"], strict=True))
    assert np.array_equal(new["art00"], old["art00"]) and np.array_equal(new["art04"],
                                                                         old["art04"])
    assert not np.array_equal(new["art01"], old["art01"])
    assert "art03" not in new
    assert record.created == read_record(tmp_path / "coll").created


def test_another_extractor_describes_every_photo_again_and_drops_what_the_old_one_learnt(
        tmp_path):
    flat_folder(tmp_path / "photos", 3)
    index(tmp_path / "photos", tmp_path / "coll", extractor="demo-vlad")
    assert (tmp_path / "coll" / "vocabulary.npz").is_file()
    done = index(tmp_path / "photos", tmp_path / "coll")
    assert (done.record.described, done.record.reused) == (3, 0)
    assert not (tmp_path / "coll" / "vocabulary.npz").exists()
    # and with no extractor named, a re-run keeps the collection's own
    assert index(tmp_path / "photos", tmp_path / "coll", extractor=None).record.extractor \
        == "thumb"


def test_bad_photos_are_skipped_with_one_sentence_each_and_counted(tmp_path, monkeypatch):
    photos = tmp_path / "photos"
    flat_folder(photos, 2)
    (photos / "broken.jpg").write_bytes(b"GIF87a but not really")
    (photos / "empty.png").write_bytes(b"")
    (photos / "text.jpg").write_text("hello")
    artwork_image(9, (300, 300)).save(photos / "bomb.png")
    artwork_image(8).crop((0, 0, 120, 90)).save(photos / "cut.jpg")
    data = (photos / "cut.jpg").read_bytes()
    (photos / "cut.jpg").write_bytes(data[: len(data) // 2])
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 300 * 300 - 1)
    steps = list_steps(IndexRequest(photos, tmp_path / "coll", extractor="thumb", mode=SERIAL))
    problems = [s.problem for s in steps if s.problem]
    assert sorted(problems) == sorted([
        "bomb.png: declares more pixels than the decompression-bomb limit of 89,999 pixels; "
        "refusing to decode it (shrink the image if it is genuine)",
        "broken.jpg: is not a picture irviewer can read; save it as a JPEG "
        "or PNG",
        problems[[p.startswith("cut.jpg") for p in problems].index(True)],
        "empty.png: the file is empty",
        "text.jpg: is not a picture irviewer can read; save it as a JPEG "
        "or PNG"])
    assert any(p.startswith("cut.jpg: the file is damaged or cut short") for p in problems)
    record = read_record(tmp_path / "coll")
    assert len(record.photos) == 2 and len(record.skipped) == 5
    assert {s.file for s in record.skipped} == {"bomb.png", "broken.jpg", "cut.jpg",
                                                "empty.png", "text.jpg"}
    assert "5 photos skipped" in index(photos, tmp_path / "coll").summary()


def list_steps(request):
    steps, run = [], iter_index(request)
    while True:
        try:
            steps.append(next(run))
        except StopIteration as done:
            steps.append(done.value)
            return steps[:-1]


def test_nothing_indexable_is_an_error_and_writes_nothing(tmp_path):
    photos = tmp_path / "photos"
    photos.mkdir()
    (photos / "a.jpg").write_bytes(b"nope")
    (photos / "b.png").write_bytes(b"")
    with pytest.raises(InputError, match=r"none of its 2 photos could be indexed \(e\.g\. "):
        index(photos, tmp_path / "coll")
    assert not (tmp_path / "coll").exists() or not os.listdir(tmp_path / "coll")


def test_an_extractor_that_fails_skips_each_photo_with_its_error(tmp_path):
    flat_folder(tmp_path / "photos", 1)
    with pytest.raises(InputError, match="the extractor failed on it "
                                         r"\(RuntimeError: out of cheese\)"):
        index(tmp_path / "photos", tmp_path / "coll", extractor="broken")


@pytest.mark.parametrize("setup, message", [
    (lambda t: (t / "coll").write_text("x"), "coll: is a file; give a folder"),
    (lambda t: (t / "coll").mkdir() or (t / "coll" / "mine.txt").write_text("x"),
     "holds other files, not a collection; give a new or empty folder"),
])
def test_an_output_that_is_not_a_collection_is_refused(tmp_path, setup, message):
    flat_folder(tmp_path / "photos", 1)
    setup(tmp_path)
    with pytest.raises(InputError, match=message):
        index(tmp_path / "photos", tmp_path / "coll")


def test_the_photo_folder_itself_is_refused_but_a_folder_inside_it_works(tmp_path):
    flat_folder(tmp_path / "photos", 2)
    with pytest.raises(InputError, match="is the photo folder itself"):
        index(tmp_path / "photos", tmp_path / "photos")
    done = index(tmp_path / "photos", tmp_path / "photos" / "coll")
    assert len(done.record.photos) == 2 and done.record.photos_folder == ".."
    assert read_dataset(tmp_path / "photos" / "coll").n_gallery == 2


def test_an_unknown_extractor_names_the_installed_ones(tmp_path):
    flat_folder(tmp_path / "photos", 1)
    with pytest.raises(InputError, match="no extractor is called 'nope' "
                                         r"\(installed: broken, demo-vlad, thumb\)"):
        index(tmp_path / "photos", tmp_path / "coll", extractor="nope")


TITLES = """Artwork,Title,Artist,Year,Room
art00.jpg,The First,Ann,1601,2
art01,The Second,,1602,
ghost,A Ghost,Gus,1700,1
"""


def test_titles_become_title_artist_and_details_shown_by_search(tmp_path):
    flat_folder(tmp_path / "photos", 3)
    (tmp_path / "titles.csv").write_text(TITLES)
    done = index(tmp_path / "photos", tmp_path / "coll", titles=tmp_path / "titles.csv")
    assert done.lines == ("artwork art02 has no row in titles.csv: it is shown by its id",
                          "artwork ghost is listed in titles.csv but has no photo")
    ds = read_collection(tmp_path / "coll")
    assert ds.titles == {"art00": "The First — Ann", "art01": "The Second", "art02": "art02"}
    assert ds.details["art00"] == (("Year", "1601"), ("Room", "2"))
    assert ds.details_line("art01") == "Year 1602"
    photo = tmp_path / "visitor.png"
    Image.open(tmp_path / "photos" / "art00.jpg").save(photo)
    first = open_searcher(tmp_path / "coll").search(photo, 1)[0]
    assert (first.item, first.title, first.details) == (
        "art00", "The First — Ann", (("Year", "1601"), ("Room", "2")))
    # a re-run without --titles reads the same titles file again
    (tmp_path / "titles.csv").write_text(TITLES.replace("The First", "The Very First"))
    index(tmp_path / "photos", tmp_path / "coll")
    assert read_collection(tmp_path / "coll").titles["art00"] == "The Very First — Ann"


def test_a_malformed_titles_file_stops_before_anything_is_described(tmp_path):
    flat_folder(tmp_path / "photos", 2)
    (tmp_path / "titles.csv").write_text("id,title\nart00,a,b\n")
    with pytest.raises(InputError, match=r"titles\.csv, line 2: 3 fields"):
        index(tmp_path / "photos", tmp_path / "coll", titles=tmp_path / "titles.csv")
    assert Thumb.calls == []


def test_cancelling_leaves_the_collection_as_it_was(tmp_path):
    flat_folder(tmp_path / "photos", 3)
    index(tmp_path / "photos", tmp_path / "coll")
    before = {p.name: p.read_bytes() for p in (tmp_path / "coll").iterdir()}
    flat_folder(tmp_path / "photos", 9, first_seed=30)  # overwrites all, adds six
    run = iter_index(IndexRequest(tmp_path / "photos", tmp_path / "coll", extractor="thumb",
                                  mode=SERIAL))
    for step in run:
        if step.stage == "describing the photos" and step.done == 2:
            break
    run.close()
    assert {p.name: p.read_bytes() for p in (tmp_path / "coll").iterdir()} == before


def test_the_demo_extractor_learns_a_vocabulary_from_the_collection(tmp_path):
    photos = tmp_path / "photos"
    folder_of_subfolders(photos, {"mona": 2, "wave": 2, "swing": 2})
    done = index(photos, tmp_path / "coll", extractor=None, mode=THREADS, workers=2)
    record = done.record
    assert record.extractor == "demo-vlad" and record.extractor_state == "vocabulary.npz"
    assert record.learned_from == 6
    npz = tmp_path / "coll" / "descriptors.npz"
    assert descriptor_extractor_state(npz) == tmp_path / "coll" / "vocabulary.npz"
    with np.load(tmp_path / "coll" / "vocabulary.npz") as vocabulary:
        assert vocabulary["centres"].shape == (128, 32)
    searcher = open_searcher(tmp_path / "coll")
    assert searcher.extractor.vocabulary.centres.shape == (128, 32)
    # the photo itself is found first, and the other view of its artwork next
    matches = searcher.search(photos / "wave" / "1.jpg", 2)
    assert [m.item for m in matches] == ["wave:1", "wave:2"]
    # described as indexed (whole, as taken), the photo is its own row exactly
    whole = searcher.describe_views(photos / "wave" / "1.jpg")[0][0]
    assert searcher.rank(whole, 1)[0].score == pytest.approx(1.0, abs=1e-5)


def test_a_vocabulary_learnt_from_a_handful_of_photos_is_learnt_again_when_it_grows(tmp_path):
    photos = tmp_path / "photos"
    flat_folder(photos, 2)
    assert index(photos, tmp_path / "coll", extractor=None).record.learned_from == 2
    flat_folder(photos, 6)
    grown = index(photos, tmp_path / "coll", extractor=None).record
    assert (grown.learned_from, grown.described, grown.reused) == (6, 6, 0)
    for i in (6, 7):  # 6 learnt from is at least half of 8: kept
        artwork_image(i).save(photos / f"art{i:02d}.jpg")
    kept = index(photos, tmp_path / "coll", extractor=None).record
    assert (kept.learned_from, kept.described, kept.reused) == (6, 2, 6)


def test_worker_processes_describe_as_the_calling_process_does(tmp_path):
    flat_folder(tmp_path / "photos", 3)
    index(tmp_path / "photos", tmp_path / "serial", extractor="demo-vlad")
    index(tmp_path / "photos", tmp_path / "procs", extractor="demo-vlad", mode="processes",
          workers=2)
    a, b = (np.load(tmp_path / c / "descriptors.npz") for c in ("serial", "procs"))
    assert a["names"].tolist() == b["names"].tolist()
    np.testing.assert_allclose(a["features"], b["features"], atol=1e-5)


def test_a_collection_moved_alone_reads_its_photos_where_they_were(tmp_path):
    flat_folder(tmp_path / "photos", 2)
    index(tmp_path / "photos", tmp_path / "coll")
    (tmp_path / "deeper").mkdir()
    shutil.move(tmp_path / "coll", tmp_path / "deeper" / "elsewhere")
    ds = read_dataset(tmp_path / "deeper" / "elsewhere")
    assert ds.image_paths["art01"] == (tmp_path / "photos" / "art01.jpg").resolve()
    assert ds.notes[0].startswith("elsewhere: the collection was moved away from its photos")


def test_a_collection_moved_with_its_photos_keeps_working(tmp_path):
    flat_folder(tmp_path / "museum" / "photos", 2)
    index(tmp_path / "museum" / "photos", tmp_path / "museum" / "coll")
    shutil.move(tmp_path / "museum", tmp_path / "moved")
    ds = read_dataset(tmp_path / "moved" / "coll")
    assert ds.image_paths["art00"] == (tmp_path / "moved" / "photos" / "art00.jpg").resolve()
    assert ds.notes == ()


def test_a_missing_photo_folder_says_what_to_do(tmp_path):
    flat_folder(tmp_path / "photos", 2)
    index(tmp_path / "photos", tmp_path / "coll")
    shutil.move(tmp_path / "photos", tmp_path / "renamed")
    with pytest.raises(InputError) as raised:
        open_now(OpenRequest(tmp_path / "coll"))
    assert str(raised.value) == (
        f"coll: its photo folder is missing: it was ../photos beside the collection "
        f"({(tmp_path / 'photos').resolve()}); move the photos back there (move the "
        "collection and its photo folder together), or index them again where they are now: "
        f"{program_command()} index PHOTOS --out {tmp_path / 'coll'}")
    assert "File \u25b8 New collection from a folder" in raised.value.for_window()


def test_a_damaged_record_is_indexed_afresh_with_a_note(tmp_path):
    flat_folder(tmp_path / "photos", 2)
    index(tmp_path / "photos", tmp_path / "coll")
    (tmp_path / "coll" / "collection.json").write_text("{not json")
    done = index(tmp_path / "photos", tmp_path / "coll")
    assert done.record.described == 2
    assert done.lines[0].startswith("coll: the collection could not be read")
    assert json.loads((tmp_path / "coll" / "collection.json").read_text())["counts"][
        "photos"] == 2


def test_a_blank_photo_with_no_keypoint_is_indexed_with_empty_local_features(tmp_path):
    # A photo in which SIFT finds no keypoint has features of length 0: present, not
    # missing, so indexing must keep it (an empty table is falsy; None is what is missing).
    flat_folder(tmp_path / "photos", 3)
    Image.new("RGB", (400, 300), (128, 128, 128)).save(tmp_path / "photos" / "blank.jpg")
    done = index(tmp_path / "photos", tmp_path / "coll")
    record = read_record(tmp_path / "coll")
    assert len(record.photos) == 4 and record.described == 4
    assert done.summary().startswith("indexed 4 artworks, 4 photos in ")
