"""CSV as irviewer reads and writes it: the one reader of every CSV file a user gives
(corrections, reviewed files, manifests, titles, a collection's files) and the one writer of
every CSV file irviewer writes.

**Reading** (:func:`read_records`) is RFC 4180 strict, with a line for every error. Python's
``csv`` module, lenient, reads a quoted field whose closing quote is missing on to the end
of the file (or to the next quote), so the rows after it silently become part of one cell;
strict, it notices only at the end of the file. Here such a field is refused naming the
1-based line where its quote opens. Files whose cells are one line each (the corrections
file) also refuse a quoted field that runs over several lines, which is what a missing
closing quote looks like there.

**Writing** (:func:`csv_writer`) neutralises cells a spreadsheet would run as a formula
(OWASP, "CSV Injection": a cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return gets a leading apostrophe, which spreadsheets take as "text" and do not
show; https://owasp.org/www-community/attacks/CSV_Injection). A plain number (``-1``,
``-0.25``) is left as it is: a spreadsheet reads it as a number, runs nothing, and the
exported values stay numbers. The reader takes that apostrophe off again
(:func:`cell_text`), as a spreadsheet shows the cell, so what irviewer writes it reads back
unchanged.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator
from typing import Any, Protocol, overload

from irviewer.core.errors import InputError

#: The first characters that make a spreadsheet evaluate a cell (OWASP's list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_STARTS = "[" + re.escape("".join(FORMULA_STARTS)) + "]"
_FORMULA = re.compile(f"'*{_STARTS}")  # what gets an apostrophe (after any already there)
_NEUTRALISED = re.compile(f"'+{_STARTS}")  # what loses one when read
_LINE_END = re.compile(r"\r\n|\r|\n")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _is_number(text: str) -> bool:
    """Return True for a plain decimal number (``-1``, ``+0.5``, ``-1e-05``)."""
    return _NUMBER.fullmatch(text) is not None


@overload
def spreadsheet_safe(value: str) -> str: ...
@overload
def spreadsheet_safe(value: object) -> object: ...
def spreadsheet_safe(value: object) -> object:
    """Return ``value`` as a cell a spreadsheet shows and never runs: text that begins with
    ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (after any apostrophes) gets one
    more leading apostrophe, unless it is a plain number; anything else (numbers, other
    text) is returned as it is."""
    if not isinstance(value, str) or not _FORMULA.match(value) or _is_number(value):
        return value
    return "'" + value


def cell_text(cell: str) -> str:
    """Return the text of a cell as written by :func:`spreadsheet_safe` (and as a
    spreadsheet shows it): one leading apostrophe before ``=``, ``+``, ``-``, ``@``, a tab or
    a carriage return is taken off."""
    return cell[1:] if _NEUTRALISED.match(cell) else cell


class RowWriter(Protocol):
    """What :func:`csv_writer` returns: ``csv.writer``'s two methods."""

    def writerow(self, row: Iterable[Any]) -> Any: ...
    def writerows(self, rows: Iterable[Iterable[Any]]) -> None: ...


class _SafeWriter:
    """A ``csv.writer`` whose every cell goes through :func:`spreadsheet_safe`. A row with a
    carriage return in a cell is written with every cell quoted: Python's minimal quoting
    quotes only the characters of its own line ending, and would leave a lone ``\r`` bare
    (read back as a line break)."""

    def __init__(self, stream: Any, **options: Any) -> None:
        self._writer = csv.writer(stream, **options)
        self._quoted = csv.writer(stream, quoting=csv.QUOTE_ALL, **options)

    def writerow(self, row: Iterable[Any]) -> Any:
        cells = [spreadsheet_safe(cell) for cell in row]
        bare_cr = any(isinstance(cell, str) and "\r" in cell for cell in cells)
        return (self._quoted if bare_cr else self._writer).writerow(cells)

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def csv_writer(stream: Any, lineterminator: str = "\n") -> RowWriter:
    """Return a CSV writer on ``stream`` (opened with ``newline=""``) that neutralises
    formula cells (:func:`spreadsheet_safe`): every CSV file irviewer writes goes through
    it."""
    return _SafeWriter(stream, lineterminator=lineterminator)


def csv_text(rows: Iterable[Iterable[Any]]) -> str:
    """Return ``rows`` as CSV text, written by :func:`csv_writer`."""
    out = io.StringIO(newline="")
    csv_writer(out).writerows(rows)
    return out.getvalue()


