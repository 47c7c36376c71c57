"""Where the window keeps sessions (Qt-free): the autosave file beside a session, one automatic
session per dataset and set of methods, the recent-files list, a session's name in menus."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from irviewer.opening.request import SESSION_SUFFIX
from irviewer.opening.session_file import SessionFile

#: What the autosave file adds to its session's name: ``name.irv`` -> ``name.irv~autosave``.
AUTOSAVE_SUFFIX = "~autosave"


def session_label(session: SessionFile) -> str:
    """Return a one-line name for menus: "demo.csv — strong.npz, weak.npz"."""
    return f"{session.dataset.name} — {', '.join(p.name for p in session.sources)}"


def auto_session_path(folder: Path, dataset: Path, sources: tuple[Path, ...]) -> Path:
    """Return where the view of ``dataset`` with ``sources`` is kept when the user has not
    saved it as a session: one file per dataset and set of methods in ``folder``, so that
    opening the same files again (File ▸ Recent) restores where one left off."""
    key = "\n".join(str(Path(os.path.abspath(p))) for p in (dataset, *sources))
    digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(dataset).stem)
    return Path(folder) / f"{stem[:40]}-{digest}{SESSION_SUFFIX}"


def autosave_path(session_path: Path) -> Path:
    """Return the autosave file beside ``session_path``: ``name.irv`` -> ``name.irv~autosave``
    in the same folder."""
    session_path = Path(session_path)
    return session_path.with_name(session_path.name + AUTOSAVE_SUFFIX)


def _same_key(path: str) -> str:
    """Return the key that identifies ``path`` for de-duplication (resolved, case-folded
    where the file system ignores case)."""
    try:
        resolved = Path(path).expanduser().resolve()
    except (OSError, RuntimeError):
        resolved = Path(os.path.abspath(path))
    return os.path.normcase(str(resolved))


def recent_files_update(recent: list[str], new: str, limit: int = 10) -> list[str]:
    """Return a new recent-files list: ``new`` first, then the entries of ``recent`` in their
    order without any that resolve to the same file as an earlier one, cut to ``limit``.

    ``recent`` is not changed. ``new`` is kept as given (not resolved).
    """
    out: list[str] = []
    seen: set[str] = set()
    for entry in (new, *recent):
        key = _same_key(entry)
        if key in seen:
            continue
        seen.add(key)
        out.append(entry)
        if len(out) >= max(limit, 0):
            break
    return out[:max(limit, 0)]
