"""Where the window keeps sessions: the autosave file, the recent-files list."""

from __future__ import annotations

from pathlib import Path

import pytest

from irviewer.gui.sessions.places import autosave_path, recent_files_update


def test_autosave_path_is_beside_the_session(tmp_path):
    assert autosave_path(tmp_path / "name.irv") == tmp_path / "name.irv~autosave"
    assert autosave_path(Path("a/b.irv")) == Path("a/b.irv~autosave")


def test_recent_files_most_recent_first_and_deduplicated(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a, b, c = (str(tmp_path / n) for n in ("a.irv", "b.irv", "c.irv"))
    assert recent_files_update([], a) == [a]
    assert recent_files_update([a, b, c], c) == [c, a, b]
    assert recent_files_update([a, b, c], "b.irv") == ["b.irv", a, c]
    assert recent_files_update([a, b], str(tmp_path / "x" / ".." / "a.irv"))[1:] == [b]
    assert recent_files_update([a, a, b], c) == [c, a, b]


def test_recent_files_limit_and_input_unchanged(tmp_path):
    recent = [str(tmp_path / f"{i}.irv") for i in range(10)]
    copy = list(recent)
    new = str(tmp_path / "new.irv")
    out = recent_files_update(recent, new)
    assert out == [new, *recent[:9]]
    assert recent == copy
    assert recent_files_update(recent, new, limit=3) == [new, *recent[:2]]
    assert recent_files_update(recent, new, limit=0) == []


def test_recent_files_follow_symlinks(tmp_path):
    real = tmp_path / "real.irv"
    real.write_text("{}")
    link = tmp_path / "link.irv"
    try:
        link.symlink_to(real)
    except OSError:
        pytest.skip("symlinks not available")
    assert recent_files_update([str(real)], str(link)) == [str(link)]
