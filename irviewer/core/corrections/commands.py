"""A correction, several as one (the fix of one problem that several queries share: the five
queries of an Oxford landmark list the same images, so an image wrongly in their good lists
is one problem, fixed in every list at once), and the removal of one, as Qt-free undoable
commands (``do`` / ``undo`` / ``label``) over a
:class:`~irviewer.core.corrections.log.CorrectionLog`, which the window's ``QUndoCommand``
wraps."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from irviewer.core.corrections.correction import Correction, NothingToChangeError
from irviewer.core.corrections.log import CorrectionLog
from irviewer.core.errors import counted


class CorrectionCommand:
    """One correction as an undoable command (the shape of glue's ``core/command.py``):
    ``do`` applies it to a :class:`CorrectionLog`, ``undo`` reverts it exactly; both return
    the positions of the queries to re-score. A ``QUndoCommand`` wraps it with ``label``."""

    def __init__(self, correction: Correction) -> None:
        self.correction = correction
        self.before: str | None = None

    @property
    def label(self) -> str:
        """Return the text of Edit ▸ Undo / Redo for this command."""
        return self.correction.describe(self.before)

    def do(self, log: CorrectionLog) -> np.ndarray:
        """Apply the correction as the log's last; return the changed query positions.
        :class:`NothingToChangeError` when it would set what is already there (the log is left
        as it was: the command is not to be kept)."""
        changed = log.push(self.correction)
        self.before = log.entries[-1].before
        return changed

    def undo(self, log: CorrectionLog) -> np.ndarray:
        """Revert the correction (it must be the log's last); return the changed queries."""
        if not len(log) or log.entries[-1].correction != self.correction:
            raise RuntimeError("undo out of order: this correction is not the log's last")
        return log.pop().changed


class RemoveCorrectionCommand:
    """Deleting one correction from the log (the Corrections panel), undoably."""

    def __init__(self, position: int) -> None:
        self.position = position
        self.removed: Correction | None = None

    @property
    def label(self) -> str:
        """Return the text of Edit ▸ Undo / Redo for this command."""
        what = self.removed.describe() if self.removed is not None else "a correction"
        return f"delete correction {what}"

    def do(self, log: CorrectionLog) -> np.ndarray:
        """Remove the correction at ``position``; return the queries to re-score."""
        self.removed = log.corrections[self.position]
        return log.remove(self.position)

    def undo(self, log: CorrectionLog) -> np.ndarray:
        """Put the removed correction back where it was; return the queries to re-score."""
        assert self.removed is not None, "undo before do"
        return log.insert(self.position, self.removed)


class BatchCorrectionCommand:
    """Corrections applied together and undone together (the shape of
    :class:`~irviewer.core.corrections.CorrectionCommand`): ``do`` applies each as the log's
    last, leaving out those that set what is already there; ``undo`` reverts exactly the
    ones applied. Both return the positions of the queries to re-score."""

    def __init__(self, corrections: Sequence[Correction]) -> None:
        if not corrections:
            raise ValueError("a batch needs at least one correction")
        self.corrections = tuple(corrections)
        self.applied: tuple[Correction, ...] = ()
        self.before: str | None = None

    @property
    def label(self) -> str:
        """Return the text of Edit ▸ Undo / Redo for this command: the first correction and
        how many queries it fixes ("hertford_000116: negative → good for 5 queries")."""
        first = self.corrections[0]
        what = first.describe(self.before)
        n = len({c.query for c in self.applied or self.corrections})
        if n < 2:
            return what
        return f"{what} and the same for {counted(n - 1, 'other query', 'other queries')}"

    def do(self, log: CorrectionLog) -> np.ndarray:
        """Apply every correction that changes something, in order; return the changed
        query positions. :class:`NothingToChangeError` (the first one's) when none does:
        the log is left as it was and the command is not to be kept."""
        changed = [np.zeros(0, np.int64)]
        applied = []
        refused: NothingToChangeError | None = None
        for c in self.corrections:
            try:
                changed.append(log.push(c))
            except NothingToChangeError as e:
                refused = refused or e
                continue
            applied.append(c)
            if self.before is None:
                self.before = log.entries[-1].before
        if not applied:
            assert refused is not None
            raise refused
        self.applied = tuple(applied)
        return np.unique(np.concatenate(changed))

    def undo(self, log: CorrectionLog) -> np.ndarray:
        """Revert the applied corrections (they must be the log's last); return the changed
        queries."""
        n = len(self.applied)
        if len(log) < n or tuple(e.correction for e in log.entries[-n:]) != self.applied:
            raise RuntimeError("undo out of order: these corrections are not the log's last")
        changed = [np.zeros(0, np.int64)]
        for _ in range(n):
            changed.append(log.pop().changed)
        return np.unique(np.concatenate(changed))
