"""The one CSV reader and writer: every cell irviewer writes reads back as written (a
property over arbitrary text), cells a spreadsheet would run are neutralised (OWASP) while
numbers stay numbers, and a quoted field whose closing quote is missing is refused naming
the line where it opens, in every shape it comes in."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from irviewer.core.errors import InputError
from irviewer.io.csv_table import cell_text, csv_text, read_records, spreadsheet_safe

cells = st.text(alphabet=st.characters(blacklist_characters="\0",
                                        blacklist_categories=("Cs",)), max_size=12)


@given(st.lists(st.lists(cells, min_size=1, max_size=5), min_size=1, max_size=6))
def test_what_is_written_reads_back_as_written(rows):
    assert [cells for _, cells in read_records(csv_text(rows), "x.csv")] == rows


@given(cells)
def test_a_written_cell_never_starts_a_formula(text):
    written = spreadsheet_safe(text)
    starts_formula = written[:1] in ("=", "+", "-", "@", "\t", "\r")
    is_number = written.lstrip("+-").replace(".", "", 1).replace("e", "", 1).isdigit()
    assert not starts_formula or is_number
    assert cell_text(written) == text


@pytest.mark.parametrize(("value", "written"), [
    ("=cmd|'/c calc'!A1", "'=cmd|'/c calc'!A1"),
    ("+1+2", "'+1+2"),
    ("-Tuesday", "'-Tuesday"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"),
    ("'=already quoted", "''=already quoted"),
    ("-1", "-1"),
    ("-0.25", "-0.25"),
    ("+3", "+3"),
    ("1e-05", "1e-05"),
    ("plain", "plain"),
    ("", ""),
    (-1.5, -1.5),
])
def test_formula_cells_get_an_apostrophe_and_numbers_do_not(value, written):
    assert spreadsheet_safe(value) == written


def test_rows_written_by_python_csv_read_the_same():
    rows = [["a", "b, c", 'say "hi"'], ["", "x\ny", "z"]]
    out = io.StringIO(newline="")
    csv.writer(out).writerows(rows)
    assert [r for _, r in read_records(out.getvalue(), "x.csv")] == rows


def test_records_carry_the_line_they_start_on():
    text = 'h1,h2\n1,"two\nlines"\n\n3,4\r\n5,6'
    assert [line for line, _ in read_records(text, "x.csv")] == [1, 2, 4, 5, 6]


@pytest.mark.parametrize(("text", "line", "words"), [
    ('a,b\n1,"open\n2,3\n4,5\n', 2, "is never closed"),
    ('a,b\n1,2\n3,"cut of', 3, "is never closed"),
    ('a,b\n1,"open\n2,3\n4,"five"\n', 2, "is not closed on its line"),
    ('a,b\r\n1,2\r\n3,"open\r\n4,5\r\n', 3, "is never closed"),
    ('a,b\n1,"x"y\n', 2, "text follows the closing quote"),
])
def test_an_unclosed_quote_is_refused_at_the_line_it_opens(text, line, words):
    with pytest.raises(InputError) as e:
        read_records(text, "f.csv")
    assert str(e.value).startswith(f"f.csv, line {line}: ") and words in str(e.value)


def test_a_one_line_file_refuses_a_field_over_several_lines():
    text = 'a,b\n1,2\n3,"x\ny"\n'
    assert len(read_records(text, "f.csv")) == 3
    with pytest.raises(InputError, match=r"f.csv, line 3: a quoted field opens here and runs "
                                         r"on to line 4"):
        read_records(text, "f.csv", one_line=True)
