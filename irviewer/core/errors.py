"""The one exception type for bad user input, and sentences that name an option neutrally.

Readers and validators raise :class:`InputError` with a sentence the user can act on
("descriptors.npz: 12 gallery images have no descriptor, e.g. all_souls_000013").
The edges catch it: the CLI prints it on one line and exits with code 2, the GUI shows it
in a dialog. Anything else escaping is a bug (CLI exit code 1).

A sentence that tells the user to set an option names it with :func:`option` (a reader
option of :data:`OPTION_LABELS`) or :func:`either` (any two wordings), so that each edge
fills in its own word: the command line the flag (``--row-names FILE``), the window the
Open dialog's field ("“Row names” in the Open dialog"). ``str()`` of an
:class:`InputError` or a :class:`Sentence` is the command-line wording;
``for_window()`` (or :func:`window_text` for any message) the window's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Reader options a message may name: key -> (command-line flag, Open dialog field label).
#: The window's Open dialog labels its fields with these labels.
OPTION_LABELS: dict[str, tuple[str, str]] = {
    "format": ("--format", "Format"),
    "images": ("--images DIR", "Images"),
    "row_names": ("--row-names FILE", "Row names"),
    "instance_rule": ("--instance-rule", "Instance rule"),
    "distractors": ("--distractors FILE", "Distractors"),
    "ignore_labels": ("--ignore-label LABEL", "Ignore labels"),
    "keep_orphans": ("--keep-orphans", "Keep orphans"),
    "protocol": ("--protocol", "Protocol"),
}

_OPEN, _BAR, _CLOSE = "\u27e6", "\u2016", "\u27e7"  # ⟦command line‖window⟧
_CHOICE = re.compile(f"{_OPEN}([^{_OPEN}{_CLOSE}]*?){_BAR}([^{_OPEN}{_CLOSE}]*?){_CLOSE}")


def either(command_line: str, window: str) -> str:
    """Return a placeholder that reads ``command_line`` on the command line and ``window``
    in the window (see :func:`command_line_text` and :func:`window_text`)."""
    return f"{_OPEN}{command_line}{_BAR}{window}{_CLOSE}"


def option(key: str) -> str:
    """Return the placeholder naming reader option ``key`` of :data:`OPTION_LABELS`: its flag
    on the command line, "“Label” in the Open dialog" in the window. KeyError for an
    unknown key (a bug)."""
    flag, label = OPTION_LABELS[key]
    return either(flag, f"\u201c{label}\u201d in the Open dialog")


def command_line_text(message: str) -> str:
    """Return ``message`` with every placeholder in its command-line wording."""
    return _CHOICE.sub(lambda m: m[1], message)


def window_text(message: object) -> str:
    """Return a message (a string with placeholders, a :class:`Sentence` or an
    :class:`InputError`) in the window's wording."""
    template = getattr(message, "template", None)
    text = template if isinstance(template, str) else str(message)
    return _CHOICE.sub(lambda m: m[2], text)


class Sentence(str):
    """A sentence for the user that may name options: as a ``str`` it is the command-line
    wording; :meth:`for_window` gives the window's."""

    template: str

    def __new__(cls, template: str) -> Sentence:
        made = super().__new__(cls, command_line_text(template))
        made.template = template
        return made

    def for_window(self) -> str:
        """Return the sentence in the window's wording."""
        return window_text(self.template)


class InputError(ValueError):
    """Bad input: a file, a name or an option the user can fix. The message is the sentence;
    ``str()`` gives it in the command line's wording, :meth:`for_window` in the window's."""

    def __init__(self, message: object = "", *more: object) -> None:
        self.template = str(getattr(message, "template", message))
        super().__init__(command_line_text(self.template), *more)

    def for_window(self) -> str:
        """Return the message in the window's wording (options named by dialog field)."""
        return window_text(self.template)


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
