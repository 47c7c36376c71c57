"""The one exception type for bad user input, and sentences that name options neutrally.

Readers and validators raise :class:`InputError` with a sentence the user can act on
("descriptors.npz: 12 gallery images have no descriptor, e.g. all_souls_000013").
The edges catch it: the CLI prints it on one line and exits with code 2, the GUI shows it
in a dialog. Anything else escaping is a bug (CLI exit code 1).

A sentence that tells the user to set an option names it through a placeholder, so that
each edge fills in its own word: the command line the flag (``--row-names FILE``), the
window the Open dialog's field ("“Row names” in the Open dialog"). :func:`either` makes a
placeholder from any two wordings; ``irviewer.formats.base.option`` makes one for a reader
option from its declaration. A placeholder may carry the *key* of the option it names (the
option's key in ``irviewer.opening.options.OPTIONS``), and :func:`when` marks a clause that
only applies where an option is taken ("a descriptor file with names" where ``-d`` is), so
the command line can word a sentence for the running command: :func:`command_line_text`
with ``takes`` drops the clauses of options the command does not take (and a test checks
that every option a command's messages name is one of its own). ``str()`` of an
:class:`InputError` or a :class:`Sentence` is the command-line wording for a command that
takes every option; ``for_window()`` (or :func:`window_text` for any message) the window's.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable

# ⟦key?‖command line‖window⟧: key names the option (may be empty), "?" marks a clause
# that only applies where that option is taken.
_OPEN, _BAR, _CLOSE = "\u27e6", "\u2016", "\u27e7"
_CHOICE = re.compile(f"{_OPEN}([a-z0-9_]*)(\\??){_BAR}([^{_OPEN}{_CLOSE}]*?){_BAR}"
                     f"([^{_OPEN}{_CLOSE}]*?){_CLOSE}")


def either(command_line: str, window: str, key: str = "") -> str:
    """Return a placeholder that reads ``command_line`` on the command line and ``window``
    in the window (see :func:`command_line_text` and :func:`window_text`); ``key`` names the
    option it speaks of (its key in ``irviewer.opening.options.OPTIONS``), if any."""
    return f"{_OPEN}{key}{_BAR}{command_line}{_BAR}{window}{_CLOSE}"


def install_extra(extra: str) -> str:
    """Return how to get the optional part ``extra`` of irviewer (``ann``, ``milvus``,
    ``hdf5``), the end of a sentence: ``install irviewer[ann] (pip install 'irviewer[ann]')``;
    in the desktop app (a PyInstaller build, ``sys.frozen``), which leaves some parts out,
    that this app does not include it and irviewer installed with pip does."""
    pip = f"pip install 'irviewer[{extra}]'"
    if getattr(sys, "frozen", False):
        return f"this desktop app does not include it; irviewer installed with pip does ({pip})"
    return f"install irviewer[{extra}] ({pip})"


def when(key: str, text: str, window: str | None = None) -> str:
    """Return a placeholder for ``text``, a clause that only applies where option ``key`` is
    taken: the command line drops it for a command without that option (``", a descriptor
    file with names,"`` in ``apply-corrections``, which takes no ``-d``); the window reads
    ``window`` (default: ``text``)."""
    return f"{_OPEN}{key}?{_BAR}{text}{_BAR}{text if window is None else window}{_CLOSE}"


def command_line_text(message: object, takes: Callable[[str], bool] | None = None) -> str:
    """Return ``message`` with every placeholder in its command-line wording; with
    ``takes`` (is an option key taken by the running command?) without the clauses of
    options it does not take (None: every option is taken)."""
    def word(m: re.Match[str]) -> str:
        key, conditional, text = m[1], m[2], m[3]
        if conditional and takes is not None and key and not takes(key):
            return ""
        return text

    return _CHOICE.sub(word, _template(message))


def window_text(message: object) -> str:
    """Return a message (a string with placeholders, a :class:`Sentence` or an
    :class:`InputError`) in the window's wording."""
    return _CHOICE.sub(lambda m: m[4], _template(message))


def _template(message: object) -> str:
    """Return the text of ``message`` with its placeholders (a Sentence's or an
    InputError's template, else ``str(message)``)."""
    template = getattr(message, "template", None)
    return template if isinstance(template, str) else str(message)


class WindowText(str):
    """A message in the window's wording (its ``str`` value) that keeps its placeholders
    (``template``), so that it can still be worded for the command line
    (:func:`command_line_text`): a message that went through the window on its way to a
    command line (``irviewer DATASET --screenshot``) names the command's options, not the
    Open dialog's fields."""

    template: str

    def __new__(cls, template: str) -> WindowText:
        made = super().__new__(cls, window_text(template))
        made.template = template
        return made


class Sentence(str):
    """A sentence for the user that may name options: as a ``str`` it is the command-line
    wording; :meth:`for_window` gives the window's."""

    template: str

    def __new__(cls, template: str) -> Sentence:
        made = super().__new__(cls, command_line_text(template))
        made.template = template
        return made

    def for_window(self) -> str:
        """Return the sentence in the window's wording (a :class:`WindowText`)."""
        return WindowText(self.template)


class InputError(ValueError):
    """Bad input: a file, a name or an option the user can fix. The message is the sentence;
    ``str()`` gives it in the command line's wording, :meth:`for_window` in the window's."""

    def __init__(self, message: object = "", *more: object) -> None:
        self.template = _template(message)
        super().__init__(command_line_text(self.template), *more)

    def for_window(self) -> str:
        """Return the message in the window's wording (options named by dialog field), as a
        :class:`WindowText` that keeps the placeholders."""
        return WindowText(self.template)


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
