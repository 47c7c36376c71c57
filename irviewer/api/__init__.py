"""irviewer's Python API (the package's face: :mod:`irviewer` names it, loading it on first
use): :func:`evaluate` scores vectors or a score matrix held in Python with a benchmark's
own conventions, returning what ``irviewer eval --json`` writes for the same data;
:func:`view` opens the window on the same data, from a script or a notebook;
:func:`read_dataset` reads a dataset once; :func:`demo` says where the built-in demo's
files are. Every argument error is an
:class:`ArgumentError` (a ValueError) with one sentence naming the argument.

A new top layer beside the command line (the import contracts in ``pyproject.toml``):
nothing below imports it, and it loads the window (Qt) only when :func:`view` is called.
"""

from irviewer.api.demo import Demo, demo
from irviewer.api.errors import ArgumentError
from irviewer.api.evaluating import evaluate, read_dataset
from irviewer.api.result import Result, Scored
from irviewer.api.viewing import Viewer, view

__all__ = ["ArgumentError", "Demo", "Result", "Scored", "Viewer", "demo", "evaluate",
           "read_dataset", "view"]
