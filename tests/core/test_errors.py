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


def test_an_option_reads_as_a_flag_on_the_command_line_and_as_a_field_in_the_window():
    from irviewer.core.errors import InputError, Sentence, either, option, window_text

    e = InputError(f"gt: give {option('images')} or {option('row_names')} "
                   f"({either('irviewer eval ', '')}{option('row_names')} names rows)")
    assert str(e) == ("gt: give --images DIR or --row-names FILE "
                      "(irviewer eval --row-names FILE names rows)")
    assert e.for_window() == ("gt: give “Images” in the Open dialog or “Row names” in the "
                              "Open dialog (“Row names” in the Open dialog names rows)")
    assert window_text(e) == e.for_window() and window_text("plain") == "plain"
    note = Sentence(f"x.fvecs: give {option('row_names')}")
    assert note == "x.fvecs: give --row-names FILE" and isinstance(note, str)
    assert note.for_window() == "x.fvecs: give “Row names” in the Open dialog"
    # Re-raising with the message keeps the window's wording.
    assert InputError(e.template).for_window() == e.for_window()
    with pytest.raises(KeyError):
        option("no_such_option")


def test_every_dialog_label_and_flag_is_distinct():
    from irviewer.core.errors import OPTION_LABELS

    flags = [f for f, _ in OPTION_LABELS.values()]
    labels = [label for _, label in OPTION_LABELS.values()]
    assert len(set(flags)) == len(flags) and len(set(labels)) == len(labels)
    assert all(f.startswith("--") for f in flags)
