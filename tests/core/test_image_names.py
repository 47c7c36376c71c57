"""Image file names: one list of extensions and one function that drops one."""

from __future__ import annotations

from irviewer.core.image_names import IMAGE_SUFFIXES, strip_image_suffix


def test_an_image_extension_is_dropped_in_any_case_and_the_folders_are_kept():
    assert strip_image_suffix("a/b.JPG") == "a/b"
    assert strip_image_suffix("100301.jpg") == "100301"
    assert strip_image_suffix("c:\\photos\\x.tiff") == "c:\\photos\\x"
    assert all(strip_image_suffix(f"n{s}") == "n" for s in IMAGE_SUFFIXES)


def test_other_extensions_and_bare_extensions_stay():
    assert strip_image_suffix("v_bricks.e3.85") == "v_bricks.e3.85"
    assert strip_image_suffix("notes.txt") == "notes.txt"
    assert strip_image_suffix(".jpg") == ".jpg"
    assert strip_image_suffix("a/.jpg") == "a/.jpg"
    assert strip_image_suffix("a.b/c") == "a.b/c"


def test_a_caller_may_name_its_own_extensions():
    assert strip_image_suffix("x.gif", frozenset({".gif"})) == "x"
    assert strip_image_suffix("x.gif") == "x.gif"
