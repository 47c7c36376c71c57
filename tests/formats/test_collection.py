"""The collection folder's format: its record, sniffing, and the sentences of a collection
that cannot be scored (the folder written by ``irviewer index``: tests/opening/test_indexing.py)."""

from __future__ import annotations

import pytest

from irviewer.core.errors import InputError
from irviewer.formats.collection import (
    CollectionRecord,
    IndexedPhoto,
    SkippedPhoto,
    is_collection,
    nothing_to_score,
    read_record,
    write_record,
)
from irviewer.formats.registry import detect


def record() -> CollectionRecord:
    return CollectionRecord(
        photos_folder="../photos", photos_folder_was="/museum/photos", layout="folders",
        extractor="demo-vlad", extractor_state="vocabulary.npz", learned_from=2,
        titles="../titles.csv", created="2026-01-01T00:00:00+00:00",
        updated="2026-01-02T00:00:00+00:00", irviewer_version="0.1.0", artworks=1,
        photos=(IndexedPhoto("mona/1.jpg", "mona", "mona:1", 10, 20),
                IndexedPhoto("mona/2.jpg", "mona", "mona:2", 11, 21)),
        skipped=(SkippedPhoto("x.jpg", "x.jpg: the file is empty"),), described=2, reused=0,
        elapsed_s=1.5)


def test_the_record_round_trips_with_counts_first_and_photos_last(tmp_path):
    write_record(tmp_path, record())
    text = (tmp_path / "collection.json").read_text()
    assert text.index('"counts"') < text.index('"skipped"') < text.index('"photos": [')
    assert '"artworks": 1,\n  "photos": 2,\n  "skipped": 1' in text
    assert read_record(tmp_path) == record()


def test_a_damaged_record_is_one_sentence(tmp_path):
    (tmp_path / "collection.json").write_text('{"photos_folder": "x"}')
    with pytest.raises(InputError, match=f"{tmp_path.name}/collection.json: not a collection "
                                         "record irviewer wrote"):
        read_record(tmp_path)


def test_a_later_irviewers_additions_are_passed_over_and_a_newer_layout_is_named(tmp_path):
    import json

    write_record(tmp_path, record())
    data = json.loads((tmp_path / "collection.json").read_text())
    data["frames"] = [["a", "b"]]  # a field this irviewer does not know
    data["photos"][0]["phash"] = "f0f0"
    data["skipped"][0]["when"] = "2027-01-01"
    (tmp_path / "collection.json").write_text(json.dumps(data))
    assert read_record(tmp_path) == record()
    data["layout_version"] = 2
    (tmp_path / "collection.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"collection.json: made by a newer irviewer "
                                         r"\(collection layout 2; this irviewer .* reads "
                                         r"layout 1\): update irviewer, or index the photos"):
        read_record(tmp_path)


def test_a_collection_is_a_folder_with_its_record_and_manifest(tmp_path):
    assert not is_collection(tmp_path)
    write_record(tmp_path, record())
    assert not is_collection(tmp_path)
    (tmp_path / "collection.csv").write_text("image,instance,role\n")
    assert is_collection(tmp_path)
    assert detect(tmp_path).name == "collection"
    assert not is_collection(tmp_path / "collection.csv")


def test_nothing_to_score_says_why_and_what_to_do():
    from irviewer.core.dataset import Dataset

    ds = Dataset(name="ours", format="collection", path=None, gallery=("a",), queries=(),
                 groups=("positive",), protocols=("instance",))
    assert nothing_to_score(ds) == (
        "ours: every artwork has one photo, so no photo has another view of its artwork to be "
        "found and there is nothing to score; to score the collection, give some artworks two "
        "or more photos (one subfolder per artwork) and index it again")
