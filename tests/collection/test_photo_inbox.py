"""A kiosk's watched folder: photos there before the watch are never answered, a new photo
is answered once and only when it is whole, a rewritten one again, other files never."""

from __future__ import annotations

import os

from irviewer.collection.photo_inbox import PhotoInbox
from tests.collection_photos import artwork_image


def write(path, seed=0, mtime_ns=None):
    artwork_image(seed).save(path)
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))


def test_old_photos_are_not_answered_and_a_new_one_once_when_whole(tmp_path):
    write(tmp_path / "old.jpg")
    inbox = PhotoInbox(tmp_path)
    assert inbox.look() == []
    (tmp_path / "visitor.jpg").write_bytes(b"\xff\xd8")  # being copied in
    assert inbox.look() == []  # seen once: not known to be whole yet
    write(tmp_path / "visitor.jpg", seed=3)  # it grew: still not
    assert inbox.look() == []
    assert inbox.look() == [tmp_path / "visitor.jpg"]  # the same twice: whole
    assert inbox.look() == []  # answered once


def test_a_rewritten_photo_arrives_again_and_other_files_never(tmp_path):
    inbox = PhotoInbox(tmp_path)
    write(tmp_path / "latest.jpg", 1, mtime_ns=1_000_000_000_000)
    (tmp_path / "notes.txt").write_text("not a photo")
    (tmp_path / ".hidden.jpg").write_bytes(b"x")
    (tmp_path / "empty.jpg").write_bytes(b"")
    inbox.look()
    assert inbox.look() == [tmp_path / "latest.jpg"]
    write(tmp_path / "latest.jpg", 2, mtime_ns=2_000_000_000_000)
    write(tmp_path / "b.jpg", 3, mtime_ns=1_500_000_000_000)
    inbox.look()
    assert inbox.look() == [tmp_path / "b.jpg", tmp_path / "latest.jpg"]  # oldest first


def test_a_missing_folder_is_no_error(tmp_path):
    inbox = PhotoInbox(tmp_path / "not yet")
    assert inbox.look() == []
    (tmp_path / "not yet").mkdir()
    write(tmp_path / "not yet" / "a.jpg")
    inbox.look()
    assert inbox.look() == [tmp_path / "not yet" / "a.jpg"]
