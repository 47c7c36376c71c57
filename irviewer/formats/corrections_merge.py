"""Two writers of one corrections file (two windows, two annotators on a shared folder)
never lose each other's work: before each write, what is on disk is read under a lock
(:mod:`irviewer.formats.file_lock`) and merged with what this writer changed since it last
read the file (:func:`merge`); a pair (or image) corrected differently by both keeps the
later correction (by its ``time``), and the result says whose it replaced, naming the
writer (author, window and machine: two windows of one person are told apart)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from irviewer.core.corrections import Correction
from irviewer.core.errors import counted
from irviewer.formats.corrections_file import (
    COLUMNS,
    parse_time,
    read_csv_text,
    read_rows,
    write_corrections,
)
from irviewer.formats.file_lock import WAIT, locked
from irviewer.io import user_data

Key = tuple[str, str]


@dataclass(frozen=True)
class Merged:
    """The corrections file after a merge: ``rows`` (one per pair or image), and what the
    other writers did since this one last read it: corrections of pairs this writer has no
    correction of that they ``added``, pairs where their (later) correction ``replaced`` the
    one this writer holds ((ours, theirs)), pairs where ours was later and ``kept`` over
    theirs ((theirs, ours)), and corrections they ``removed``."""

    rows: tuple[Correction, ...]
    added: tuple[Correction, ...] = ()
    replaced: tuple[tuple[Correction, Correction], ...] = ()
    kept: tuple[tuple[Correction, Correction], ...] = ()
    removed: tuple[Correction, ...] = ()

    @property
    def theirs(self) -> bool:
        """Return True when the merge brought in something another writer did."""
        return bool(self.added or self.replaced or self.removed)

    def sentence(self) -> str:
        """Return what the other writers did, for the status line ("" when nothing), e.g.
        "2 corrections by bob in window 7c1e on lab-2 were added while you worked; bob in
        window 7c1e on lab-2 replaced your correction of hertford_1 / magdalen_000661:
        junk → negative"."""
        said = []
        if self.added:
            said.append(f"{counted(len(self.added), 'correction')} by "
                        f"{_authors(self.added)} {'was' if len(self.added) == 1 else 'were'} "
                        "added while you worked")
        for ours, theirs in self.replaced:
            said.append(f"{writer(theirs)} replaced your correction of {_pair(theirs)}: "
                        f"{ours.label} → {theirs.label}")
        for theirs, ours in self.kept:
            said.append(f"your later correction of {_pair(ours)} ({ours.label}) replaced "
                        f"{writer(theirs)}'s ({theirs.label}), saved just before yours")
        if self.removed:
            said.append(f"{counted(len(self.removed), 'correction')} "
                        f"{'was' if len(self.removed) == 1 else 'were'} deleted in another "
                        f"window, e.g. {_pair(self.removed[0])}")
        return "; ".join(said)


def merge(base: Sequence[Correction], ours: Sequence[Correction],
          disk: Sequence[Correction]) -> Merged:
    """Return the three-way merge of a corrections file: ``base`` is what this writer last
    read or wrote, ``ours`` what it holds now, ``disk`` what the file holds now (each one row
    per pair or image). A pair only one side changed takes that side's row (a deletion
    included); a pair both changed differently takes the later row by ``time`` (a change
    beats a deletion; a tie keeps ours). Rows keep the file's order; ours that are new
    follow in our order."""
    b, o, d = _by_key(base), _by_key(ours), _by_key(disk)
    chosen: dict[Key, Correction | None] = {}
    added, replaced, kept, removed = [], [], [], []
    for key in [*d, *(k for k in o if k not in d), *(k for k in b if k not in d and k not in o)]:
        was, mine, theirs = b.get(key), o.get(key), d.get(key)
        if theirs == was or mine == theirs:
            chosen[key] = mine
        elif mine == was:
            chosen[key] = theirs
            if theirs is None:
                removed.append(was)
            elif mine is None:
                added.append(theirs)
            else:
                replaced.append((mine, theirs))
        elif mine is None or (theirs is not None and later(theirs, mine)):
            assert theirs is not None
            chosen[key] = theirs
            if mine is None:
                added.append(theirs)
            else:
                replaced.append((mine, theirs))
        else:
            chosen[key] = mine
            if theirs is not None:
                kept.append((theirs, mine))
    rows = tuple(c for c in chosen.values() if c is not None)
    return Merged(rows, tuple(added), tuple(replaced), tuple(kept),
                  tuple(c for c in removed if c is not None))


def later(a: Correction, b: Correction) -> bool:
    """Return True when ``a`` was made after ``b`` by their ISO 8601 ``time`` (compared as
    instants, whatever their offsets; a row without a time is the earliest)."""
    ta, tb = parse_time(a.time), parse_time(b.time)
    return ta is not None and (tb is None or ta > tb)


def save_merged(path: Path, base: Sequence[Correction], ours: Sequence[Correction],
                wait: float = WAIT, window: str = "") -> Merged:
    """Merge ``ours`` (changed since ``base`` was read) into the corrections file at
    ``path`` under its lock (waiting up to ``wait`` seconds for another writer; ``window``
    names this writer in the lock) and write the result when it differs from the file;
    return the merge (its ``rows`` are the file now). :class:`~irviewer.formats.file_lock.
    LockHeldError` while another writer holds the lock; InputError for a file that cannot be
    read or a folder that cannot be written."""
    path = Path(path)
    user_data.make_room_for(path)
    with locked(path, wait, window):
        disk = read_disk(path)
        merged = merge(base, ours, disk)
        if merged.rows != tuple(disk) or not path.is_file():
            write_corrections(path, merged.rows)
    return merged


def read_disk(path: Path) -> tuple[Correction, ...]:
    """Return the rows of the corrections file at ``path`` as written (empty when there is
    none), unchecked against a dataset; InputError for a file that cannot be read."""
    path = Path(path)
    if not path.is_file():
        return ()
    return tuple(c for _, c in read_rows(read_csv_text(path, "a corrections file", COLUMNS),
                                         path.name))


def _by_key(rows: Iterable[Correction]) -> dict[Key, Correction]:
    """Return key -> the last row of that key (a file holds one per key)."""
    return {c.key: c for c in rows}


def writer(c: Correction) -> str:
    """Return who made ``c`` in words: the author, the window and the machine when the
    file names them ("anna in window 7c1e on lab-2"; "someone" for a row naming nobody)."""
    who = c.author or c.user or "someone"
    where = (f" in window {c.window}" if c.window else "") + (
        f" on {c.machine}" if c.machine else "")
    return who + where


def _authors(rows: Sequence[Correction]) -> str:
    names = list(dict.fromkeys(writer(c) for c in rows))
    return " and ".join(names) if len(names) <= 2 else f"{', '.join(names[:-1])} and {names[-1]}"


def _pair(c: Correction) -> str:
    return c.item if c.is_relabel else f"{c.query} / {c.item}"
