"""The figure formats: one list, one sentence refusing another suffix, and the help text
and file filter made from the list."""

from __future__ import annotations

import re

import pytest

from irviewer.core.errors import InputError
from irviewer.view.figure_formats import (
    FILE_FILTER,
    FORMATS_TEXT,
    SUFFIXES,
    SUFFIXES_TEXT,
    figure_suffix,
)


def test_the_suffixes_and_what_they_give():
    assert SUFFIXES == (".pdf", ".svg", ".png")
    assert SUFFIXES_TEXT == ".pdf, .svg or .png"
    assert FORMATS_TEXT == ".pdf (vector), .svg (vector) or .png (300 dpi)"
    assert FILE_FILTER == "Figures (*.pdf *.svg *.png)"


def test_a_suffix_is_read_in_any_case():
    assert figure_suffix("fig.PDF") == ".pdf"
    assert figure_suffix("a/b/fig.Png") == ".png"


@pytest.mark.parametrize("name", ["fig.gif", "fig", "fig.pdf.bak"])
def test_another_suffix_is_refused_in_one_sentence(name):
    message = f"{name}: a figure is written as .pdf, .svg or .png"
    with pytest.raises(InputError, match=f"^{re.escape(message)}$"):
        figure_suffix(f"some/folder/{name}")
