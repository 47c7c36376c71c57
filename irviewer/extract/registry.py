"""Finding extractors by name: the entry-point group ``irviewer.extractors``.

A package makes its extractor available to irviewer by declaring, in its pyproject.toml::

    [project.entry-points."irviewer.extractors"]
    my-net = "my_package.extractor:make_extractor"

where ``make_extractor`` is called with no arguments and returns an object with ``name``,
``dim`` and ``__call__(image) -> float32 vector`` (:class:`~irviewer.extract.base.Extractor`);
a class works too. It is loaded on first use and kept (one instance per name), so heavy
weights load once and only when a search needs them. irviewer's own ``demo-vlad`` is
declared the same way in irviewer's pyproject.toml, and also known here (:data:`BUILTIN`)
so a checkout that was never pip-installed finds it.
"""

from __future__ import annotations

import threading
import zipfile
from pathlib import Path

import numpy as np

from irviewer.core.errors import InputError
from irviewer.extract.base import Extractor, Learner

GROUP = "irviewer.extractors"
#: Extractors irviewer itself provides: name -> "module:attribute" (as in pyproject.toml).
BUILTIN = {"demo-vlad": "irviewer.extract.vlad:demo_extractor"}

_loaded: dict[str, Extractor] = {}
_lock = threading.Lock()


def available() -> dict[str, str]:
    """Return every installed extractor: name -> "module:attribute", the built-in ones
    included, sorted by name."""
    from importlib.metadata import entry_points  # 14 ms: only when an extractor is looked up

    found = dict(BUILTIN)
    for ep in entry_points(group=GROUP):
        found[ep.name] = ep.value
    return dict(sorted(found.items()))


def installed_names() -> str:
    """Return the installed extractor names as a comma-separated list, for messages."""
    return ", ".join(available()) or "none"


def get_extractor(name: str) -> Extractor:
    """Return the extractor registered as ``name``, loading it on first use.

    Raises InputError with one sentence when no extractor has that name, when it cannot be
    loaded (its package is broken, its weights are missing), or when what it returns lacks
    ``name``, ``dim`` or a call.
    """
    with _lock:
        if name in _loaded:
            return _loaded[name]
        targets = available()
        if name not in targets:
            raise InputError(f"no extractor is called {name!r} (installed: "
                             f"{installed_names()}); install the package that provides it")
        from importlib.metadata import EntryPoint

        try:
            factory = EntryPoint(name=name, value=targets[name], group=GROUP).load()
            extractor = factory()
        except InputError:
            raise
        except Exception as e:
            raise InputError(f"extractor {name!r} ({targets[name]}) cannot be loaded: "
                             f"{type(e).__name__}: {e}") from None
        dim = getattr(extractor, "dim", None)
        if not isinstance(extractor, Extractor) or not isinstance(dim, int) or dim < 1:
            raise InputError(f"extractor {name!r} ({targets[name]}) does not give an object "
                             "with a name, a positive integer dim and a call image -> vector")
        _loaded[name] = extractor
        return extractor



def load_extractor(name: str, state: Path | None = None) -> Extractor:
    """Return the extractor ``name`` (:func:`get_extractor`) with what it learnt from a
    collection loaded from ``state`` (an .npz of named arrays, :meth:`Learner.state`), or
    as installed when ``state`` is None.

    InputError with one sentence when the state file is missing or unreadable, or the
    extractor cannot learn (it is not a :class:`~irviewer.extract.base.Learner`), besides
    :func:`get_extractor`'s.
    """
    extractor = get_extractor(name)
    if state is None:
        return extractor
    if not isinstance(extractor, Learner):
        raise InputError(f"extractor {name!r} learns nothing, but {Path(state).name} is named "
                         "as what it learnt; describe the photos again with it")
    try:
        with np.load(state, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except FileNotFoundError:
        raise InputError(f"{state}: missing (what extractor {name!r} learnt from the "
                         "collection); index the photos again to make it") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise InputError(f"{Path(state).name}: not readable as what extractor {name!r} "
                         f"learnt ({e}); index the photos again to make it") from None
    return extractor.with_state(arrays, Path(state).name)
