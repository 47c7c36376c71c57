"""The reviewed file: checked suspects round-trip, sit beside the corrections file, and bad
files are one sentence."""

from __future__ import annotations

import pytest

from irviewer.core.errors import InputError
from irviewer.formats.corrections_file import corrections_place
from irviewer.formats.reviewed_file import (
    CHECKED,
    Reviewed,
    read_reviewed,
    reviewed_path,
    write_reviewed,
)


def test_round_trip(tmp_path):
    records = (Reviewed("negative_looks_positive", "q1", "img, with comma", "negative",
                        "ana", "2026-11-23T15:00:00Z"),
               Reviewed("label_disagreement", "", "images/ü", "L001", "", "", "note \"x\""))
    path = tmp_path / "set.reviewed.csv"
    write_reviewed(path, records)
    assert read_reviewed(path) == records
    assert records[0].note == CHECKED
    assert path.read_text(encoding="utf-8").splitlines()[0] == (
        "kind,query,item,label,author,time,note")


def test_missing_file_is_empty_and_optional_columns(tmp_path):
    assert read_reviewed(tmp_path / "none.csv") == ()
    path = tmp_path / "r.csv"
    path.write_text("item,kind,query\nx,hub,\n", encoding="utf-8")
    assert read_reviewed(path) == (Reviewed("hub", "", "x", "", "", "", ""),)


def beside_the_corrections(dataset_path):
    """Where the window keeps a dataset's reviewed file: beside its corrections file."""
    return reviewed_path(corrections_place(dataset_path).path)


def test_paths_follow_the_corrections_file(tmp_path):
    assert beside_the_corrections(tmp_path / "demo.csv") == tmp_path / "demo.reviewed.csv"
    folder = tmp_path / "market1501"
    folder.mkdir()
    assert beside_the_corrections(folder) == tmp_path / "market1501.reviewed.csv"
    assert reviewed_path(tmp_path / "x.corrections.csv") == tmp_path / "x.reviewed.csv"
    assert reviewed_path(tmp_path / "mine.csv") == tmp_path / "mine.reviewed.csv"


@pytest.mark.parametrize("content, message", [
    (b"query,item\nq,i\n", "lacks column(s) kind"),
    (b"kind,query,item\nhub,,\n", "line 2: the item field is empty"),
    (b"kind,query,item\nhub\n", "line 2: 1 fields"),
    (b"kind,query,item\n\0\n", "binary data"),
    (b"kind,query,item\n\xff\xfe,,\n", "line 2: not UTF-8"),
])
def test_bad_files_are_one_sentence(tmp_path, content, message):
    path = tmp_path / "bad.reviewed.csv"
    path.write_bytes(content)
    with pytest.raises(InputError, match=r"bad\.reviewed\.csv") as e:
        read_reviewed(path)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_read_only_dataset_keeps_its_reviewed_file_beside_its_kept_corrections(
        tmp_path, monkeypatch, user_data):
    from irviewer.io import user_data as folders

    monkeypatch.setattr(folders, "can_write_in", lambda folder: folder != tmp_path)
    path = beside_the_corrections(tmp_path / "demo.csv")
    assert path.parent == user_data / "corrections" and path.name.endswith(".reviewed.csv")
    write_reviewed(path, [Reviewed("hub", "", "x")])  # its folder is made on first write
    assert read_reviewed(path) == (Reviewed("hub", "", "x"),)
