"""What the window shows and offers about label corrections (Qt-free).

The corrections themselves, their rules and their exact undo are the core's
(:mod:`irviewer.core.corrections`); this module says what a person sees of them: the
choices a tile's menu offers for the family (with their keys), the relabel offer and how
many queries it would change, which tiles carry the "corrected" mark, the rows of the
Corrections panel, and the summary line with both numbers. :class:`CorrectionState` keeps
one open dataset's log together with its :class:`~irviewer.opening.opener.Opened`, so a
correction, its undo and the published/corrected switch re-score only the queries they
touch (:meth:`Opened.update_ground_truth`). Whichever ground truth is shown, corrections
edit the corrected one (:attr:`CorrectionState.corrected`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from irviewer.core.corrections import (
    NEGATIVE,
    PAIR_CHOICES,
    BatchCorrectionCommand,
    Correction,
    CorrectionCommand,
    CorrectionLog,
    NothingToChangeError,
    RemoveCorrectionCommand,
    can_relabel,
    family,
    group_of,
    pair_labels,
    preview_relabel,
)
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError, counted
from irviewer.core.evaluation import Evaluation
from irviewer.formats.corrections_merge import writer
from irviewer.opening.opener import Opened

#: An undoable edit of the corrections log: one correction, several at once, or a deletion.
Command = CorrectionCommand | BatchCorrectionCommand | RemoveCorrectionCommand

#: The shortcut keys of the pair choices, in menu order.
CHOICE_KEYS = ("1", "2", "3", "4")

#: The corner mark of a corrected tile, as the legend names it.
MARK_GLYPH = "✎"
MARK_LEGEND = f"{MARK_GLYPH} folded corner: corrected here (the published ground truth differs)"


@dataclass(frozen=True)
class PairChoice:
    """One entry of a tile's correction menu: its key, its words, the label it sets (a
    group of the dataset or ``negative``) and whether it is the item's relation now."""

    key: str
    text: str
    label: str
    current: bool


def relation(dataset: Dataset, q: int, g: int) -> str:
    """Return gallery item ``g``'s group for query ``q`` in ``dataset`` (``negative`` when
    no group holds it), by the core's rule."""
    return group_of(dataset.queries[q], int(g))


def pair_menu(dataset: Dataset, q: int, g: int) -> tuple[PairChoice, ...]:
    """Return the choices a tile's menu offers for (query ``q``, gallery item ``g``): the
    family's own groups that this dataset has, then ``negative`` (instance sets and re-id:
    relevant / not relevant / ignored; Oxford/Paris: good / ok / junk / negative;
    revisited: easy / hard / junk / negative; Holidays: relevant / not relevant), each with
    its key 1, 2, 3, 4; empty for a family whose labels cannot be corrected (HPatches)."""
    if family(dataset) not in PAIR_CHOICES:
        return ()
    allowed = set(pair_labels(dataset))
    now = relation(dataset, q, g)
    choices = [(text, label) for text, label in PAIR_CHOICES[family(dataset)]
               if label in allowed]
    return tuple(PairChoice(key, text, label, label == now)
                 for key, (text, label) in zip(CHOICE_KEYS, choices, strict=False))


@dataclass(frozen=True)
class RelationMenu:
    """The relation entries of a tile's menu: the section's title, the choices (the one
    ticked is the item's relation in the corrected ground truth, which a choice edits) and,
    while the published ground truth is shown, a line saying what the published labels say
    and where a choice goes ("" otherwise)."""

    title: str
    choices: tuple[PairChoice, ...]
    note: str


def uncorrectable_reason(dataset: Dataset) -> str:
    """Return why ``dataset``'s ground truth cannot be corrected ("" when it can)."""
    try:
        pair_labels(dataset)
    except InputError as e:
        return str(e)
    return ""


@dataclass(frozen=True)
class RelabelOffer:
    """What "Relabel this image…" offers for one gallery image: its label now, the query's
    label (the usual fix: it shows the query's object), and every label of the dataset."""

    item: str
    current: str
    query_label: str
    labels: tuple[str, ...]


def relabel_offer(dataset: Dataset, q: int, g: int) -> RelabelOffer | None:
    """Return the relabel offer for gallery item ``g`` shown for query ``q``; None when the
    family's relevance does not come from image labels (or the labels are unknown)."""
    if not can_relabel(dataset):
        return None
    labels = np.asarray(dataset.gallery_labels)
    names = sorted({str(v) for v in labels.tolist()}, key=_natural)
    return RelabelOffer(dataset.gallery[int(g)], str(labels[int(g)].item()),
                        str(dataset.queries[q].meta.get("label", "")), tuple(names))


def _natural(text: str) -> tuple[int, int | str]:
    """Sort key: numbers by value before words alphabetically (person ids, groups)."""
    try:
        return 0, int(text)
    except ValueError:
        return 1, text


