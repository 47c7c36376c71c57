"""A curator's titles file: columns, matching ids, and one sentence per malformed file."""

from __future__ import annotations

from pathlib import Path

import pytest

from irviewer.core.errors import InputError
from irviewer.formats.artwork_titles import read_titles, titles_summary

GOOD = """id,Title,Artist,Year,Room
mona-lisa.jpg,Mona Lisa,Leonardo da Vinci,c. 1503,3
wave,"Under the Wave off Kanagawa, The Great Wave",Hokusai,1831
lost,A painting with no photo,Nobody,1900,9
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "titles.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_columns_and_rows_short_rows_padded(tmp_path):
    titles = read_titles(write(tmp_path, GOOD))
    assert titles.columns == ("Title", "Artist", "Year", "Room")
    assert titles.rows["wave"] == ("Under the Wave off Kanagawa, The Great Wave", "Hokusai",
                                   "1831", "")


def test_ids_match_exactly_or_without_their_extension(tmp_path):
    titles = read_titles(write(tmp_path, GOOD))
    found, missing, unused = titles.match(["mona-lisa", "wave", "swing"])
    assert found["mona-lisa"][0] == "Mona Lisa" and found["wave"][1] == "Hokusai"
    assert missing == ["swing"]
    assert unused == ["lost"]


def test_summary_names_each_id_in_one_line_and_counts_the_rest(tmp_path):
    lines = titles_summary(["swing"], [f"x{i}" for i in range(23)], Path("titles.csv"))
    assert lines[0] == "artwork swing has no row in titles.csv: it is shown by its id"
    assert lines[1] == "artwork x0 is listed in titles.csv but has no photo"
    assert len(lines) == 1 + 20 + 1
    assert lines[-1] == "... and 3 more like it (e.g. x20, x21, x22)"


@pytest.mark.parametrize("text, message", [
    ("", "titles.csv is empty: its first line must name the columns"),
    ("id\nmona\n", "the first line names one column"),
    ("id;title\nmona;Mona\n", "the first line names one column"),
    ("id,title,\nmona,Mona,\n", "column 3 of the first line has no name"),
    ("id,title,Title\nmona,a,b\n", "the column 'title' is named twice"),
    ("id,title,role\nmona,a,b\n", "the column 'role' means something else in a collection"),
    ("id,title\nmona,Mona,Lisa\n", "line 2: 3 fields where the first line names 2"),
    ("id,title\n,Mona\n", "line 2: the artwork id (first column) is empty"),
    ("id,title\nmona,a\nmona,b\n", "line 3: the artwork mona is already listed on line 2"),
    ('id,title\nmona,"unclosed\n', "line 2: a quoted field opens here and is never closed"),
    ("id,title\n", "names its columns but lists no artwork"),
])
def test_malformed_titles_files_get_one_sentence(tmp_path, text, message):
    with pytest.raises(InputError) as raised:
        read_titles(write(tmp_path, text))
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_not_utf8_and_missing_files(tmp_path):
    (tmp_path / "titles.csv").write_bytes(b"id,title\nmona,Caf\xe9\n")
    with pytest.raises(InputError, match="not UTF-8 text"):
        read_titles(tmp_path / "titles.csv")
    with pytest.raises(InputError, match="no such file"):
        read_titles(tmp_path / "nope.csv")
