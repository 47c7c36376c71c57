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

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

import numpy as np

from irviewer.core.dataset import Dataset, Query, index_array, whole_number
from irviewer.core.errors import InputError, counted, examples
from irviewer.core.label_rules import (
    HOLIDAYS,
    INSTANCE,
    LABEL_FAMILIES,
    REID,
    REID_DISTRACTOR_ID,
    REID_JUNK_ID,
    LabelIndex,
    reid_groups,
    same_label_groups,
)
from irviewer.core.protocols import get_protocol

#: The label of a pair correction that makes the item a negative for the query.
NEGATIVE = "negative"

#: Per protocol family, the choices a user has for one (query, item) pair: (shown name,
#: the dataset's group, or ``negative``).
PAIR_CHOICES: dict[str, tuple[tuple[str, str], ...]] = {
    INSTANCE: (("relevant", "positive"), ("not relevant", NEGATIVE), ("ignored", "junk")),
    REID: (("relevant", "positive"), ("not relevant", NEGATIVE), ("ignored", "same_camera")),
    "oxford": (("good", "good"), ("ok", "ok"), ("junk", "junk"), ("negative", NEGATIVE)),
    "revisited": (("easy", "easy"), ("hard", "hard"), ("junk", "junk"),
                  ("negative", NEGATIVE)),
    HOLIDAYS: (("relevant", "positive"), ("not relevant", NEGATIVE)),
}

#: Why HPatches cannot be corrected (its labels are not annotations).
GEOMETRY_LABELS = ("HPatches labels come from geometry (patches cut at known homographies), "
                   "not from annotation, so they cannot be corrected")

HOLIDAYS_GROUP = re.compile(r"^\d{4}$")


def family(dataset: Dataset) -> str:
    """Return the protocol family of ``dataset`` (``instance``, ``reid``, ``oxford``,
    ``revisited``, ``holidays``, ``hpatches``), from its first default protocol."""
    return get_protocol(dataset.protocols[0]).family


def pair_choices(dataset: Dataset) -> tuple[tuple[str, str], ...]:
    """Return the (shown name, group or ``negative``) choices of a pair correction on
    ``dataset``; InputError for HPatches, whose labels come from geometry."""
    fam = family(dataset)
    if fam not in PAIR_CHOICES:
        raise InputError(f"{dataset.label()}: {GEOMETRY_LABELS}" if fam == "hpatches" else
                         f"{dataset.label()}: {fam} ground truth cannot be corrected")
    return PAIR_CHOICES[fam]


def pair_labels(dataset: Dataset) -> tuple[str, ...]:
    """Return the labels a pair correction on ``dataset`` may carry: its groups among the
    family's choices, and ``negative``."""
    return tuple(group for _, group in pair_choices(dataset)
                 if group == NEGATIVE or group in dataset.groups)


def can_relabel(dataset: Dataset) -> bool:
    """Return True when ``dataset``'s relevance follows from image labels, so an image can be
    relabelled (instance sets, re-identification, Holidays)."""
    return family(dataset) in LABEL_FAMILIES and dataset.gallery_labels is not None


