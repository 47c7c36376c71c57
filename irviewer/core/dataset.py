"""The dataset noun: images, which are queries and which are gallery, and the ground truth.

A :class:`Dataset` is what every reader in :mod:`irviewer.formats` produces. Ground truth is
stored as *relevance groups* per query, exactly as the benchmark publishes them (``good`` /
``ok`` / ``junk`` for Oxford5k, ``easy`` / ``hard`` / ``junk`` for revisited Oxford/Paris,
``positive`` / ``same_camera`` for re-identification, ...). Which groups count as positive
and which are removed from the ranking is the job of a :class:`~irviewer.core.protocols.Protocol`,
so one dataset can be scored under several protocols (rOxford Easy/Medium/Hard) without
being read twice.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from irviewer.core.errors import InputError, examples
from irviewer.core.made_images import ImageLocation

Box = tuple[float, float, float, float]


def index_array(values: Iterable[int] | np.ndarray) -> np.ndarray:
    """Return ``values`` as a sorted, de-duplicated, read-only int64 array of gallery indices
    (a new array; input that is already strictly increasing is copied without sorting)."""
    arr = np.asarray(list(values) if not isinstance(values, np.ndarray) else values,
                     dtype=np.int64)
    if arr.ndim == 1 and (len(arr) < 2 or bool((arr[1:] > arr[:-1]).all())):
        arr = arr.copy()
    else:
        arr = np.unique(arr)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True)
class Query:
    """One query of a benchmark.

    ``name`` is the query's id (``all_souls_1`` for Oxford, the image name elsewhere);
    ``image`` is the name of the image it was cut from. ``relevance`` maps a group name to
    the sorted gallery indices in that group. ``self_index`` is the gallery index of the
    query's own image, or -1 when the query image is not in the gallery. ``box`` is the
    query region (x1, y1, x2, y2) in image pixels where the benchmark defines one.
    """

    name: str
    image: str
    relevance: Mapping[str, np.ndarray]
    self_index: int = -1
    box: Box | None = None
    meta: Mapping[str, object] = field(default_factory=dict)

    def group(self, name: str) -> np.ndarray:
        """Return the gallery indices of relevance group ``name`` (empty when absent)."""
        found = self.relevance.get(name)
        return found if found is not None else _EMPTY

    def meta_int(self, key: str) -> int:
        """Return ``meta[key]`` as an int: a re-identification query's person id
        (``label``) or ``camera``. KeyError when absent; TypeError when it is not a whole
        number (a reader's bug, never the user's input)."""
        return whole_number(self.meta[key])


def whole_number(value: object) -> int:
    """Return ``value``, an int or numpy integer (a person id, a camera), as an int;
    TypeError for anything else."""
    if isinstance(value, int | np.integer):
        return int(value)
    raise TypeError(f"expected a whole number, got {value!r}")


_EMPTY = np.zeros(0, dtype=np.int64)
_EMPTY.setflags(write=False)


@dataclass(frozen=True)
class SkippedQuery:
    """A query the reader removed before evaluation, with the reason (reported, never silent)."""

    name: str
    reason: str


@dataclass(frozen=True)
class Dataset:
    """A retrieval benchmark: gallery, queries with relevance groups, and how to score it.

    Attributes:
        name: short display name ("oxford5k", "demo paintings").
        format: the reader that produced it (a key of the formats registry).
        path: the file or folder it was read from.
        gallery: gallery image names, in gallery order (the order ties are broken in).
        queries: the queries to evaluate.
        groups: the relevance group names this dataset's queries use.
        protocols: names of the protocols evaluated by default, in report order
            (one for most families, three for revisited Oxford/Paris).
        global_ignored: gallery indices removed from every query's ranking (Market-1501's
            id -1 "junk" images, images whose label is on an ignore list).
        skipped_queries: queries the reader removed, each with its reason.
        image_paths: image name -> its picture, for display: a file on disk, or an image
            made when shown (:class:`~irviewer.core.made_images.MadeImage`, given from
            Python); may be empty.
        gallery_labels: optional per-gallery-image labels (instance label or person id),
            used by metrics that need identities (CUHK03 single-gallery-shot CMC) and by
            image relabels (:mod:`irviewer.core.label_rules`).
        gallery_cameras: optional per-gallery-image camera ids (re-identification), so a
            relabelled gallery image can be placed in ``positive`` or ``same_camera``.
        notes: warnings the reader wants shown (a de-duplicated line, a dropped name).
        titles: image name -> display title ("Title — Artist"), for the images the dataset
            titles (a manifest's ``title`` and ``artist`` columns); may be empty.
        details: image name -> (label, value) pairs shown with the title (a manifest's other
            columns: year, room, ...), for the images that have any; may be empty.
    """

    name: str
    format: str
    path: Path | None
    gallery: tuple[str, ...]
    queries: tuple[Query, ...]
    groups: tuple[str, ...]
    protocols: tuple[str, ...]
    global_ignored: np.ndarray = field(default_factory=lambda: _EMPTY)
    skipped_queries: tuple[SkippedQuery, ...] = ()
    image_paths: Mapping[str, ImageLocation] = field(default_factory=dict)
    gallery_labels: np.ndarray | None = None
    gallery_cameras: np.ndarray | None = None
    notes: tuple[str, ...] = ()
    titles: Mapping[str, str] = field(default_factory=dict)
    details: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    _tables: dict[str, tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.validate()

    def group_table(self, group: str) -> tuple[np.ndarray, np.ndarray]:
        """Return (query positions, gallery indices) of every member of ``group``, all
        queries concatenated; computed once per dataset (datasets are immutable)."""
        if group not in self._tables:
            arrays = [q.group(group) for q in self.queries]
            owners = np.repeat(np.arange(len(arrays), dtype=np.int64), [len(a) for a in arrays])
            members = np.concatenate(arrays).astype(np.int64) if arrays else np.zeros(0, np.int64)
            self._tables[group] = (owners, members)
        return self._tables[group]

    @cached_property
    def ignored_mask(self) -> np.ndarray:
        """Return a read-only boolean mask over the gallery, True for the images removed
        from every query's ranking (``global_ignored``); computed once per dataset."""
        mask = np.zeros(len(self.gallery), dtype=bool)
        mask[self.global_ignored] = True
        mask.setflags(write=False)
        return mask

    @property
    def n_gallery(self) -> int:
        """Return the number of gallery images."""
        return len(self.gallery)

    @property
    def n_queries(self) -> int:
        """Return the number of queries to evaluate (after the reader's removals)."""
        return len(self.queries)

    def gallery_index(self) -> dict[str, int]:
        """Return a mapping image name -> gallery index (computed once per gallery; do not
        modify it)."""
        return self._gallery_positions

    @cached_property
    def _gallery_positions(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.gallery)}

    @cached_property
    def _query_positions(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.query_names)}

    @cached_property
    def image_titles(self) -> dict[str, str]:
        """Return image name -> title for every image the dataset titles (the queries' meta
        ``title`` and the reader's ``titles``), computed once; kept by
        :meth:`with_ground_truth`, which never changes titles."""
        out = {q.image: str(q.meta.get("title") or "") for q in self.queries}
        out.update(self.titles)
        return {k: v for k, v in out.items() if v}

    def details_line(self, name: str) -> str:
        """Return image ``name``'s details in one line ("year 1565 · room 3"; "" when it has
        none): each label and value, in the dataset's column order."""
        return " · ".join(f"{label} {value}" for label, value in self.details.get(name, ()))

    def has_members(self, group: str) -> bool:
        """Return True when some query lists a gallery item in relevance group ``group``."""
        return self.group_size(group) > 0

    def group_size(self, group: str) -> int:
        """Return how many (query, item) members relevance group ``group`` has over all
        queries; counted once per dataset, and carried by :meth:`with_ground_truth` from
        the changed queries alone."""
        sizes = self.__dict__.setdefault("_group_sizes", {})
        if group not in sizes:
            sizes[group] = sum(len(q.group(group)) for q in self.queries)
        return sizes[group]

    @cached_property
    def has_self_images(self) -> bool:
        """Return True when some query's own image is in the gallery (a self-match exists);
        ground-truth corrections never change it."""
        return any(q.self_index >= 0 for q in self.queries)

    @cached_property
    def query_names(self) -> tuple[str, ...]:
        """Return the query names in order (computed once; kept by
        :meth:`with_ground_truth`, which never changes them)."""
        return tuple(q.name for q in self.queries)

    def query_by_name(self, name: str) -> int:
        """Return the position of the query called ``name``; InputError when there is none."""
        found = self._query_positions.get(name)
        if found is None:
            raise InputError(f"{self.label()}: no query is called {name!r}, "
                             f"e.g. {examples(q.name for q in self.queries)}")
        return found

    def with_ground_truth(self, queries: Mapping[int, Query],
                          gallery_labels: np.ndarray | None = None) -> Dataset:
        """Return a copy with the queries at the given positions replaced (same names) and,
        when given, new gallery labels; only what changed is validated, and the look-ups
        that depend on the gallery and the query names are kept (a label correction's
        dataset costs what it changes, not the whole dataset). InputError as
        :meth:`validate`."""
        self.query_names  # noqa: B018 - computed here, so every corrected copy shares it
        self.image_titles  # noqa: B018 - likewise
        new = copy.copy(self)
        listed = list(self.queries)
        for q, query in queries.items():
            if query.name != listed[q].name:
                raise InputError(f"{self.label()}: query {q} is {listed[q].name}, not "
                                 f"{query.name}; only the ground truth may change")
            new._check_query(query)
            listed[q] = query
        old_sizes = self.__dict__.get("_group_sizes", {})
        new.__dict__["_group_sizes"] = {
            g: n + sum(len(query.group(g)) - len(self.queries[q].group(g))
                       for q, query in queries.items())
            for g, n in old_sizes.items()}
        object.__setattr__(new, "queries", tuple(listed))
        object.__setattr__(new, "_tables", {})
        if gallery_labels is not None:
            object.__setattr__(new, "gallery_labels", gallery_labels)
            new._check_labels()
        return new

    def _check_query(self, q: Query) -> None:
        """Raise InputError when query ``q`` names an unknown group or a gallery index or
        self index outside the gallery."""
        n, where = len(self.gallery), self.label()
        for group, idx in q.relevance.items():
            if group not in self.groups:
                raise InputError(f"{where}: query {q.name} uses unknown relevance group "
                                 f"{group!r} (known: {', '.join(self.groups)})")
            if len(idx) and (idx[0] < 0 or idx[-1] >= n):
                raise InputError(f"{where}: query {q.name} lists gallery index "
                                 f"{int(idx[-1] if idx[-1] >= n else idx[0])} "
                                 f"outside 0..{n - 1}")
        if not -1 <= q.self_index < n:
            raise InputError(f"{where}: query {q.name} has self index {q.self_index} "
                             f"outside the gallery")

    def _check_labels(self) -> None:
        n = len(self.gallery)
        if self.gallery_labels is not None and len(self.gallery_labels) != n:
            raise InputError(f"{self.label()}: {len(self.gallery_labels)} gallery labels "
                             f"for {n} gallery images")

    def label(self) -> str:
        """Return the name used in messages: the file name, else the dataset name."""
        return self.path.name if self.path is not None else self.name

    def validate(self) -> None:
        """Raise InputError when the dataset is not internally consistent."""
        n = len(self.gallery)
        where = self.label()
        if n == 0:
            raise InputError(f"{where}: the gallery is empty")
        if len(set(self.gallery)) != n:
            dups = repeated(self.gallery)
            raise InputError(f"{where}: {len(dups)} gallery names are repeated, "
                             f"e.g. {examples(dups)}")
        names = [q.name for q in self.queries]
        if len(set(names)) != len(names):
            dups = repeated(names)
            raise InputError(f"{where}: {len(dups)} query names are repeated, "
                             f"e.g. {examples(dups)}")
        for q in self.queries:
            self._check_query(q)
        if len(self.global_ignored) and (self.global_ignored[0] < 0
                                         or self.global_ignored[-1] >= n):
            raise InputError(f"{where}: an ignored gallery index is outside 0..{n - 1}")
        self._check_labels()
        if self.gallery_cameras is not None and len(self.gallery_cameras) != n:
            raise InputError(f"{where}: {len(self.gallery_cameras)} gallery cameras "
                             f"for {n} gallery images")


def repeated(names: Iterable[str]) -> list[str]:
    """Return every name of ``names`` that an earlier one repeats, in order."""
    seen: set[str] = set()
    out = []
    for name in names:
        if name in seen:
            out.append(name)
        seen.add(name)
    return out


def build_query(name: str, image: str, groups: Mapping[str, Sequence[int] | np.ndarray],
                self_index: int = -1, box: Box | None = None,
                meta: Mapping[str, object] | None = None) -> Query:
    """Return a :class:`Query` with its groups normalised to sorted unique int64 arrays."""
    return Query(name=name, image=image,
                 relevance={g: index_array(v) for g, v in groups.items()},
                 self_index=int(self_index), box=box, meta=dict(meta or {}))
