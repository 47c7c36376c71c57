"""Listing image folders (os.scandir, no stat per file) and the lazy name -> file mapping."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from irviewer.core.errors import InputError
from irviewer.core.image_names import IMAGE_SUFFIXES
from irviewer.formats.base import (
    ImageFiles,
    by_stem,
    list_image_names,
    list_images,
    stem,
    stems_of,
)


def pathlib_listing(folder: Path, suffixes: tuple[str, ...], recursive: bool) -> list[Path]:
    """The rule list_images follows, written with pathlib (a stat per file)."""
    found = folder.rglob("*") if recursive else folder.iterdir()
    return sorted(p for p in found if p.is_file() and p.suffix.lower() in suffixes)


def tree(tmp_path: Path) -> Path:
    root = tmp_path / "images"
    for rel in ("b.jpg", "a.JPG", "c.png", "notes.txt", ".jpg", "trailing.", "x.tar.jpg",
                "a/b.jpg", "a-b/c.jpg", "a/deeper/z.jpeg", "a0/y.jpg", "folder.jpg/inside.png"):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "linked.jpg").write_bytes(b"")
    os.symlink(outside, root / "link_dir")
    os.symlink(outside / "linked.jpg", root / "link_file.jpg")
    return root


@pytest.mark.parametrize("recursive", [False, True])
def test_listing_equals_the_pathlib_rule(tmp_path, recursive):
    root = tree(tmp_path)
    expected = pathlib_listing(root, IMAGE_SUFFIXES, recursive)
    assert list_images(root, IMAGE_SUFFIXES, recursive=recursive) == expected
    names = list_image_names(root, IMAGE_SUFFIXES, recursive=recursive)
    assert [root / n for n in names] == expected
    # Sorted part by part ("a/b.jpg" before "a-b/c.jpg"), not as whole strings.
    if recursive:
        assert names.index("a/b.jpg") < names.index("a-b/c.jpg")
        assert "link_dir/linked.jpg" not in names  # a linked folder is not entered
    assert "link_file.jpg" in names and ".jpg" not in names and "trailing." not in names


def test_listing_sentences(tmp_path):
    with pytest.raises(InputError, match="the image folder does not exist"):
        list_image_names(tmp_path / "nope", noun="image folder")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "a.txt").write_text("x")
    with pytest.raises(InputError, match=r"holds no image \(\.jpg"):
        list_image_names(tmp_path / "empty")


def test_unreadable_subfolder_is_passed_over(tmp_path, monkeypatch):
    root = tree(tmp_path)
    real = os.scandir

    def scandir(path):
        if Path(path) == root / "a":
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    names = list_image_names(root, recursive=True)
    assert "a/b.jpg" not in names and "a-b/c.jpg" in names


def test_stems_and_clashes():
    assert stem("a/b.tar.gz") == "b.tar" and stem(".jpg") == ".jpg" and stem("x.") == "x."
    assert stems_of(["q/x.jpg", "y.png"], "here") == ["x", "y"]
    with pytest.raises(InputError, match=r"here: 1 image name appears twice, e\.g\. x\.jpg "
                                         r"and x\.png; keep one file per name"):
        stems_of(["x.jpg", "x.png"], "here")
    files = [Path("/d/x.jpg"), Path("/d/y.png")]
    assert by_stem(files, "d") == {"x": files[0], "y": files[1]}


def test_image_files_builds_paths_on_demand(tmp_path):
    files = ImageFiles(tmp_path, {"x": "query/x.jpg", "y": "bounding_box_test/y.jpg"})
    assert files["x"] == tmp_path / "query" / "x.jpg"
    assert files.get("nope") is None and "y" in files and "nope" not in files
    assert list(files) == ["x", "y"] and len(files) == 2
    assert dict(files) == {"x": tmp_path / "query/x.jpg", "y": tmp_path / "bounding_box_test/y.jpg"}
    assert files.fspath("y") == str(tmp_path / "bounding_box_test" / "y.jpg")
