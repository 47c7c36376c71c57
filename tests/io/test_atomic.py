"""Atomic writes: all or nothing, permissions as for any new file (the umask) or as the
replaced file's (mode, owner, group), a symbolic link written through, the data flushed to
the disk before the rename and the folder after, and a sentence for a folder that is not
there or cannot be written."""

from __future__ import annotations

import errno
import os
import re
import stat

import pytest

from irviewer.core.errors import InputError
from irviewer.io.atomic import atomic_open, atomic_path, atomic_write_bytes, atomic_write_text


def test_replaces_the_file_only_when_the_block_succeeds(tmp_path):
    target = tmp_path / "r.json"
    atomic_write_text(target, "old")
    with pytest.raises(RuntimeError), atomic_open(target) as stream:
        stream.write("half")
        raise RuntimeError("crash mid-write")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary left over
    atomic_write_text(target, "new")
    assert target.read_text() == "new"


def test_missing_folder_is_one_sentence(tmp_path):
    with pytest.raises(InputError, match=re.escape(f"the folder {tmp_path / 'nope'} does not "
                                                   "exist")):
        atomic_write_text(tmp_path / "nope" / "r.json", "x")


# -- permissions: a new file follows the umask, a replaced file keeps its mode -------------

@pytest.fixture
def umask():
    """Set the process's umask for one test (restored after)."""
    saved = os.umask(0o022)
    os.umask(saved)

    def set_to(mask: int) -> None:
        os.umask(mask)

    yield set_to
    os.umask(saved)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


WRITERS = {
    "text": lambda p: atomic_write_text(p, "x"),
    "bytes": lambda p: atomic_write_bytes(p, b"x"),
    "path": lambda p: path_writer(p, b"x"),
}


def path_writer(target, data: bytes) -> None:
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)  # as QImage.save(str(tmp)) writes


@pytest.mark.skipif(os.name == "nt", reason="POSIX permissions")
@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o027, 0o640),
                                                (0o002, 0o664), (0o077, 0o600)])
def test_a_new_file_follows_the_umask(tmp_path, umask, writer, mask, expected):
    umask(mask)
    WRITERS[writer](tmp_path / "new.csv")
    assert mode(tmp_path / "new.csv") == expected


@pytest.mark.skipif(os.name == "nt", reason="POSIX permissions")
@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("kept", [0o640, 0o664, 0o600, 0o755])
def test_a_replaced_file_keeps_its_mode(tmp_path, umask, writer, kept):
    umask(0o022)
    target = tmp_path / "gt.csv"
    target.write_text("old")
    os.chmod(target, kept)
    WRITERS[writer](target)
    assert target.read_bytes() == b"x"
    assert mode(target) == kept


@pytest.mark.skipif(os.name == "nt", reason="POSIX owners")
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="only the superuser can give a file to another owner")
@pytest.mark.parametrize("writer", WRITERS)
def test_a_replaced_file_keeps_its_owner_and_group(tmp_path, writer):
    target = tmp_path / "gt.csv"
    target.write_text("old")
    os.chown(target, 4321, 4322)
    WRITERS[writer](target)
    assert target.read_bytes() == b"x"
    assert (os.stat(target).st_uid, os.stat(target).st_gid) == (4321, 4322)


@pytest.mark.skipif(os.name == "nt", reason="POSIX symbolic links")
@pytest.mark.parametrize("writer", WRITERS)
def test_a_symbolic_link_stays_a_link_and_its_target_is_written(tmp_path, umask, writer):
    umask(0o022)
    (tmp_path / "data").mkdir()
    real = tmp_path / "data" / "gt.csv"
    real.write_text("old")
    os.chmod(real, 0o640)
    link = tmp_path / "gt.csv"
    link.symlink_to(real)
    chain = tmp_path / "again.csv"
    chain.symlink_to(link)  # a link to a link
    WRITERS[writer](chain)
    assert link.is_symlink() and chain.is_symlink()
    assert os.readlink(chain) == str(link) and os.readlink(link) == str(real)
    assert real.read_bytes() == b"x" and mode(real) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.csv", "data", "gt.csv"]
    assert [p.name for p in (tmp_path / "data").iterdir()] == ["gt.csv"]  # no temporary


@pytest.mark.skipif(os.name == "nt", reason="POSIX symbolic links")
def test_a_dangling_link_gets_its_target_written(tmp_path):
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "elsewhere.json")
    atomic_write_text(link, "x")
    assert link.is_symlink() and (tmp_path / "elsewhere.json").read_text() == "x"


# -- flushed to the disk: the data before the rename, the folder after it --------------------

@pytest.mark.parametrize("writer", WRITERS)
def test_data_flushed_before_the_rename_and_the_folder_after(tmp_path, monkeypatch, writer):
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        info = os.fstat(fd)
        kind = "folder" if stat.S_ISDIR(info.st_mode) else "file"
        events.append((f"fsync {kind}", info.st_size if kind == "file" else None))
        real_fsync(fd)

    def replace(src, dst):
        events.append(("replace", os.path.basename(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    WRITERS[writer](tmp_path / "s.irv")
    assert events == [("fsync file", 1), ("replace", "s.irv"), ("fsync folder", None)]


@pytest.mark.parametrize("writer", WRITERS)
def test_a_crash_before_the_rename_keeps_the_old_content(tmp_path, monkeypatch, writer):
    # the process dies (here: an interrupt) after the data are written and flushed but
    # before the rename: the user's file is untouched and no temporary file is left
    target = tmp_path / "corrections.csv"
    target.write_text("the user's corrections")

    def killed(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        WRITERS[writer](target)
    assert target.read_text() == "the user's corrections"
    assert [p.name for p in tmp_path.iterdir()] == ["corrections.csv"]


def test_a_failed_flush_is_one_sentence_and_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "r.json"
    target.write_text("old")

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(InputError, match=re.escape(
            f"{target}: cannot write there ({os.strerror(errno.ENOSPC)}); the file is "
            "unchanged")):
        atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_a_path_writer_that_fails_leaves_nothing(tmp_path):
    target = tmp_path / "fig.png"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and tmp.exists()  # beside the target, so a rename
        raise RuntimeError("QImage.save returned False")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.name == "nt" or os.geteuid() == 0,
                    reason="POSIX permissions (root ignores them)")
def test_a_folder_that_cannot_be_written_is_one_sentence(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(InputError, match=re.escape(f"{folder / 'r.json'}: cannot write "
                                                       "there (Permission denied)")):
            atomic_write_text(folder / "r.json", "x")
    finally:
        folder.chmod(0o755)
