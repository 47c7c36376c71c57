"""The sentence helpers every reader's messages are built from."""

from __future__ import annotations

import pytest

from irviewer.core.errors import counted, examples


@pytest.mark.parametrize(("n", "args", "expected"), [
    (1, ("query",), "1 query"),
    (2, ("query",), "2 queries"),
    (0, ("image",), "0 images"),
    (3, ("key",), "3 keys"),  # a vowel before the y keeps it
    (1204, ("row",), "1,204 rows"),
    (1, ("name is", "names are"), "1 name is"),
    (5, ("name is", "names are"), "5 names are"),
])
def test_counted_agrees_in_number(n, args, expected):
    assert counted(n, *args) == expected


def test_examples_names_a_few_and_says_when_there_are_more():
    assert examples([]) == ""
    assert examples(["a", "b"]) == "a, b"
    assert examples(iter(range(10))) == "0, 1, 2, ..."
    assert examples("abcd", limit=4) == "a, b, c, d"


def test_a_placeholder_reads_one_way_on_the_command_line_and_another_in_the_window():
    from irviewer.core.errors import InputError, Sentence, either, window_text

    images = either("--images DIR", "“Images” in the Open dialog", "images")
    rows = either("--row-names FILE", "“Row names” in the Open dialog", "row_names")
    e = InputError(f"gt: give {images} or {rows} ({either('irviewer eval ', '')}{rows} names "
                   "rows)")
    assert str(e) == ("gt: give --images DIR or --row-names FILE "
                      "(irviewer eval --row-names FILE names rows)")
    assert e.for_window() == ("gt: give “Images” in the Open dialog or “Row names” in the "
                              "Open dialog (“Row names” in the Open dialog names rows)")
    assert window_text(e) == e.for_window() and window_text("plain") == "plain"
    note = Sentence(f"x.fvecs: give {rows}")
    assert note == "x.fvecs: give --row-names FILE" and isinstance(note, str)
    assert note.for_window() == "x.fvecs: give “Row names” in the Open dialog"
    # Re-raising with the message keeps the window's wording.
    assert InputError(e.template).for_window() == e.for_window()


def test_a_clause_of_an_option_the_command_does_not_take_is_left_out():
    from irviewer.core.errors import (
        InputError,
        command_line_text,
        either,
        when,
        window_text,
    )

    images = either("--images DIR", "“Images”", "images")
    e = InputError(f"gt: give {images}{when('descriptors', ', a descriptor file with names,')}"
                   " or more")
    assert str(e) == "gt: give --images DIR, a descriptor file with names, or more"
    assert command_line_text(e, takes=lambda key: key != "descriptors") == (
        "gt: give --images DIR or more")
    assert command_line_text(e, takes=lambda key: True) == str(e)
    assert window_text(e) == "gt: give “Images”, a descriptor file with names, or more"
