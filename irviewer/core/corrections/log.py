"""The corrections log: the ordered overlay of corrections on the published ground truth, with
exact undo of the last one and removal from the middle by replaying the later ones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from irviewer.core.corrections.apply import Change, apply_correction, now_and_wanted
from irviewer.core.corrections.correction import Correction, NothingToChangeError
from irviewer.core.dataset import Dataset
from irviewer.core.errors import counted


@dataclass(frozen=True)
class LogEntry:
    """One applied correction: the correction, the item's group or label before it, the
    positions of the queries it touched, and whether it set what was already there (only
    possible for a correction replayed after an earlier one was removed)."""

    correction: Correction
    before: str
    changed: np.ndarray
    sets_nothing: bool = False


class CorrectionLog:
    """The ordered corrections applied over a published dataset, and the corrected dataset.

    ``published`` is never modified; ``dataset`` is ``published`` with every entry applied
    in order. :meth:`push` / :meth:`pop` apply and exactly undo the last correction;
    :meth:`remove` / :meth:`insert` take one out of (or put one back into) the middle by
    replaying the later ones. Each returns the positions of the queries to re-score.
    """

    def __init__(self, published: Dataset) -> None:
        self.published = published
        self.dataset = published
        self._entries: list[LogEntry] = []
        self._changes: list[Change] = []

    @property
    def entries(self) -> tuple[LogEntry, ...]:
        """Return the applied corrections in order."""
        return tuple(self._entries)

    @property
    def corrections(self) -> tuple[Correction, ...]:
        """Return the corrections in the order they were applied."""
        return tuple(e.correction for e in self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def changed_queries(self) -> np.ndarray:
        """Return the sorted positions of every query some correction touched."""
        parts = [e.changed for e in self._entries]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)

    def check(self, correction: Correction) -> None:
        """Raise :class:`NothingToChangeError` when ``correction`` would set what the corrected
        ground truth already has (InputError for an unknown name or a label the family
        refuses); apply nothing. The window asks before it asks for the author's name."""
        now, _, same = now_and_wanted(self.dataset, correction)
        if same:
            raise NothingToChangeError(self.dataset.label(), correction, str(now))

    def push(self, correction: Correction) -> np.ndarray:
        """Apply ``correction`` last; return the changed query positions.

        :class:`NothingToChangeError` (an InputError) when it would set what the corrected ground
        truth already has: the log stays as it was, so such a correction is never an undo
        step nor a row of the file. InputError as :func:`apply_correction` otherwise."""
        return self._push(correction, replaying=False)

    def _push(self, correction: Correction, replaying: bool) -> np.ndarray:
        change = apply_correction(self.dataset, correction)
        if change.sets_nothing and not replaying:
            raise NothingToChangeError(self.dataset.label(), correction, change.before)
        self.dataset = change.dataset
        self._changes.append(change)
        self._entries.append(LogEntry(correction, change.before, change.changed,
                                      change.sets_nothing))
        return change.changed

    def pop(self) -> LogEntry:
        """Undo the last correction exactly; return its entry (``changed`` says which
        queries to re-score). IndexError when the log is empty."""
        change = self._changes.pop()
        entry = self._entries.pop()
        self.dataset = change.undone(self.dataset)
        return entry

    def remove(self, position: int) -> np.ndarray:
        """Take the correction at ``position`` out (the later ones are replayed); return the
        positions of the queries whose ground truth may have changed."""
        kept = [e.correction for e in self._entries]
        del kept[position]
        return self._rebuild(kept, position)

    def insert(self, position: int, correction: Correction) -> np.ndarray:
        """Put ``correction`` back at ``position`` (undo of :meth:`remove`); return the
        positions of the queries whose ground truth may have changed."""
        kept = [e.correction for e in self._entries]
        kept.insert(position, correction)
        return self._rebuild(kept, position)

    def saved(self) -> tuple[Correction, ...]:
        """Return the corrections to save: for each (query, item), the last one, in the
        order of those last ones. A later correction of the same pair or image replaces the
        earlier one, so a file never holds two rows that contradict each other. A pair or
        image whose corrections end where they started (set to junk, then back to good)
        writes no row: read back, it would set what is already there."""
        first: dict[tuple[str, str], int] = {}
        last: dict[tuple[str, str], int] = {}
        for i, c in enumerate(self.corrections):
            first.setdefault(c.key, i)
            last[c.key] = i
        return tuple(c for i, c in enumerate(self.corrections)
                     if last[c.key] == i and not self._undone(first[c.key], i))

    def _undone(self, first: int, last: int) -> bool:
        """Return True when the corrections of one pair or image, from entry ``first`` to
        entry ``last``, together set nothing: the last sets what the first found. For a
        pair that holds when no relabel lies between them (relabels may rewrite the pair;
        other pairs never do); for an image, only for one entry that set nothing itself."""
        entries = self._entries
        if first == last:
            return entries[last].sets_nothing
        if entries[last].correction.is_relabel:
            return False
        return (entries[first].before == entries[last].correction.label
                and not any(e.correction.is_relabel for e in entries[first + 1:last]))

    def _rebuild(self, corrections: Sequence[Correction], position: int) -> np.ndarray:
        touched = [e.changed for e in self._entries[position:]]
        while len(self._entries) > position:
            self.pop()
        for c in corrections[position:]:  # each was a change when made: kept, for exact undo
            touched.append(self._push(c, replaying=True))
        return np.unique(np.concatenate(touched)) if touched else np.zeros(0, np.int64)


def applied_summary(log: CorrectionLog) -> str:
    """Return the notice shown after loading corrections: how many, and queries touched."""
    return (f"{counted(len(log), 'correction')} applied, "
            f"{counted(len(log.changed_queries()), 'query', 'queries')} changed")
