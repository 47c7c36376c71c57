"""The one exception type for bad user input.

Readers and validators raise :class:`InputError` with a sentence the user can act on
("descriptors.npz: 12 gallery images have no descriptor, e.g. all_souls_000013").
The edges catch it: the CLI prints it on one line and exits with code 2, the GUI shows it
in a dialog. Anything else escaping is a bug (CLI exit code 1).
"""

from __future__ import annotations

from collections.abc import Iterable


class InputError(ValueError):
    """Bad input: a file, a name or an option the user can fix. The message is the sentence."""


def examples(items: Iterable[object], limit: int = 3) -> str:
    """Return up to ``limit`` items joined by ", " followed by ", ..." when there are more.

    Used to build messages such as "3 names do not match, e.g. a, b, c, ...".
    """
    out: list[str] = []
    more = False
    for i, item in enumerate(items):
        if i >= limit:
            more = True
            break
        out.append(str(item))
    return ", ".join(out) + (", ..." if more else "")


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """Return ``n`` with the noun in the number it needs: "1 query", "2 queries", "1,204 rows".

    ``plural`` defaults to ``singular`` + "s" ("y" after a consonant becomes "ies"); give it
    for phrases such as ``counted(n, "name is", "names are")``.
    """
    if n == 1:
        return f"1 {singular}"
    if plural is None:
        if singular.endswith("y") and singular[-2:-1] not in ("a", "e", "i", "o", "u", ""):
            plural = singular[:-1] + "ies"
        else:
            plural = singular + "s"
    return f"{n:,} {plural}"