def relabel_preview(dataset: Dataset, item: str, label: str) -> tuple[int | None, str]:
    """Return (how many queries relabelling ``item`` to ``label`` changes, the sentence shown
    before it is applied); None and the core's sentence when it cannot be applied."""
    try:
        n = preview_relabel(dataset, item, label)
    except InputError as e:
        return None, str(e).removeprefix(f"{dataset.label()}: ")
    if n == 0:
        return 0, f"{item} already has label {label}: nothing changes"
    return n, f"changes the ground truth of {counted(n, 'query', 'queries')}"


def corrected_items(log: CorrectionLog, q: int) -> frozenset[int]:
    """Return the gallery positions whose relation to query ``q`` a correction set: pair
    corrections of ``q``, and relabelled images whose relabel changed ``q``."""
    index = log.published.gallery_index()
    name = log.published.queries[q].name
    out = set()
    for entry in log.entries:
        c = entry.correction
        g = index.get(c.item)
        if g is None:
            continue
        if (c.query == name) or (c.is_relabel and q in entry.changed):
            out.add(g)
    return frozenset(out)


@dataclass(frozen=True)
class LogRow:
    """One row of the Corrections panel: the query (``every query`` for a relabel), the
    item, from → to, author, time, note, the query to jump to (None: none changed), and
    who made it in words (``writer``: author, window and machine, as the status line names
    them)."""

    query: str
    item: str
    before: str
    after: str
    author: str
    time: str
    note: str
    jump_to: int | None
    writer: str = ""

    def change(self) -> str:
        """Return "before → after"."""
        return f"{self.before} → {self.after}"


def relation_words(dataset: Dataset, label: str) -> str:
    """Return a pair label as the family's menu says it ("positive" -> "relevant" on an
    instance set; "good" stays "good")."""
    words = {group: text for text, group in PAIR_CHOICES.get(family(dataset), ())}
    return words.get(label, label)


def log_rows(log: CorrectionLog) -> tuple[LogRow, ...]:
    """Return the Corrections panel's rows, in the order the corrections were made; pair
    relations in the family's words, relabels as the labels themselves."""
    rows = []
    for entry in log.entries:
        c = entry.correction
        if c.is_relabel:
            jump = int(entry.changed[0]) if len(entry.changed) else None
            query = f"every query ({len(entry.changed)} changed)"
        else:
            jump = log.published.query_by_name(c.query)
            query = c.query
        before, after = entry.before, c.label
        if not c.is_relabel:
            before, after = (relation_words(log.published, x) for x in (before, after))
        rows.append(LogRow(query, c.item, before, after, c.author, c.time, c.note, jump,
                           writer(c)))
    return tuple(rows)


def both_numbers(published: Evaluation, corrected: Evaluation, showing_published: bool,
                 n_corrections: int) -> str:
    """Return the corrections line of the summary (rich text): the protocol's headline and
    mAP, published → corrected ("mAP 40.29 published → 41.02 corrected"), how many
    corrections, and which ground truth the window shows."""
    keys = [k for k in dict.fromkeys((corrected.protocol.headline, "mAP"))
            if k in corrected.summary and k in published.summary]
    parts = [f"<b>{k}</b> {100 * float(published.summary[k]):.2f} published → "
             f"<b>{100 * float(corrected.summary[k]):.2f}</b> corrected" for k in keys]
    shown = ("showing the <b>published</b> ground truth" if showing_published
             else "showing the corrected ground truth")
    return (" &nbsp; ".join(parts) + f" &nbsp;·&nbsp; {counted(n_corrections, 'correction')}"
            f", {shown}")


