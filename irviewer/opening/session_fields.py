"""Typed access to the keys of a session file's JSON object (:mod:`irviewer.opening.session_file`
reads through it): each value checked for its JSON type, and every failure one sentence
naming the file and the key, saying what to do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from irviewer.core.errors import InputError

_TYPE_NAMES = {str: "a string", bool: "true or false", int: "an integer", dict: "an object",
               list: "a list", float: "a number", type(None): "null"}


def json_type(value: object) -> str:
    """Return the JSON name of ``value``'s type ("a string", "a number", ...)."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    return _TYPE_NAMES.get(type(value), type(value).__name__)


class SessionFields:
    """Typed access to the session's JSON object; every failure names the file and key."""

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path, self.data = path, data

    def fail(self, sentence: str) -> InputError:
        return InputError(f"{self.path}: {sentence}")

    def wrong(self, key: str, expected: str) -> InputError:
        value = self.data[key]
        return self.fail(f"\"{key}\" must be {expected}, not {json_type(value)}; "
                         "edit the session or save it again")

    def require(self, key: str) -> Any:
        if key not in self.data:
            raise self.fail(f"the session has no \"{key}\" key; it is required, so the file "
                            "is incomplete: edit it or save the session again")
        return self.data[key]

    def string(self, key: str, default: str | None, nullable: bool) -> str | None:
        value = self.data.get(key, default)
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            raise self.wrong(key, "a string or null" if nullable else "a string")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self.wrong(key, "true or false")
        return value

    def integer(self, key: str, default: int) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.wrong(key, "an integer")
        return self._bounded(key, value)

    def _bounded(self, key: str, value: int) -> int:
        """Return ``value``; InputError when it has more digits than any value of a session
        (a number of thousands of digits is not one irviewer wrote)."""
        if abs(value) >= 10**18:
            raise self.fail(f"\"{key}\" is a number of {len(str(abs(value))):,} digits; edit "
                            "the session or save it again")
        return value

    def pairs(self, key: str) -> tuple[tuple[int, str], ...]:
        """Return the list of {"descriptor": index, "spec": SPEC} objects at ``key``
        (empty when absent) as (index, SPEC) pairs."""
        raw = self.data.get(key, [])
        if not isinstance(raw, list) or not all(
                isinstance(x, dict) and isinstance(x.get("spec"), str)
                and isinstance(x.get("descriptor"), int) and not isinstance(x["descriptor"], bool)
                for x in raw):
            raise self.fail(f"\"{key}\" must be a list of {{\"descriptor\": index, \"spec\": "
                            "SPEC} objects; edit the session")
        return tuple((self._bounded(key, x["descriptor"]), x["spec"]) for x in raw)

    def engine(self, key: str) -> tuple[str, str, str | None] | None:
        """Return the object at ``key`` ({"uri", "collection", "names"}) as (URI,
        collection, names field or None), or None when it is null or absent."""
        raw = self.data.get(key)
        if raw is None:
            return None
        if not (isinstance(raw, dict) and isinstance(raw.get("uri"), str)
                and isinstance(raw.get("collection"), str)
                and isinstance(raw.get("names"), (str, type(None)))):
            raise self.fail(f"\"{key}\" must be null or {{\"uri\": URI, \"collection\": "
                            "NAME, \"names\": FIELD or null}; edit the session")
        return raw["uri"], raw["collection"], raw.get("names")

    def engine_pairs(self, key: str) -> tuple[tuple[int, tuple[str, str, str | None]], ...]:
        """Return the list of {"descriptor": index, "uri", "collection", "names"} objects at
        ``key`` (empty when absent) as (index, (URI, collection, names field or None))
        pairs."""
        raw = self.data.get(key, [])
        if not isinstance(raw, list) or not all(
                isinstance(x, dict) and isinstance(x.get("descriptor"), int)
                and not isinstance(x["descriptor"], bool) and isinstance(x.get("uri"), str)
                and isinstance(x.get("collection"), str)
                and isinstance(x.get("names"), (str, type(None))) for x in raw):
            raise self.fail(f"\"{key}\" must be a list of {{\"descriptor\": index, \"uri\": "
                            "URI, \"collection\": NAME, \"names\": FIELD or null} objects; "
                            "edit the session")
        return tuple((x["descriptor"], (x["uri"], x["collection"], x.get("names")))
                     for x in raw)

    def optional_integer(self, key: str) -> int | None:
        value = self.data.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise self.wrong(key, "an integer or null")
        return None if value is None else self._bounded(key, value)
