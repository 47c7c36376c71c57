"""irviewer: inspect and score image retrieval with each benchmark's own conventions.

The Python API is the package's face: :func:`evaluate` scores vectors or a score matrix
held in Python (numpy, or any DLPack array: torch, cupy, jax) and returns what ``irviewer
eval --json`` writes for the same data; :func:`view` opens the window on the same data,
from a script or a notebook; :func:`read_dataset` reads a dataset once. They are loaded on
first use (:mod:`irviewer.api`): importing :mod:`irviewer`, or any module of it
(``irviewer.core``), imports neither the API nor Qt, which the window loads only when a
window is opened.
"""

from __future__ import annotations

import os
import sys
import types
from typing import TYPE_CHECKING, Any

# OpenBLAS's worker threads spin for 2**28 cycles (about 0.1 s) after every matrix multiply
# before they sleep, holding the cores that the ranking's own threads need right after it
# (core/ranking/ranker.py splits each block's selection and counting between threads). A short
# spin costs the multiply nothing measurable. Only this process is concerned, a value the
# user set is kept, and it takes effect when irviewer is imported before numpy (the
# command line, the window, the benchmarks).
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

# IRVIEWER_THREADS caps every thread of the process, BLAS included: imported before numpy, the
# libraries read the cap from their environment variables when they load (the command line's
# --threads, given later, caps them through threadpoolctl: irviewer.core.threads).
from irviewer.core.threads import cap_libraries, environment_threads

if (_cap := environment_threads()) is not None:
    cap_libraries(_cap)

from irviewer.version import __version__  # after the environment is set

if TYPE_CHECKING:
    from irviewer.api import (
        ArgumentError,
        Demo,
        Result,
        Scored,
        Viewer,
        demo,
        evaluate,
        read_dataset,
        view,
    )

#: The API's names, loaded from :mod:`irviewer.api` on first use.
API = ("ArgumentError", "Demo", "Result", "Scored", "Viewer", "demo", "evaluate",
       "read_dataset", "view")


def __getattr__(name: str) -> Any:
    """Return an API name (:data:`API`), loading :mod:`irviewer.api` the first time."""
    if name in API:
        from irviewer import api

        return getattr(api, name)
    raise AttributeError(f"module 'irviewer' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *API})


class _Face(types.ModuleType):
    """The package's module, whose ``view`` is the API's function (``irviewer.view(...)``)
    although the subpackage of the window's view models is :mod:`irviewer.view` too:
    importing that subpackage binds it here (as the import system binds every submodule
    to its package), and the binding is kept aside instead of hiding the function. Its
    modules are imported by name as ever (``from irviewer.view.summary import ...``)."""

    @property
    def view(self) -> Any:
        from irviewer.api import view

        return view

    @view.setter
    def view(self, module: types.ModuleType) -> None:
        self.__dict__["_view_models"] = module


sys.modules[__name__].__class__ = _Face


__all__ = ["API", "ArgumentError", "Demo", "Result", "Scored", "Viewer", "__version__", "demo",
           "evaluate", "read_dataset", "view"]
