"""A session's reader options as JSON: which :class:`~irviewer.formats.base.ReadOptions` fields
the ``.irv`` file's "options" object stores (every field whose :class:`OptionSpec` names a
``json`` key), the JSON type each must have, and the options written as that object."""

from __future__ import annotations

from typing import Any

from irviewer.formats.base import OptionSpec, ReadOptions, reader_options
from irviewer.opening.session_fields import json_type

#: The reader options a session's "options" object stores, by JSON key: every
#: :class:`ReadOptions` field whose :class:`OptionSpec` names a ``json`` key.
STORED_OPTIONS: dict[str, tuple[str, OptionSpec]] = {
    spec.json: (name, spec) for name, spec in reader_options().items() if spec.json}
#: Reader options that hold a path: stored relative to the session like the other paths.
PATH_OPTIONS = tuple(key for key, (_name, spec) in STORED_OPTIONS.items()
                     if spec.kind in ("file", "folder"))
_KIND_JSON = {"folder": ("str|null", "a string or null"), "file": ("str|null", "a string or null"),
              "text": ("str|null", "a string or null"),
              "words": ("list[str]", "a list of strings"), "switch": ("bool", "true or false")}
# Reader options whose JSON type is checked on load (keys no option uses are kept as they
# are): every stored option, and the older key of the value of a switch.
OPTION_TYPES: dict[str, tuple[str, str]] = {
    **{key: _KIND_JSON[spec.kind] for key, (_name, spec) in STORED_OPTIONS.items()},
    **{spec.legacy_json: _KIND_JSON[spec.kind] for _name, spec in STORED_OPTIONS.values()
       if spec.legacy_json}}


def option_problem(options: dict[str, object]) -> str | None:
    """Return what is wrong with the reader options ``options`` (as a session stores them)
    as a sentence fragment: a stored option whose value is not of its JSON type; None when
    nothing is. Keys no option uses are not checked."""
    for key, (kind, expected) in OPTION_TYPES.items():
        if key in options and not is_kind(options[key], kind):
            return f"the reader option \"{key}\" must be {expected}, not {json_type(options[key])}"
    return None


def is_kind(value: object, kind: str) -> bool:
    """Return whether the JSON ``value`` is of ``kind`` (see ``OPTION_TYPES``)."""
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "str|null":
        return value is None or isinstance(value, str)
    if kind == "list[str]":
        return isinstance(value, list) and all(isinstance(x, str) for x in value)
    raise AssertionError(kind)


def options_json(options: ReadOptions) -> dict[str, Any]:
    """Return ``options`` as the session's plain JSON reader options (the inverse of
    :func:`read_options`): switches always, other options when set; paths as strings (made
    relative to the session file when it is saved). Options the session keeps as fields of
    its own (``images``) and ``gallery_names`` (read from the descriptor file again on
    opening) are not in it."""
    out: dict[str, Any] = {}
    for key, (name, spec) in STORED_OPTIONS.items():
        value = getattr(options, name)
        if spec.kind == "switch":
            out[key] = bool(value) != spec.negate
        elif spec.kind == "words":
            if value:
                out[key] = list(value)
        elif value is not None and value != "":
            out[key] = str(value)
    return out
