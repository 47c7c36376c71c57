"""Loading benchmark pickles without running anything in them.

Some benchmarks publish ground truth as Python pickles (revisited Oxford/Paris:
``gnd_roxford5k.pkl``). A pickle can name any function to call while it loads, so a
downloaded file could run code. :func:`load_plain_pickle` admits only plain data — dicts,
lists, tuples, strings, bytes, numbers, booleans and None — and refuses every pickle that
refers to a class or function, before anything is constructed or called.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path

from irviewer.core.errors import InputError
from irviewer.formats.base import read_bytes


class _RefusedError(Exception):
    """Raised inside the unpickler when a pickle names a global."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class _PlainUnpickler(pickle.Unpickler):
    """An unpickler whose every global look-up fails: no class, no function, no code."""

    def find_class(self, module: str, name: str) -> object:
        raise _RefusedError(f"{module}.{name}")

    def persistent_load(self, pid: object) -> object:
        raise _RefusedError(f"persistent id {pid!r}")


def load_plain_pickle(path: Path) -> object:
    """Return the plain data in a pickle file; InputError for anything else.

    Nothing in the file runs: a reference to any class or function (``os.system``, a numpy
    array, an object) stops loading at that opcode with a sentence naming it.
    """
    path = Path(path)
    data = read_bytes(path, "a pickle file")
    if not data:
        raise InputError(f"{path.name} is empty")
    try:
        return _PlainUnpickler(io.BytesIO(data)).load()
    except _RefusedError as e:
        raise InputError(f"{path.name} contains Python code or objects ({e.name}); irviewer "
                         "only loads plain lists, dicts, strings and numbers from a pickle, "
                         "so nothing in it was run") from None
    except EOFError:
        raise InputError(f"{path.name} is truncated: the pickle ends early") from None
    except (pickle.UnpicklingError, ValueError, IndexError, KeyError, TypeError) as e:
        if "truncated" in str(e):
            raise InputError(f"{path.name} is truncated: the pickle ends early") from None
        raise InputError(f"{path.name} is not a readable pickle ({e})") from None
