"""Atomic writes: all or nothing, and a sentence for a folder that is not there."""

from __future__ import annotations

import re

import pytest

from irviewer.core.atomic import atomic_open, atomic_write_text
from irviewer.core.errors import InputError


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
