"""Datasets whose ground truth is one label per image, built from label arrays.

Deep metric learning evaluates an embedding on labelled images alone: every image of a
leave-one-out set (CUB-200-2011, Cars196, Stanford Online Products) is a query against all
the others, and the images of its label are its positives; In-Shop's query images are each
scored against a separate gallery, the gallery images of the query's item being positive.
The readers of those benchmarks (:mod:`irviewer.formats`) and any caller with labels in
memory build their :class:`~irviewer.core.dataset.Dataset` here, so a set read from its
files and the same labels given as an array are the same dataset.

The relevance rule is the instance sets' (:mod:`irviewer.core.label_rules`): ``positive``
is every gallery image of the query's label, the query's own image included when it is in
the gallery (``self_index``), which the protocols remove by index. So an image can be
relabelled like any instance set's, and its queries change by the same rule. A query whose
label has no other image has no positive left: it is reported as skipped and left out of
the means, as pytorch-metric-learning's ``AccuracyCalculator`` leaves out its "lone"
queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from irviewer.core.dataset import Dataset, Query
from irviewer.core.errors import InputError, counted, examples
from irviewer.core.label_rules import INSTANCE, RULE_GROUPS

#: The format name of a dataset built from label arrays in memory.
LABELS_FORMAT = "labels"
#: The protocol of a leave-one-out set, unless told another.
LEAVE_ONE_OUT_PROTOCOL = "metric-learning"
#: The protocol of a query -> gallery set, unless told another.
QUERY_GALLERY_PROTOCOL = "inshop"
#: The relevance groups: the label rule's, and ``junk`` where a pair correction puts an image
#: it marks ignored for one query (as the CSV manifest's instance sets).
GROUPS = (*RULE_GROUPS[INSTANCE], "junk")


def label_array(labels: Sequence[object] | np.ndarray, what: str = "labels") -> np.ndarray:
    """Return ``labels`` as a read-only 1-D array of strings, one per image: whole numbers
    (integers, or floats with whole values such as torch's float labels) written in decimal,
    strings as they are. InputError naming ``what`` for no label, more than one label per
    image, a label that is not a whole number or a string, or a missing (NaN) label."""
    arr = np.asarray(labels)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise InputError(f"{what}: one label per image is needed, got an array of shape "
                         f"{arr.shape}")
    if not len(arr):
        raise InputError(f"{what}: no label given")
    kind = arr.dtype.kind
    if kind == "f":
        if not np.isfinite(arr).all():
            bad = np.flatnonzero(~np.isfinite(arr))
            raise InputError(f"{what}: {counted(len(bad), 'label is', 'labels are')} missing "
                             f"(NaN or infinite), e.g. at position {int(bad[0])}")
        if not (arr == np.round(arr)).all():
            bad = np.flatnonzero(arr != np.round(arr))
            raise InputError(f"{what}: labels must be whole numbers or strings, but position "
                             f"{int(bad[0])} holds {float(arr[bad[0]])!r}")
        arr = arr.astype(np.int64)
        kind = "i"
    if kind in "iub":
        out = arr.astype(np.int64).astype(str) if kind != "b" else arr.astype(str)
    elif kind in "US":
        out = arr.astype(str)
    elif kind == "O":
        values = arr.tolist()
        for v in values:
            if isinstance(v, bool) or not isinstance(v, str | int):
                raise InputError(f"{what}: labels must be whole numbers or strings, not "
                                 f"{v!r}")
        out = np.array([str(v) for v in values])
    else:
        raise InputError(f"{what}: labels must be whole numbers or strings, not "
                         f"{arr.dtype} values")
    out.setflags(write=False)
    return out


def _names(names: Sequence[str] | None, n: int, what: str, default: str) -> tuple[str, ...]:
    """Return ``n`` image names: ``names`` checked, or ``default`` + position."""
    if names is None:
        return tuple(f"{default}{i}" for i in range(n))
    out = tuple(str(name) for name in names)
    if len(out) != n:
        raise InputError(f"{what}: {counted(len(out), 'name')} for "
                         f"{counted(n, 'label')}; give one name per image")
    return out


def label_members(labels: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Return (group of each image, the sorted read-only indices of each group's images),
    the groups being the distinct labels; one sort of the whole array."""
    order = np.argsort(labels, kind="stable")  # stable: each group's indices ascending
    sorted_labels = labels[order]
    starts = np.flatnonzero(np.r_[True, sorted_labels[1:] != sorted_labels[:-1]])
    stops = np.r_[starts[1:], len(order)]
    members = [order[a:b].astype(np.int64) for a, b in zip(starts, stops, strict=True)]
    group = np.empty(len(labels), dtype=np.int64)
    for g, m in enumerate(members):
        m.setflags(write=False)
        group[m] = g
    return group, members


def leave_one_out_dataset(labels: Sequence[object] | np.ndarray,
                          names: Sequence[str] | None = None, *, name: str = "labels",
                          format: str = LABELS_FORMAT, path: Path | None = None,
                          protocols: tuple[str, ...] = (LEAVE_ONE_OUT_PROTOCOL,),
                          image_paths: Mapping[str, Path] | None = None,
                          notes: Sequence[str] = ()) -> Dataset:
    """Return the leave-one-out :class:`Dataset` of images with ``labels``: the gallery is
    every image, in the order given (equal scores keep it), and every image is a query whose
    positives are the images of its label, its own image included as ``self_index`` (the
    protocol removes it by index, never by position in the ranking).

    ``names`` default to the positions ("0", "1", ...). ``protocols`` default to
    ``metric-learning`` (MAP@R, R-precision, P@1, Recall@1, 2, 4, 8). A note counts the
    images alone in their label (skipped queries: nothing to retrieve). InputError as
    :func:`label_array`, and for names that are not one per label or repeat.
    """
    labels = label_array(labels)
    gallery = _names(names, len(labels), name, "")
    group, members = label_members(labels)
    queries = tuple(Query(name=image, image=image, relevance={"positive": members[g]},
                          self_index=i, meta={"label": label})
                    for i, (image, g, label) in enumerate(zip(gallery, group.tolist(),
                                                              labels.tolist(), strict=True)))
    alone = [gallery[int(m[0])] for m in members if len(m) == 1]
    said = list(notes)
    if alone:
        one = len(alone) == 1
        said.append(f"{counted(len(alone), 'image is', 'images are')} alone in "
                    f"{'its' if one else 'their'} label, e.g. {examples(alone)}: "
                    f"{'it has' if one else 'they have'} nothing to retrieve, so "
                    f"{'its query is' if one else 'their queries are'} reported as skipped "
                    "and left out of the means (as pytorch-metric-learning leaves out such "
                    "queries)")
    return Dataset(name=name, format=format, path=path, gallery=gallery, queries=queries,
                   groups=GROUPS, protocols=protocols,
                   image_paths=image_paths if image_paths is not None else {},
                   gallery_labels=labels,
                   notes=tuple(said))


def query_gallery_dataset(query_labels: Sequence[object] | np.ndarray,
                          gallery_labels: Sequence[object] | np.ndarray,
                          query_names: Sequence[str] | None = None,
                          gallery_names: Sequence[str] | None = None, *,
                          name: str = "labels", format: str = LABELS_FORMAT,
                          path: Path | None = None,
                          protocols: tuple[str, ...] = (QUERY_GALLERY_PROTOCOL,),
                          image_paths: Mapping[str, Path] | None = None,
                          notes: Sequence[str] = ()) -> Dataset:
    """Return the :class:`Dataset` of query images scored against a separate gallery, both
    labelled: a query's positives are the gallery images of its label (In-Shop: of its
    item). The gallery keeps the order given (equal scores keep it); queries keep theirs.

    ``query_names`` default to "query-0", ...; ``gallery_names`` to "gallery-0", ...; a
    query whose name is a gallery image's is that image (its own image, ``self_index``,
    removed by the protocol). ``protocols`` default to ``inshop`` (Recall@1, 10, 20, 30,
    40, 50). A note counts the queries whose label has no gallery image (skipped).
    InputError as :func:`leave_one_out_dataset`.
    """
    q_labels = label_array(query_labels, f"{name}: query labels")
    g_labels = label_array(gallery_labels, f"{name}: gallery labels")
    q_names = _names(query_names, len(q_labels), f"{name}: queries", "query-")
    gallery = _names(gallery_names, len(g_labels), f"{name}: gallery", "gallery-")
    _, members = label_members(g_labels)
    first = {str(g_labels[m[0]]): m for m in members}
    empty = np.zeros(0, dtype=np.int64)
    empty.setflags(write=False)
    where = {image: i for i, image in enumerate(gallery)}
    queries = tuple(Query(name=image, image=image,
                          relevance={"positive": first.get(label, empty)},
                          self_index=where.get(image, -1), meta={"label": label})
                    for image, label in zip(q_names, q_labels.tolist(), strict=True))
    orphans = [q.name for q in queries if not any(i != q.self_index
                                                  for i in q.group("positive")[:2])]
    said = list(notes)
    if orphans:
        one = len(orphans) == 1
        said.append(f"{counted(len(orphans), 'query has', 'queries have')} no gallery image "
                    f"of {'its' if one else 'their'} label, e.g. {examples(orphans)}: "
                    f"reported as skipped and left out of the means")
    return Dataset(name=name, format=format, path=path, gallery=gallery, queries=queries,
                   groups=GROUPS, protocols=protocols,
                   image_paths=image_paths if image_paths is not None else {},
                   gallery_labels=g_labels,
                   notes=tuple(said))
