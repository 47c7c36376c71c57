"""The user's data folder: platformdirs' rule, a name per dataset that is found again, and
whether a dataset's folder can be written (a real check and the one the others patch)."""

from __future__ import annotations

import os
import sys

import pytest

from irviewer.io import user_data as folders


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG rule is Linux's")
def test_the_folder_is_platformdirs_user_data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    assert folders.user_data_folder() == tmp_path / "share" / "irviewer"
    assert not (tmp_path / "share").exists()  # only a subfolder in use is created
    assert folders.user_subfolder("sessions") == tmp_path / "share" / "irviewer" / "sessions"
    assert (tmp_path / "share" / "irviewer" / "sessions").is_dir()


def test_kept_name_is_readable_and_the_same_for_the_same_dataset(tmp_path, monkeypatch):
    one, other = tmp_path / "a" / "demo.csv", tmp_path / "b" / "demo.csv"
    for p in (one, other):
        p.parent.mkdir()
        p.write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    name = folders.kept_name(one, "demo", ".corrections.csv")
    assert name.startswith("demo-") and name.endswith(".corrections.csv")
    assert len(name) == len("demo-") + 12 + len(".corrections.csv")
    assert folders.kept_name(other, "demo", ".corrections.csv") != name
    # the same dataset by another path (a link, a relative path) has the same name
    assert folders.kept_name(tmp_path / "link" / "demo.csv", "demo", ".corrections.csv") \
        == name
    monkeypatch.chdir(tmp_path / "a")
    assert folders.kept_name(one.relative_to(tmp_path / "a"), "demo", ".corrections.csv") \
        == name


def test_room_is_made_only_in_the_user_data_folder(tmp_path, user_data):
    inside = user_data / "corrections" / "x.csv"
    folders.make_room_for(inside)
    assert inside.parent.is_dir()
    elsewhere = tmp_path / "not" / "mine.csv"
    folders.make_room_for(elsewhere)
    assert not elsewhere.parent.exists()


def test_can_write_in(tmp_path):
    assert folders.can_write_in(tmp_path)
    assert not folders.can_write_in(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    assert not folders.can_write_in(tmp_path / "file")


@pytest.mark.skipif(os.name == "nt" or os.geteuid() == 0,
                    reason="POSIX permissions (root may write in any folder)")
def test_a_read_only_folder_cannot_be_written_in(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        assert not folders.can_write_in(folder)
    finally:
        folder.chmod(0o755)


def test_adopt_files_moves_what_the_new_folder_lacks_and_overwrites_nothing(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    (old / "a.irv").write_text("old a")
    (old / "b.irv").write_text("old b")
    new.mkdir()
    (new / "b.irv").write_text("new b")
    moved = folders.adopt_files(old, new)
    assert moved == [new / "a.irv"]
    assert (new / "a.irv").read_text() == "old a" and (new / "b.irv").read_text() == "new b"
    assert (old / "b.irv").read_text() == "old b"  # kept, not lost
    (old / "b.irv").unlink()
    assert folders.adopt_files(old, new) == [] and not old.exists()  # empty: removed


def test_adopt_files_does_nothing_without_an_old_folder_or_into_itself(tmp_path):
    assert folders.adopt_files(tmp_path / "missing", tmp_path / "new") == []
    assert not (tmp_path / "new").exists()
    (tmp_path / "x.irv").write_text("x")
    assert folders.adopt_files(tmp_path, tmp_path) == []
    assert (tmp_path / "x.irv").is_file()
