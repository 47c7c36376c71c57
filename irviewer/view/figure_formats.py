"""The files a figure is written as, and the one sentence that says so (Qt-free).

Every figure irviewer writes — File ▸ Export figure, ``irviewer figure``, an approximate
search's sweep — takes its formats from here: the command's ``--out`` help, the Export
dialog's label and file filter, and the sentence that refuses another suffix."""

from __future__ import annotations

from pathlib import Path

from irviewer.core.convention_names import one_of
from irviewer.core.errors import InputError

#: The raster resolution of a PNG figure and of the images a PDF or SVG figure embeds.
DPI = 300
#: Each suffix a figure is written as, and what it gives.
FORMATS: dict[str, str] = {".pdf": "vector", ".svg": "vector", ".png": f"{DPI} dpi"}
#: The suffixes, in the order every list names them.
SUFFIXES: tuple[str, ...] = tuple(FORMATS)
#: The suffixes as a sentence ends: ".pdf, .svg or .png".
SUFFIXES_TEXT = one_of(SUFFIXES)
#: The suffixes with what each gives, for a help text: ".pdf (vector), .svg (vector) or
#: .png (300 dpi)".
FORMATS_TEXT = one_of(tuple(f"{s} ({what})" for s, what in FORMATS.items()))
#: A file dialog's filter of the figure formats.
FILE_FILTER = f"Figures ({' '.join('*' + s for s in SUFFIXES)})"


def figure_suffix(path: Path | str) -> str:
    """Return ``path``'s suffix (lower case) when a figure is written as it; InputError,
    the one sentence naming the formats, otherwise."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise InputError(f"{path.name}: a figure is written as {SUFFIXES_TEXT}")
    return suffix
