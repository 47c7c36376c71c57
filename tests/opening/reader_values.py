"""ReadOptions values for tests, made from the fields' declarations (so a new reader option
is covered without an edit): a hypothesis strategy and one non-default example."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from irviewer.formats.base import ReadOptions, reader_options

WORD = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)
NAME = st.text("abcdefghijklmnopqrstuvwxyz0123456789_-.", min_size=1, max_size=12).filter(
    lambda s: s not in (".", ".."))


def read_options_values(inside: Path, outside: Path) -> st.SearchStrategy[ReadOptions]:
    """Return a strategy of ReadOptions whose paths lie below ``inside`` (a session's
    folder) or ``outside`` it, absolute and normalised as a loaded session gives them."""
    def path() -> st.SearchStrategy[Path]:
        return st.builds(lambda base, parts: base.joinpath(*parts),
                         st.sampled_from([inside, outside]), st.lists(NAME, min_size=1,
                                                                       max_size=3))

    by_kind: dict[str, st.SearchStrategy[Any]] = {
        "folder": st.none() | path(), "file": st.none() | path(),
        "text": st.none() | WORD, "words": st.lists(WORD, max_size=4).map(tuple),
        "switch": st.booleans()}
    return st.builds(ReadOptions, **{name: by_kind[spec.kind]
                                     for name, spec in reader_options().items()})


def example_read_options(folder: Path) -> ReadOptions:
    """Return ReadOptions with every user-facing field away from its default."""
    default = ReadOptions()
    values: dict[str, Any] = {}
    for name, spec in reader_options().items():
        values[name] = {"folder": folder / f"{name}_dir", "file": folder / f"{name}.txt",
                        "text": f"{name}-value", "words": (f"{name}1", f"{name}2"),
                        "switch": not getattr(default, name)}[spec.kind]
    return ReadOptions(**values)