def utc_now() -> str:
    """Return the current UTC time as ISO 8601 to the second (``2026-11-23T14:05:09Z``)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Correction:
    """One label fix, as a row of the corrections file.

    ``query`` is the query's name, empty for an image relabel; ``item`` is an image name;
    ``label`` is a group of the dataset or ``negative`` (pair), or the image's new label
    (relabel). ``author``, ``time`` (ISO 8601) and ``note`` document it.
    """

    query: str
    item: str
    label: str
    author: str = ""
    time: str = ""
    note: str = ""

    @property
    def is_relabel(self) -> bool:
        """Return True for an image-level relabel (no query)."""
        return not self.query

    @property
    def key(self) -> tuple[str, str]:
        """Return what the correction sets: (query, item); a relabel has query ``""``."""
        return self.query, self.item

    def describe(self, before: str | None = None) -> str:
        """Return a short sentence for menus and lists: ``q / item: good → junk`` or
        ``relabel item: 12 → 40`` (without "from" when ``before`` is None)."""
        change = f"{before} → {self.label}" if before is not None else f"→ {self.label}"
        if self.is_relabel:
            return f"relabel {self.item}: {change}"
        return f"{self.query} / {self.item}: {change}"


class NothingToChangeError(InputError):
    """A correction that would set what the ground truth already has (the pair's relation
    is already its label, the image already has that label): it is not applied, not an
    undo step, not written. ``correction`` is the correction, ``current`` the value there
    (the item's group, or the image's label)."""

    def __init__(self, where: str, correction: Correction, current: str) -> None:
        what = (f"{correction.item} already has label {current}" if correction.is_relabel
                else f"{correction.item} is already {current} for {correction.query}")
        super().__init__(f"{where}: {what}; nothing to change")
        self.correction, self.current = correction, current


@dataclass(frozen=True)
class Change:
    """The result of applying one correction.

    ``dataset`` is the corrected dataset, ``changed`` the sorted positions of the queries
    whose ground truth (groups or label) changed, or whose scores can change otherwise
    (every query of a CUHK03 set when a gallery identity changes),
    ``before`` the item's group (pair) or label (relabel) before the change.
    ``sets_nothing`` is True when the correction set what was already there (then
    ``dataset`` is the dataset given, unchanged).
    """

    dataset: Dataset
    changed: np.ndarray
    before: str
    sets_nothing: bool = False
    _old_queries: dict[int, Query] = field(default_factory=dict, repr=False)
    _old_labels: np.ndarray | None = field(default=None, repr=False)

    def undone(self, dataset: Dataset) -> Dataset:
        """Return ``dataset`` (this change's result, or a dataset equal to it) with the
        change reverted exactly: the previous Query objects and labels."""
        return dataset.with_ground_truth(self._old_queries, self._old_labels)


def apply_correction(dataset: Dataset, correction: Correction) -> Change:
    """Return the :class:`Change` that ``correction`` makes to ``dataset``.

    InputError with one sentence for an unknown query or image, a label that is not one of
    the dataset's groups (pair) or not a valid label of its family (relabel), a relabel on a
    family whose ground truth is per-query lists, and HPatches. A correction that sets what
    ``dataset`` already has gives ``Change.sets_nothing`` (:func:`sets_nothing`'s test).
    """
    now, _, same = _now_and_wanted(dataset, correction)
    if same:
        return Change(dataset, np.zeros(0, np.int64), str(now), sets_nothing=True)
    if correction.is_relabel:
        return _relabel(dataset, correction)
    return _pair(dataset, correction)


def sets_nothing(dataset: Dataset, correction: Correction) -> bool:
    """Return True when ``correction`` would set what ``dataset`` already has: the item's
    group for the query is already the pair correction's label, or the image already has
    the relabel's label (compared as the family's labels: person id ``"07"`` is ``7``).
    Nothing is applied, so this is cheap for a relabel too. InputError for an unknown query
    or image, a label that is not valid for the family, and HPatches; the same test as
    :attr:`Change.sets_nothing`."""
    return _now_and_wanted(dataset, correction)[2]


def preview_relabel(dataset: Dataset, item: str, label: str) -> int:
    """Return how many queries relabelling image ``item`` to ``label`` would change (shown
    before the relabel is applied; 0 when it already has that label); InputError as
    :func:`apply_correction`."""
    return len(apply_correction(dataset, Correction("", item, label)).changed)


# -- pair corrections -------------------------------------------------------------------

def _now_and_wanted(dataset: Dataset, c: Correction) -> tuple[object, object, bool]:
    """Return (the value there now, the value ``c`` sets, whether they are equal): the
    item's group for the query and the pair's label, or the image's label and the
    relabel's label parsed as the family's (an int person id, a 4-digit Holidays group).
    The one test of "sets what is already there"; InputError as :func:`apply_correction`
    for names and labels."""
    if c.is_relabel:
        fam = _relabel_family(dataset)
        now = _image_label(dataset, c.item)
        wanted = _parse_label(fam, c.label, dataset.label())
    else:
        q, g = _pair_positions(dataset, c)
        now, wanted = group_of(dataset.queries[q], g), c.label
    return now, wanted, now == wanted


def _pair_positions(dataset: Dataset, c: Correction) -> tuple[int, int]:
    """Return (query position, gallery position) of pair correction ``c``; InputError for
    a label that is not a group of the dataset, an unknown query or image, and an image
    removed for every query."""
    where = dataset.label()
    allowed = pair_labels(dataset)
    if c.label not in allowed:
        raise InputError(f"{where}: {c.label!r} is not a group of this dataset; a pair "
                         f"correction's label is one of {', '.join(allowed)}")
    q = dataset.query_by_name(c.query)
    g = _gallery_position(dataset, c.item)
    if dataset.ignored_mask[g]:
        raise InputError(f"{where}: {c.item} is removed for every query (junk id or ignored "
                         "label), so a pair correction would change nothing; relabel the "
                         "image instead")
    return q, g


def _pair(dataset: Dataset, c: Correction) -> Change:
    q, g = _pair_positions(dataset, c)
    old = dataset.queries[q]
    before = group_of(old, g)
    relevance = {}
    for group in dataset.groups:
        members = old.relevance.get(group)
        if members is None and group != c.label:
            continue
        kept = members[members != g] if members is not None else np.zeros(0, np.int64)
        relevance[group] = index_array(np.append(kept, g) if group == c.label else kept)
    new = dataset.with_ground_truth({q: replace(old, relevance=relevance)})
    return Change(new, np.array([q], dtype=np.int64), before, _old_queries={q: old})


def group_of(query: Query, g: int) -> str:
    """Return the first group of ``query`` holding gallery item ``g`` (its relation to the
    query), else ``negative``."""
    for group, members in query.relevance.items():
        at = np.searchsorted(members, g)
        if at < len(members) and members[at] == g:
            return group
    return NEGATIVE


def _gallery_position(dataset: Dataset, item: str) -> int:
    try:
        return dataset.gallery_index()[item]
    except KeyError:
        raise InputError(f"{dataset.label()}: no gallery image is called {item!r}, e.g. "
                         f"{examples(dataset.gallery)}") from None


# -- image relabels ---------------------------------------------------------------------

def _relabel_family(dataset: Dataset) -> str:
    """Return the family of ``dataset`` when its images can be relabelled; InputError
    otherwise (HPatches, per-query lists)."""
    fam = family(dataset)
    if fam == "hpatches":
        raise InputError(f"{dataset.label()}: {GEOMETRY_LABELS}")
    if not can_relabel(dataset):
        raise InputError(f"{dataset.label()}: {fam} ground truth lists each query's images, "
                         "it has no image labels to change; correct (query, image) pairs "
                         "instead")
    return fam


def _image_label(dataset: Dataset, item: str) -> object:
    """Return image ``item``'s label: a gallery image's, else that of the query whose image
    it is; InputError when no image has that name."""
    g = dataset.gallery_index().get(item, -1)
    if g >= 0:
        return np.asarray(dataset.gallery_labels)[g].item()
    for query in dataset.queries:
        if query.image == item:
            return query.meta.get("label")
    raise InputError(f"{dataset.label()}: no image is called {item!r}, e.g. "
                     f"{examples(dataset.gallery)}")


def _relabel(dataset: Dataset, c: Correction) -> Change:
    where = dataset.label()
    fam = _relabel_family(dataset)
    labels = np.asarray(dataset.gallery_labels)
    g = dataset.gallery_index().get(c.item, -1)
    new = _parse_label(fam, c.label, where)
    old = labels[g].item() if g >= 0 else None
    # One pass over the queries: the item's own queries, and those of the old or new label.
    wanted = {old, new}
    candidates = [q for q, query in enumerate(dataset.queries)
                  if query.image == c.item or query.meta.get("label") in wanted]
    own = [q for q in candidates if dataset.queries[q].image == c.item]
    if g < 0 and not own:
        raise InputError(f"{where}: no image is called {c.item!r}, e.g. "
                         f"{examples(dataset.gallery)}")
    if g < 0:
        old = dataset.queries[own[0]].meta.get("label")
        candidates = [q for q, query in enumerate(dataset.queries)
                      if q in own or query.meta.get("label") in (old, new)]
    _check_relabel(dataset, fam, c.item, old, new, bool(own))
    new_labels = labels
    if g >= 0:
        new_labels = labels.astype(np.result_type(labels, np.asarray([new])))
        new_labels[g] = new
        new_labels.setflags(write=False)
    before_index = LabelIndex.of(labels, only=(old, new))
    after_index = LabelIndex.of(new_labels, only=(old, new))
    cameras = _cameras(dataset) if fam == REID else None

    def rule(index: LabelIndex, query: Query, label: object) -> dict[str, np.ndarray]:
        if cameras is not None:
            return reid_groups(index, cameras, whole_number(label), query.meta_int("camera"))
        return same_label_groups(index, label)

    own_set = set(own)
    new_queries: dict[int, Query] = {}
    old_queries: dict[int, Query] = {}
    for q in candidates:
        query = dataset.queries[q]
        label = query.meta.get("label")
        new_label = new if q in own_set else label
        before, after = rule(before_index, query, label), rule(after_index, query, new_label)
        delta = np.unique(np.concatenate([np.setxor1d(before.get(k, []), after.get(k, []))
                                          for k in {*before, *after}]).astype(np.int64))
        if not len(delta) and new_label == label:
            continue
        relevance = {}
        for group in dataset.groups:
            members = query.relevance.get(group)
            gained = np.intersect1d(after.get(group, np.zeros(0, np.int64)), delta)
            if members is None and not len(gained):
                continue
            kept = np.setdiff1d(members, delta) if members is not None else gained[:0]
            relevance[group] = index_array(np.union1d(kept, gained))
        meta = {**query.meta, "label": new_label}
        new_queries[q] = replace(query, relevance=relevance, meta=meta)
        old_queries[q] = query
    changed = set(old_queries)
    cuhk03 = any(get_protocol(p).cmc == "cuhk03" for p in dataset.protocols)
    if g >= 0 and fam == REID and cuhk03:
        # CUHK03 single-gallery-shot CMC samples one image per gallery identity for every
        # query, so a gallery identity change can move any query's CMC.
        changed = set(range(dataset.n_queries))
    corrected = dataset.with_ground_truth(new_queries, new_labels if g >= 0 else None)
    return Change(corrected, np.array(sorted(changed), dtype=np.int64),
                  str(old), _old_queries=old_queries,
                  _old_labels=labels if g >= 0 else None)


def _cameras(dataset: Dataset) -> np.ndarray:
    """Return a re-identification dataset's gallery cameras; InputError when unknown."""
    if dataset.gallery_cameras is None:
        raise InputError(f"{dataset.label()}: the gallery images' cameras are unknown, so a "
                         "person cannot be relabelled")
    return dataset.gallery_cameras


def _parse_label(fam: str, text: str, where: str) -> object:
    """Return ``text`` as a label of family ``fam``: an int person id (re-id), a 4-digit
    group (Holidays), a non-empty string (instance sets); InputError otherwise."""
    text = text.strip()
    if fam == REID:
        try:
            return int(text)
        except ValueError:
            raise InputError(f"{where}: {text!r} is not a person id; re-identification "
                             "labels are whole numbers (-1 junk, 0 distractor)") from None
    if fam == HOLIDAYS and not HOLIDAYS_GROUP.match(text):
        raise InputError(f"{where}: {text!r} is not a Holidays group; groups are four digits, "
                         "e.g. 1004")
    if not text:
        raise InputError(f"{where}: the new label is empty")
    return text


def _check_relabel(dataset: Dataset, fam: str, item: str, old: object, new: object,
                   is_query: bool) -> None:
    """Raise InputError for a relabel the family's reader could not have produced."""
    where = dataset.label()
    if fam == REID and REID_JUNK_ID in (old, new):
        raise InputError(f"{where}: id -1 (junk) takes an image out of every ranking, so "
                         f"relabelling {item} {'to' if new == REID_JUNK_ID else 'from'} it "
                         "would need ranking again; mark it ignored for the queries concerned, "
                         "or give it id 0 (a distractor)")
    if fam == REID and is_query and new in (REID_JUNK_ID, REID_DISTRACTOR_ID):
        kind = "junk" if new == REID_JUNK_ID else "distractor"
        raise InputError(f"{where}: {item} is a query and id {new} marks {kind} images, which "
                         "are never queries; give it the id of the person it shows")
    if fam == INSTANCE and len(dataset.global_ignored):
        ignored = {str(v) for v in np.asarray(dataset.gallery_labels)[dataset.global_ignored]}
        for label in (old, new):
            if str(label) in ignored:
                raise InputError(f"{where}: instance {label!r} is on the ignore list, so its "
                                 "images take no part; change the ignore list instead")


# -- the log: an overlay on the published ground truth ----------------------------------

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

    @classmethod
    def replay(cls, published: Dataset, corrections: Iterable[Correction]) -> CorrectionLog:
        """Return the log of ``corrections`` applied in order to ``published``."""
        log = cls(published)
        for c in corrections:
            log.push(c)
        return log

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
        now, _, same = _now_and_wanted(self.dataset, correction)
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


def applied_summary(log: CorrectionLog) -> str:
    """Return the notice shown after loading corrections: how many, and queries touched."""
    return (f"{counted(len(log), 'correction')} applied, "
            f"{counted(len(log.changed_queries()), 'query', 'queries')} changed")


def beyond_labels(dataset: Dataset) -> list[str]:
    """Return the names of the queries whose ground truth is not what the family's label rule
    gives from the current labels (pair corrections on a label family); such ground truth
    cannot be written as labels. Empty for families without image labels."""
    if not can_relabel(dataset):
        return []
    fam = family(dataset)
    index = LabelIndex.of(np.asarray(dataset.gallery_labels))
    out = []
    for query in dataset.queries:
        label = query.meta.get("label")
        if fam == REID:
            rule = reid_groups(index, _cameras(dataset), whole_number(label),
                               query.meta_int("camera"))
        else:
            rule = same_label_groups(index, label)
        if any(not np.array_equal(query.group(g), rule.get(g, query.group(g)[:0]))
               for g in dataset.groups):
            out.append(query.name)
    return out
