"""The review queue (Qt-free): which of the audit's suspects are shown, which are reviewed,
the counts and the kind filter, and the words the Review suspects panel paints.

The suspects come from :func:`irviewer.core.audit.iter_audit`, most suspicious first; the
queue keeps that order. A suspect is *accepted* ("fixed") while its suggested fix is in
place in the corrected ground truth, whatever correction put it there (its own, or a
relabel that made the pair right): the core's test of a correction that would set nothing
(:func:`irviewer.core.corrections.sets_nothing`), asked again after every correction, undo
and redo, so undoing the fix makes it open again. A suspect is *checked* when a person said
the label stands (:class:`~irviewer.formats.reviewed_file.Reviewed`, kept in the reviewed
file), else *open*. Suspects checked in an earlier session are left out of the queue: a
question answered is never asked again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

from irviewer.core.audit import (
    DUPLICATE,
    HUB,
    KINDS,
    LABEL,
    NEG_POS,
    POS_NEG,
    QUERY,
    WRONG_LIST,
    Suspect,
    score_words,
    span,
)
from irviewer.core.corrections import sets_nothing
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError, counted
from irviewer.core.evaluation import Evaluation
from irviewer.formats.reviewed_file import Reviewed
from irviewer.view.result_list import ResultTile, result_list

OPEN, ACCEPTED, CHECKED = "open", "accepted", "checked"

#: Each kind as the panel names it.
KIND_WORDS = {
    WRONG_LIST: "in the wrong list",
    NEG_POS: "negative looks positive",
    POS_NEG: "positive looks negative",
    LABEL: "image label disagrees",
    DUPLICATE: "near-duplicate conflict",
    QUERY: "query ground truth",
    HUB: "hub (informational)",
}

#: The mark of a reviewed row, painted in the queue's first column (a shape, not a colour).
STATE_MARKS = {OPEN: "", ACCEPTED: "✓ fixed", CHECKED: "● stands"}


def suspect_key(suspect: Suspect) -> tuple[str, str, str]:
    """Return the question ``suspect`` asks: (kind, query or "", item)."""
    return suspect.kind, suspect.query or "", suspect.item


def fix_words(suspect: Suspect) -> str:
    """Return the suggested fix as the queue shows it: ``negative → good`` for a pair,
    ``relabel → 40`` for an image (its label now is in the details), ``look at it`` when
    there is no single fix."""
    if suspect.correction is None or suspect.suggested is None:
        return "look at it" if suspect.kind != HUB else "—"
    if suspect.kind == WRONG_LIST:
        into, out = lists_of(suspect)
        return f"{suspect.labelled}: {span(list(out))} → {span(list(into))}"
    if suspect.correction.is_relabel:
        return f"relabel → {suspect.suggested}"
    return f"{suspect.labelled} → {suspect.suggested}"


def lists_of(suspect: Suspect) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return (the queries whose lists the fix puts the item in, those it takes it out of):
    for an image in the wrong list, the list it looks like and the list that has it."""
    into: list[str] = []
    out: list[str] = []
    for label, queries in suspect.moves():
        (into if label == suspect.suggested else out).extend(queries)
    return tuple(into), tuple(out)


def query_words(suspect: Suspect) -> str:
    """Return the query column: the query, ``hertford_1 +4`` for a suspect of 5 queries
    sharing a list, ``—`` for an image-level suspect."""
    if not suspect.query:
        return "—"
    more = len(suspect.queries) - 1
    return f"{suspect.query} +{more}" if more > 0 else suspect.query


def ranks_words(suspect: Suspect, query_name: str | None) -> str:
    """Return the item's rank under each method for the query the evidence is shown for
    ("rank 2 under A.npz, 3 under B.npz for L001_q0"); "" without ranks."""
    if not suspect.ranks:
        return ""
    parts = [f"{'unranked' if r is None else r} under {m}" for m, r in suspect.ranks]
    where = f" for {query_name}" if query_name else ""
    return "rank " + ", ".join(parts) + where


