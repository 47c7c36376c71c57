"""Applying one correction to a dataset (:func:`apply_correction`): the new ground truth, the
queries it touched and what undoing it needs; a pair correction in the family's groups, an
image relabel by the family's label rule (see :mod:`irviewer.core.corrections`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import numpy as np

from irviewer.core.corrections.correction import (
    GEOMETRY_LABELS,
    NEGATIVE,
    Correction,
    can_relabel,
    family,
    pair_labels,
)
from irviewer.core.dataset import Dataset, Query, index_array, whole_number
from irviewer.core.errors import InputError, examples
from irviewer.core.label_rules import (
    HOLIDAYS,
    INSTANCE,
    REID,
    REID_DISTRACTOR_ID,
    REID_JUNK_ID,
    LabelIndex,
    reid_groups,
    same_label_groups,
)
from irviewer.core.protocols import get_protocol

HOLIDAYS_GROUP = re.compile(r"^\d{4}$")


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
    now, _, same = now_and_wanted(dataset, correction)
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
    return now_and_wanted(dataset, correction)[2]


def preview_relabel(dataset: Dataset, item: str, label: str) -> int:
    """Return how many queries relabelling image ``item`` to ``label`` would change (shown
    before the relabel is applied; 0 when it already has that label); InputError as
    :func:`apply_correction`."""
    return len(apply_correction(dataset, Correction("", item, label)).changed)


# -- pair corrections -------------------------------------------------------------------

def now_and_wanted(dataset: Dataset, c: Correction) -> tuple[object, object, bool]:
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
