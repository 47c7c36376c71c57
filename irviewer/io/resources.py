"""Where irviewer's resources (icons, the demo dataset) are, installed or in a checkout."""

from __future__ import annotations

from pathlib import Path

#: The ``irviewer`` package folder (this module is ``irviewer/io/resources.py``).
_PACKAGE = Path(__file__).resolve().parents[1]


def resources_dir() -> Path:
    """Return the resources folder: the wheel's ``irviewer/resources``, else the checkout's.

    A wheel maps the top-level ``resources/`` into the package (see pyproject.toml); a source
    checkout (editable install or plain clone) keeps it beside the package.
    """
    installed = _PACKAGE / "resources"
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / "resources"
