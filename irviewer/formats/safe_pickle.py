"""Loading benchmark pickles without running anything in them.

Some benchmarks publish ground truth as Python pickles (revisited Oxford/Paris, Radenovic
et al. CVPR 2018: ``gnd_roxford5k.pkl``). A pickle can name any function to call while it
loads, so a downloaded file could run code. :func:`load_plain_pickle` admits only plain
data — dicts, lists, tuples, strings, bytes, numbers, booleans and None (sets too, where the
pickle protocol has opcodes for them) — and refuses every pickle that refers to a class or
function, at that opcode, before anything is constructed or called: the unpickler's
``find_class`` (the only way a pickle reaches a callable: GLOBAL, STACK_GLOBAL, INST, OBJ,
EXT*) and ``persistent_load`` refuse everything.

Bytes pickled under protocol 0-2 are stored as a call to ``_codecs.encode`` and are refused
like any other call; protocol 3 and later store them as data.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path

from irviewer.core.errors import InputError
from irviewer.formats.base import read_bytes

#: Files sometimes given a .pkl name by mistake, by their first bytes.
_OTHER_FORMATS = (
    (b"PK\x03\x04", "a zip archive (an .npz or a PyTorch file?)"),
    (b"\x93NUMPY", "a numpy .npy file"),
    (b"\x89HDF\r\n\x1a\n", "an HDF5 file"),
)


class _RefusedError(Exception):
    """Raised inside the unpickler when a pickle names a global (or a persistent id)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class _PlainUnpickler(pickle.Unpickler):
    """An unpickler whose every global look-up fails: no class, no function, no code."""

    def find_class(self, module: str, name: str) -> object:
        raise _RefusedError(f"{module}.{name}")

    def persistent_load(self, pid: object) -> object:
        raise _RefusedError(f"persistent id {str(pid)[:40]!r}")


def load_plain_pickle(path: Path) -> object:
    """Return the plain data (containers, strings, bytes, numbers, bools, None) in a pickle
    file; InputError with one sentence for anything else.

    Nothing in the file runs: a reference to any class or function (``os.system``, a numpy
    array, an object) stops loading at that opcode with a sentence naming it. Python 2
    strings are decoded as UTF-8. An empty, truncated or non-pickle file gets its own
    sentence.
    """
    path = Path(path)
    data = read_bytes(path, "a pickle file")
    if not data:
        raise InputError(f"{path.name} is empty: a pickle file holds at least one object")
    for magic, kind in _OTHER_FORMATS:
        if data.startswith(magic):
            raise InputError(f"{path.name} is {kind}, not a pickle")
    try:
        return _PlainUnpickler(io.BytesIO(data), encoding="utf-8").load()
    except _RefusedError as e:
        raise InputError(f"{path.name} contains Python code or objects ({e.name}); irviewer "
                         "only loads plain lists, dicts, strings and numbers from a pickle, "
                         "so nothing in it was run") from None
    except EOFError:
        raise InputError(f"{path.name} is truncated: the pickle ends early") from None
    except RecursionError:
        raise InputError(f"{path.name} is not a readable pickle (nested too deeply)") from None
    except Exception as e:  # any other failure: the bytes are not a pickle
        if "truncated" in str(e):
            raise InputError(f"{path.name} is truncated: the pickle ends early") from None
        reason = str(e).rstrip(".") or type(e).__name__
        raise InputError(f"{path.name} is not a readable pickle ({reason})") from None
