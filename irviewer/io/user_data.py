"""The user's own data folder, one rule for every file irviewer keeps for the user.

The folder is the platform's per-user data folder as ``platformdirs`` names it
(``~/.local/share/irviewer`` on Linux, honouring ``XDG_DATA_HOME``;
``~/Library/Application Support/irviewer`` on macOS; ``%LOCALAPPDATA%\\irviewer`` on
Windows). It holds the sessions the window keeps per dataset (``sessions/``) and the label
corrections of datasets whose own folder cannot be written (``corrections/``: a shared
benchmark on a read-only mount or in another user's folder), each under a name that is
found again on the next opening of the same dataset (:func:`kept_name`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import platformdirs

APP_NAME = "irviewer"


def user_data_folder() -> Path:
    """Return the user's irviewer data folder (not created here)."""
    return Path(platformdirs.user_data_path(APP_NAME, appauthor=False))


def user_subfolder(name: str) -> Path:
    """Return the folder ``name`` of the user's data folder, created when missing."""
    folder = user_data_folder() / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def make_room_for(path: Path) -> None:
    """Create the folder of ``path`` when it lies in the user's data folder (created on the
    first file written there); a folder elsewhere is the user's to make."""
    folder = Path(path).parent
    base = user_data_folder()
    if folder == base or base in folder.parents:
        folder.mkdir(parents=True, exist_ok=True)


def can_write_in(folder: Path) -> bool:
    """Return True when files can be created and replaced in ``folder`` (it exists and the
    user may write there; a read-only mount says no even to root)."""
    folder = Path(folder)
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def kept_name(path: Path, stem: str, suffix: str) -> str:
    """Return the file name ``<stem>-<key><suffix>`` under which the user's data folder
    keeps a file for the dataset at ``path``: ``stem`` is readable (the dataset's own name),
    the key the first 12 hex digits of the SHA-256 of the dataset's absolute path with links
    resolved, so that two datasets of one name stay apart and the same dataset, opened
    again by any path, finds its file."""
    where = str(Path(path).expanduser().resolve())
    digest = hashlib.sha256(where.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return f"{stem}-{digest}{suffix}"


def adopt_files(old: Path, new: Path) -> list[Path]:
    """Move into the folder ``new`` every file of the folder ``old`` that ``new`` does not
    have (a rename on one file system, else a copy then a delete), and remove ``old`` when
    that leaves it empty; return the moved files' new paths. A file ``new`` already has stays
    where it is, in ``old``: nothing is overwritten or lost. Nothing happens when ``old`` is
    missing or is ``new``."""
    old, new = Path(old), Path(new)
    if not old.is_dir() or old.resolve() == new.resolve():
        return []
    new.mkdir(parents=True, exist_ok=True)
    moved = []
    for f in sorted(old.iterdir()):
        target = new / f.name
        if f.is_file() and not target.exists():
            shutil.move(str(f), str(target))
            moved.append(target)
    if not any(old.iterdir()):
        old.rmdir()
    return moved
