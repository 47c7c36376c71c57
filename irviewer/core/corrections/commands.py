"""A correction, and the removal of one, as Qt-free undoable commands (``do`` / ``undo`` /
``label``) over a :class:`~irviewer.core.corrections.log.CorrectionLog`, which the window's
``QUndoCommand`` wraps."""

from __future__ import annotations

import numpy as np

from irviewer.core.corrections.correction import Correction
from irviewer.core.corrections.log import CorrectionLog


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
