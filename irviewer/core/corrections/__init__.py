"""Label corrections: fix a benchmark's ground truth where it is wrong, undoably, as an overlay.

A :class:`Correction` is either

* a **pair** correction (query, item, new group or ``negative``): the item's relation to that
  one query, in the family's own groups (:data:`PAIR_CHOICES`), or
* an **image relabel** (empty query, item, new instance / identity / group label) for families
  whose relevance follows from image labels (instance sets, re-identification, INRIA
  Holidays): every query that label touches changes, by the family's rule in
  :mod:`irviewer.core.label_rules`, the very function the reader built the dataset with.

:func:`apply_correction` returns a :class:`Change`: the new :class:`Dataset`, the positions of
the queries whose ground truth changed (only those need re-scoring: the ranking never
changes), and what :meth:`Change.undone` needs to restore the dataset exactly. A relabel
changes only the (query, image) pairs whose label-derived relation changes; pair corrections
elsewhere stay. Images removed from every ranking (re-id id -1, an instance set's ignored
labels) stay removed, since changing that would need ranking again. A
:class:`CorrectionLog` is the ordered overlay on the published ground truth (author, time,
note per correction, and the queries each one touched); a
:class:`CorrectionCommand` is one correction as a Qt-free command with ``do`` / ``undo`` /
``label`` that a ``QUndoCommand`` wraps. The published files are never written; the corrected
ground truth is exported on request (``irviewer apply-corrections``).

One rule holds for every way a correction enters a log (the window's gestures, the Review
dock's Enter, a corrections file read by the command line or the window): a correction
that would set what the ground truth already has is not pushed
(:meth:`CorrectionLog.push` raises :class:`NothingToChangeError`), so it is neither an undo
step nor a row of the file. :func:`sets_nothing` is the same test without applying
anything (the review queue asks it of every suspect's fix).
"""
from irviewer.core.corrections.apply import (
    Change,
    apply_correction,
    beyond_labels,
    group_of,
    preview_relabel,
    sets_nothing,
)
from irviewer.core.corrections.commands import (
    BatchCorrectionCommand,
    CorrectionCommand,
    RemoveCorrectionCommand,
)
from irviewer.core.corrections.correction import (
    GEOMETRY_LABELS,
    NEGATIVE,
    PAIR_CHOICES,
    Correction,
    NothingToChangeError,
    can_relabel,
    family,
    pair_choices,
    pair_labels,
    utc_now,
)
from irviewer.core.corrections.log import CorrectionLog, LogEntry, applied_summary

__all__ = ["GEOMETRY_LABELS", "NEGATIVE", "PAIR_CHOICES", "BatchCorrectionCommand", "Change",
           "Correction",
           "CorrectionCommand", "CorrectionLog", "LogEntry", "NothingToChangeError",
           "RemoveCorrectionCommand", "applied_summary", "apply_correction", "beyond_labels",
           "can_relabel", "family", "group_of", "pair_choices", "pair_labels", "preview_relabel",
           "sets_nothing", "utc_now"]