@dataclass(frozen=True)
class ReviewedCount:
    """How many of the shown kind's suspects are reviewed (accepted or checked)."""

    reviewed: int
    total: int

    def text(self) -> str:
        """Return "12 of 40 reviewed"."""
        return f"{self.reviewed} of {self.total} reviewed"


class ReviewQueue:
    """The audit's suspects as a queue to work through.

    ``suspects`` most suspicious first; ``reviewed`` the records of the reviewed file
    (their questions are left out); ``ground_truth`` the corrected ground truth now (see
    :meth:`set_ground_truth`).
    """

    def __init__(self, suspects: Sequence[Suspect] = (), reviewed: Iterable[Reviewed] = (),
                 ground_truth: Dataset | None = None) -> None:
        before = {r.key for r in reviewed}
        self.suspects = tuple(s for s in suspects if suspect_key(s) not in before)
        self.skipped = len(suspects) - len(self.suspects)
        self.checked: dict[tuple[str, str, str], Reviewed] = {}
        self.kind: str | None = None
        self.hide_reviewed = False
        self._fixed: frozenset[int] = frozenset()
        if ground_truth is not None:
            self.set_ground_truth(ground_truth)

    # -- state ---------------------------------------------------------------------------
    def set_ground_truth(self, dataset: Dataset) -> None:
        """Check every suspect's suggested fix against ``dataset``, the corrected ground
        truth now (after a correction, undo or redo): a suspect whose fix is in place is
        accepted. One cheap look per suspect (no correction is applied)."""
        self._fixed = frozenset(i for i, s in enumerate(self.suspects)
                                if s.fixes() and _in_place(dataset, s))

    def state(self, position: int) -> str:
        """Return ``open``, ``accepted`` or ``checked`` for the suspect at ``position``."""
        if position in self._fixed:
            return ACCEPTED
        return CHECKED if suspect_key(self.suspects[position]) in self.checked else OPEN

    def can_accept(self, position: int) -> bool:
        """Return True when the suspect at ``position`` has a fix and is not accepted."""
        return bool(self.suspects[position].fixes()) and self.state(position) != ACCEPTED

    def toggle_checked(self, position: int, author: str = "", time: str = "") -> bool:
        """Mark the suspect at ``position`` "checked, the label stands", or unmark it when it
        is; return True when it is checked now. An accepted suspect is not checked."""
        s = self.suspects[position]
        key = suspect_key(s)
        if key in self.checked:
            del self.checked[key]
            return False
        if self.state(position) == ACCEPTED:
            return False
        self.checked[key] = Reviewed(s.kind, s.query or "", s.item, s.labelled, author, time)
        return True

    def records(self, earlier: Iterable[Reviewed] = ()) -> tuple[Reviewed, ...]:
        """Return the reviewed file's rows: ``earlier`` (read from it), then this session's
        checks, one row per question."""
        out = {r.key: r for r in earlier}
        out.update(self.checked)
        return tuple(out.values())

    # -- what is shown ---------------------------------------------------------------------
    def set_kind(self, kind: str | None) -> None:
        """Show only ``kind`` (None: every kind)."""
        if kind is not None and kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}")
        self.kind = kind

    def kinds(self) -> tuple[tuple[str, int], ...]:
        """Return (kind, how many suspects) for each kind in the queue, in :data:`KINDS`
        order (the filter's choices)."""
        counts = {k: 0 for k in KINDS}
        for s in self.suspects:
            counts[s.kind] += 1
        return tuple((k, n) for k, n in counts.items() if n)

    def of_kind(self) -> list[int]:
        """Return the positions of the suspects of the chosen kind (all without one)."""
        return [i for i, s in enumerate(self.suspects) if self.kind in (None, s.kind)]

    def rows(self) -> tuple[int, ...]:
        """Return the positions shown: the chosen kind, reviewed ones hidden when asked."""
        return tuple(i for i in self.of_kind()
                     if not (self.hide_reviewed and self.state(i) != OPEN))

    def count(self) -> ReviewedCount:
        """Return how many of the chosen kind's suspects are reviewed."""
        positions = self.of_kind()
        done = sum(1 for i in positions if self.state(i) != OPEN)
        return ReviewedCount(done, len(positions))

    def next_open(self, position: int) -> int | None:
        """Return the first shown open suspect after ``position`` (wrapping round), else
        None: where the selection goes after a suspect is answered."""
        rows = self.rows()
        after = [i for i in rows if i > position] + [i for i in rows if i <= position]
        return next((i for i in after if self.state(i) == OPEN and i != position), None)

    def note(self) -> str:
        """Return what the panel says under the queue about questions answered before."""
        if not self.skipped:
            return ""
        return (f"{counted(self.skipped, 'suspect')} checked before (in the reviewed file) "
                "not asked again")