def read_records(text: str, where: str, one_line: bool = False) -> list[tuple[int, list[str]]]:
    """Return (the 1-based line a record starts on, its cells) of every record of the CSV
    ``text`` (blank lines included, as empty records), each cell as :func:`cell_text`
    gives it; ``where`` names the file in errors.

    InputError naming the line for a quoted field whose closing quote is missing (the line
    where that quote opens), text after a closing quote, or anything else Python's strict
    ``csv`` refuses; with ``one_line``, also for a quoted field that runs over several lines
    (a file whose cells are one line each).
    """
    return list(iter_records(text, where, one_line))


def iter_records(text: str, where: str, one_line: bool = False
                 ) -> Iterator[tuple[int, list[str]]]:
    """Yield what :func:`read_records` returns, record by record."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise _record_error(text, where, start, str(e)) from None
        if one_line and reader.line_num > start:
            opened = _multi_line_field(text, start)
            raise InputError(f"{where}, line {opened}: a quoted field opens here and runs on "
                             f"to line {reader.line_num}; is its closing quote missing? "
                             "Each row of this file is one line: close the quote")
        yield start, [cell_text(cell) for cell in row]


def _line_offset(text: str, line: int) -> int:
    """Return the offset in ``text`` where 1-based ``line`` starts (CSV's line ends:
    ``\\r\\n``, ``\\r``, ``\\n``)."""
    if line <= 1:
        return 0
    for n, m in enumerate(_LINE_END.finditer(text), start=2):
        if n == line:
            return m.end()
    return len(text)


def _scan(text: str, line: int) -> tuple[str, int, int]:
    """Scan one CSV record of ``text`` from the start of ``line`` as RFC 4180 reads it;
    return (what ended it: ``"end"`` the record's end, ``"eof"`` the end of the text inside
    a quoted field, ``"after"`` text after a closing quote; the line of the last quoted
    field opened, 0 if none; the line where the scan stopped)."""
    i, n = _line_offset(text, line), len(text)
    state, opened = "start", 0
    while i < n:
        c = text[i]
        newline = c in "\r\n"
        step = 2 if text.startswith("\r\n", i) else 1
        if state == "quoted":
            if c == '"':
                state = "quote"
            elif newline:
                line += 1
        elif state == "quote":  # just after a quote inside a quoted field
            if c == '"':
                state = "quoted"
            elif c == ",":
                state = "start"
            elif newline:
                return "end", opened, line
            else:
                return "after", opened, line
        elif newline:
            return "end", opened, line
        elif state == "start" and c == '"':
            state, opened = "quoted", line
        else:
            state = "start" if c == "," else "field"
        i += step
    return ("eof" if state == "quoted" else "end"), opened, line


def _record_error(text: str, where: str, start: int, reason: str) -> InputError:
    """Return the sentence for the record starting on line ``start`` that Python's strict
    ``csv`` refused with ``reason``."""
    ended, opened, at = _scan(text, start)
    if ended == "eof":
        return InputError(f"{where}, line {opened}: a quoted field opens here and is never "
                          "closed: its closing quote is missing, so every line after it "
                          "would be read into it; close the quote")
    if ended == "after" and opened < at:
        return InputError(f"{where}, line {opened}: a quoted field opens here and is not "
                          f"closed on its line: its closing quote is missing (the next quote, "
                          f"on line {at}, is followed by text); close the quote")
    if ended == "after":
        return InputError(f"{where}, line {at}: text follows the closing quote of a quoted "
                          'field; quote the whole field ("...") or remove the quotes')
    return InputError(f"{where}, line {start}: not a readable CSV line ({reason})")


def _multi_line_field(text: str, start: int) -> int:
    """Return the line where the first quoted field of the record starting on line
    ``start`` that holds a line break opens."""
    i, n, line = _line_offset(text, start), len(text), start
    state, opened = "start", start
    while i < n:
        c = text[i]
        step = 2 if text.startswith("\r\n", i) else 1
        if state == "quoted":
            if c == '"':
                state = "quote"
            elif c in "\r\n":
                return opened
        elif state == "quote":
            state = "quoted" if c == '"' else "start"
        elif c in "\r\n":
            line += 1
        elif state == "start" and c == '"':
            state, opened = "quoted", line
        else:
            state = "start" if c == "," else "field"
        i += step
    return opened
