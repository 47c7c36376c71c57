"""Editing a published text file line by line, so a corrected copy differs from it by
exactly the corrected lines (``apply-corrections``): every other byte (order, duplicates,
line endings, a BOM, a missing final newline) stays as the publisher wrote it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+\Z")
BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class TextLines:
    """A text file as its lines, each with its own line ending (``bom`` kept apart)."""

    bom: bytes
    lines: tuple[bytes, ...]

    @classmethod
    def of(cls, data: bytes) -> TextLines:
        """Return the lines of ``data`` (a UTF-8 BOM kept apart, each ending kept)."""
        bom = BOM if data.startswith(BOM) else b""
        return cls(bom, tuple(_LINE.findall(data[len(bom):])))

    def newline(self) -> bytes:
        """Return the file's line ending: the first line's, ``\\n`` when no line has one."""
        for line in self.lines:
            body = line.rstrip(b"\r\n")
            if len(body) < len(line):
                return line[len(body):]
        return b"\n"

    def data(self) -> bytes:
        """Return the file's bytes."""
        return self.bom + b"".join(self.lines)


def body(line: bytes) -> bytes:
    """Return ``line`` without its line ending."""
    return line.rstrip(b"\r\n")


def ending(line: bytes) -> bytes:
    """Return the line ending of ``line`` (empty for a last line without one)."""
    return line[len(body(line)):]


@dataclass(frozen=True)
class Edit:
    """What an edit did to a file: its new bytes, and how many ``unit`` (lines of a text
    file, entries of a pickle's lists) it changed, removed and added."""

    data: bytes
    changed: int = 0
    removed: int = 0
    added: int = 0
    unit: str = "lines"

    @property
    def differs(self) -> int:
        """Return how many ``unit`` differ from the published file (0: the same bytes)."""
        return self.changed + self.removed + self.added


def edit_lines(data: bytes, replace: Callable[[bytes], bytes | None],
               append: list[str]) -> Edit:
    """Return ``data`` with each line's body replaced by ``replace(body)`` (None: the line is
    removed; the same body: kept byte for byte) and the ``append`` lines added at the end
    with the file's own line ending (a file whose last line has no ending keeps that: the
    ending goes before the added lines)."""
    text = TextLines.of(data)
    out: list[bytes] = []
    changed = removed = 0
    for line in text.lines:
        old = body(line)
        new = replace(old)
        if new is None:
            removed += 1
        elif new == old:
            out.append(line)
        else:
            changed += 1
            out.append(new + ending(line))
    if append:
        nl = text.newline()
        added = [a.encode("utf-8") for a in append]
        if out and not ending(out[-1]):
            out[-1] += nl
            out += [a + nl for a in added[:-1]] + [added[-1]]
        else:
            out += [a + nl for a in added]
    return Edit(text.bom + b"".join(out), changed, removed, len(append))


@dataclass(frozen=True)
class CorrectedFile:
    """One file of a corrected copy: its name (relative to a folder output; the output's
    own name for a file), the published file it edits (None: a new file), and the edit."""

    name: str
    published: Path | None
    edit: Edit
