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