def _in_place(dataset: Dataset, suspect: Suspect) -> bool:
    """Return True when each of ``suspect``'s suggested corrections (one per query sharing
    the label) would set nothing in ``dataset``: its fix is there (a name the dataset does
    not have: not in place)."""
    try:
        return all(sets_nothing(dataset, c) for c in suspect.fixes())
    except InputError:
        return False


# -- what selecting a suspect shows ------------------------------------------------------

def context_query(dataset: Dataset, suspect: Suspect) -> int:
    """Return the query whose ranking shows ``suspect`` best: the audit's choice, else (an
    image-level suspect) the first query of the suggested label, where the image would be
    a positive, else the first query of its own label or the image's own query; -1 when
    none."""
    if suspect.context_query >= 0:
        return suspect.context_query
    if suspect.query:
        return dataset.query_by_name(suspect.query)
    for wanted in (suspect.suggested, suspect.labelled):
        for q, query in enumerate(dataset.queries):
            if wanted is not None and str(query.meta.get("label")) == wanted:
                return q
    return next((q for q, query in enumerate(dataset.queries)
                 if query.image == suspect.item), -1)


def suspect_tiles(evaluation: Evaluation, q: int,
                  g: int) -> tuple[tuple[ResultTile, ...], int | None]:
    """Return query ``q``'s whole stored result list (ignored items included, then its
    missed positives) and the place of gallery item ``g`` in it (None: not in the list)."""
    depth = max(1, int(evaluation.ranking.top_indices.shape[1]))
    result = result_list(evaluation, q, depth, True)
    tiles = (*result.tiles, *result.missed)
    at = next((i for i, t in enumerate(tiles) if t.index == g), None)
    return tiles, at


def detail_html(dataset: Dataset, suspect: Suspect, q: int) -> str:
    """Return the selected suspect's details (rich text): kind and score, query and item,
    label and suggested fix, the item's rank under each method, the evidence."""
    query_name = dataset.queries[q].name if q >= 0 else None
    into, out = lists_of(suspect)
    where = (f"into the list of <b>{escape(span(list(into)))}</b> (shown: "
             f"{escape(suspect.query or '')}, → {escape(suspect.suggested or '')}) · out of "
             f"the list of <b>{escape(span(list(out)))}</b> (→ negative): both lists fixed "
             "together · "
             if suspect.kind == WRONG_LIST and suspect.query else
             f"queries <b>{escape(suspect.query)}</b> (shown), "
             f"{escape(', '.join(n for n in suspect.queries if n != suspect.query))}: "
             f"{len(suspect.queries)} sharing its list, fixed together · "
             if len(suspect.queries) > 1 and suspect.query else
             f"query <b>{escape(suspect.query)}</b> · " if suspect.query else
             f"image-level (shown in {escape(query_name)}'s ranking) · " if query_name else
             "image-level · ")
    ranks = ranks_words(suspect, query_name)
    agree = (f"{suspect.methods_agreeing} of {suspect.n_methods} methods agree"
             if suspect.n_methods > 1 else "one method")
    return (f"<b>{escape(KIND_WORDS.get(suspect.kind, suspect.kind))}</b> · score "
            f"{score_words(suspect)} · {agree}<br>{where}item <b>{escape(suspect.item)}</b>"
            f"<br>labelled <b>{escape(suspect.labelled)}</b> · fix: "
            f"<b>{escape(fix_words(suspect).replace('relabel', 'relabel ' + suspect.item))}</b>"
            + (f" · {escape(ranks)}" if ranks else "")
            + f"<br>{escape(suspect.evidence)}")