class CorrectionState:
    """One open dataset's corrections: the log over its published ground truth, and the
    :class:`Opened` kept in step with it.

    ``do``/``undo`` run the core's commands on the corrected ground truth (never on the
    published one, whichever is shown); :meth:`show_published` switches the shown ground
    truth. Each returns the positions of the queries re-scored (only those). A correction
    made while the published ground truth is shown switches back to the corrected one, so
    its effect is seen.
    """

    def __init__(self, opened: Opened, log: CorrectionLog | None = None) -> None:
        self.opened = opened
        self.log = log if log is not None else CorrectionLog(opened.dataset)
        self.showing_published = False
        self._published: dict[tuple[int, object], Evaluation] = {}
        if self.log.dataset is not opened.dataset:  # a log loaded after opening
            opened.update_ground_truth(self.log.dataset, self.log.changed_queries().tolist())

    @property
    def published(self) -> Dataset:
        """Return the ground truth as published (read from the benchmark's files)."""
        return self.log.published

    @property
    def corrected(self) -> Dataset:
        """Return the corrected ground truth: the one every correction edits, and the one
        the review queue audits, whichever is shown."""
        return self.log.dataset

    def relation_menu(self, q: int, g: int) -> RelationMenu:
        """Return the relation entries of gallery item ``g``'s menu for query ``q``: the
        family's choices with the corrected relation ticked and, in the published view,
        the published relation and the sentence saying a choice edits the corrected ground
        truth and shows it (:meth:`do` switches back)."""
        choices = pair_menu(self.corrected, q, g)
        if not self.showing_published:
            return RelationMenu("Relation to the query", choices, "")
        published = relation_words(self.published, relation(self.published, q, g))
        return RelationMenu("Relation to the query (corrected ground truth)", choices,
                            f"Published: {published} · a choice edits the corrected ground "
                            "truth and shows it")

    def nothing_to_change(self, error: NothingToChangeError) -> str:
        """Return the status line for a correction the log refused because it sets what
        the corrected ground truth already has (in the family's words)."""
        c = error.correction
        if c.is_relabel:
            what = f"{c.item} already has label {error.current}"
        else:
            what = (f"{c.item} is already {relation_words(self.corrected, error.current)} "
                    f"for {c.query}")
        where = (" in the corrected ground truth (the published one is shown)"
                 if self.showing_published else "")
        return f"{what}{where}: nothing to change"

    def do(self, command: Command) -> np.ndarray:
        """Run ``command`` on the log (the corrected ground truth, whichever is shown) and
        re-score the queries it changed; the corrected ground truth is shown again, so the
        edit is seen. :class:`NothingToChangeError` (nothing done, the view stays) for a
        correction that sets what the corrected ground truth already has."""
        changed = command.do(self.log)
        back = self._corrected_again()
        return self._rescore(np.union1d(back, changed))

    def undo(self, command: Command) -> np.ndarray:
        """Revert ``command`` and re-score the queries it changed."""
        back = self._corrected_again()
        changed = command.undo(self.log)
        return self._rescore(np.union1d(back, changed))

    def show_published(self, on: bool) -> np.ndarray:
        """Show the published ground truth (``on``) or the corrected one again; re-score the
        queries the corrections touch."""
        if on == self.showing_published:
            return np.zeros(0, np.int64)
        self.showing_published = on
        return self._rescore(self.log.changed_queries())

    def published_evaluation(self, evaluation: Evaluation) -> Evaluation:
        """Return ``evaluation`` (of the shown ground truth) scored on the published ground
        truth: only the corrected queries are re-scored, once per ranking and protocol (the
        published ground truth never changes)."""
        if self.showing_published:
            return evaluation
        key = (id(evaluation.ranking), evaluation.protocol)
        found = self._published.get(key)
        if found is None or found.ranking is not evaluation.ranking:
            found = self._published[key] = evaluation.with_queries(
                self.published, self.log.changed_queries().tolist())
        return found

    def corrected_evaluation(self, evaluation: Evaluation) -> Evaluation:
        """Return ``evaluation`` scored on the corrected ground truth."""
        if not self.showing_published:
            return evaluation
        return evaluation.with_queries(self.log.dataset, self.log.changed_queries().tolist())

    def _corrected_again(self) -> np.ndarray:
        if not self.showing_published:
            return np.zeros(0, np.int64)
        self.showing_published = False
        return self.log.changed_queries()

    def add_first(self, corrections: Sequence[Correction]) -> np.ndarray:
        """Put ``corrections`` (another writer's, just read from the file) first in the log,
        so this window's own stay last and their undo steps stay valid; re-score the queries
        they change and return them."""
        changed = [np.zeros(0, np.int64)]
        for c in corrections:
            changed.append(self.log.insert(0, c))
        return self._rescore(np.unique(np.concatenate(changed)))

    def replace_all(self, corrections: Sequence[Correction]) -> np.ndarray:
        """Make ``corrections`` (the file after another writer replaced or deleted some)
        the log, applied in order over the published ground truth; re-score the queries
        either log touches and return them."""
        before = self.log.changed_queries()
        log = CorrectionLog(self.published)
        for c in corrections:
            log.insert(len(log), c)
        self.log = log
        return self._rescore(np.union1d(before, log.changed_queries()))

    def _rescore(self, changed: np.ndarray) -> np.ndarray:
        shown = self.published if self.showing_published else self.log.dataset
        changed = np.asarray(changed, dtype=np.int64)
        self.opened.update_ground_truth(shown, changed.tolist())
        return changed


__all__ = [
    "CHOICE_KEYS",
    "MARK_GLYPH",
    "MARK_LEGEND",
    "NEGATIVE",
    "Command",
    "CorrectionState",
    "LogRow",
    "PairChoice",
    "RelabelOffer",
    "RelationMenu",
    "both_numbers",
    "corrected_items",
    "log_rows",
    "pair_menu",
    "relabel_offer",
    "relabel_preview",
    "relation",
    "relation_words",
    "uncorrectable_reason",
]
