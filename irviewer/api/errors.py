"""The API's one exception: :class:`ArgumentError`, a ``ValueError`` whose message is one
sentence naming the argument that cannot be used, worded for a caller in Python (options
named by their keyword, ``depth=``, not by their flag)."""

from __future__ import annotations

from irviewer.core.errors import InputError, keyword_text

#: The keyword argument each option key of the command line and the window is given by.
KEYWORDS = {
    "descriptors": "descriptors=", "ranking": "ranking=", "format": "format=",
    "protocol": "protocol=", "ap": "ap=", "self_match": "self_match=", "depth": "depth=",
    "rerank": "rerank=", "ann": "ann=", "engine": "engine=", "collection": "collection=",
    "engine_names": "engine_names=", "corrections": "corrections=", "images": "images=",
    "row_names": "names=", "ann_names": "ann_names=",
}


class ArgumentError(InputError):
    """An argument of :func:`irviewer.evaluate` or :func:`irviewer.view` that cannot be
    used: ``argument`` is its name, the message one sentence that names it and says what
    to give instead. A ``ValueError`` (through
    :class:`~irviewer.core.errors.InputError`)."""

    def __init__(self, argument: str, message: object) -> None:
        super().__init__(message)
        self.argument = argument
        self.args = (api_text(message),)

    def __str__(self) -> str:
        return str(self.args[0])


def api_text(message: object) -> str:
    """Return ``message`` (a sentence, possibly naming options by placeholder) in the API's
    wording: each option by its keyword argument (:data:`KEYWORDS`)."""
    return keyword_text(message, KEYWORDS)


def argument_error(argument: str, error: InputError) -> ArgumentError:
    """Return ``error`` (a sentence from the layers below) as an :class:`ArgumentError`
    naming ``argument``: the sentence is kept, prefixed by the argument unless it starts
    with it."""
    text = api_text(error)
    if text.startswith(f"{argument}=:"):  # the option named first, as the command line has it
        text = f"{argument}:{text[len(argument) + 2:]}"
    elif text.startswith(f"{argument}= "):
        text = f"{argument}: {text[len(argument) + 2:]}"
    elif not text.startswith(argument):
        text = f"{argument}: {text}"
    return ArgumentError(argument, text)


def fresh(error: ArgumentError) -> ArgumentError:
    """Return ``error`` anew, to be raised by the API's function itself, so that its
    traceback starts there, not deep in numpy or in irviewer."""
    made = ArgumentError(error.argument, error.template)
    made.args = error.args
    return made


__all__ = ["KEYWORDS", "ArgumentError", "api_text", "argument_error", "fresh"]
