"""Ground truth from labels alone: every image a query against all the others
(leave-one-out, as metric-learning sets are scored:
:func:`~irviewer.core.label_sets.leave_one_out_dataset`), or queries against a separate
gallery (:func:`~irviewer.core.label_sets.query_gallery_dataset`), with cameras a
re-identification set (:func:`~irviewer.formats.reid.reid_dataset`, Market-1501's rules).
Default names: the positions ("0", "1", ...) for a leave-one-out set, "q0", "q1", ... and
"g0", "g1", ... for queries and gallery."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from irviewer.api.arrays import host_array, matrix, names_of
from irviewer.api.errors import ArgumentError, argument_error
from irviewer.api.given import LABELS, Given, Prepared
from irviewer.api.vectors import Copies, method_name, score_matrix, vectors_held
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError, counted
from irviewer.core.label_sets import label_array, leave_one_out_dataset, query_gallery_dataset
from irviewer.methods.held import HIGHER_FIRST, LOWER_FIRST, Held, held_scores, held_vectors

#: The protocol a query -> gallery set with cameras is scored with, unless told another.
REID_PROTOCOL = "market1501"


def _labels(value: object, key: str) -> np.ndarray:
    array = host_array(value, key).array
    try:
        return label_array(array, key)
    except InputError as e:
        raise argument_error(key, e) from None


def leave_one_out(given: Given, vectors: str | None, matrix_arg: str | None) -> Prepared:
    """Return a leave-one-out set of the ``labels`` given (every image queries all the
    others, itself removed by index; protocol ``metric-learning`` unless told another)
    with the ``embeddings`` (or the square score matrix ``matrix_arg``) as its method;
    ArgumentError naming the argument that does not fit."""
    for key in ("query_labels", "gallery_labels", "query_cams", "gallery_cams"):
        if getattr(given, key) is not None:
            raise ArgumentError(key, f"{key}: goes with query -> gallery sets; labels= "
                                "labels every image of a leave-one-out set")
    if vectors == "queries":
        raise ArgumentError("labels", "labels: labels every row of embeddings (leave-one-out); "
                            "queries and gallery take query_labels= and gallery_labels=")
    labels = _labels(given.labels, "labels")
    n = len(labels)
    copies = Copies()
    names = (names_of(given.names, "names", n, "labels") if given.names is not None
             else np.array([str(i) for i in range(n)]))
    dataset = leave_one_out_dataset(labels, names.tolist(), name=LABELS)
    name = method_name(given, "embeddings" if vectors else matrix_arg or "")
    if vectors is not None:
        found = matrix(given.embeddings, "embeddings")
        copies.add(found, "embeddings")
        if len(found.array) != n:
            raise ArgumentError("labels", f"labels: {counted(n, 'label')} for "
                                f"{counted(len(found.array), 'row')} of embeddings; give one "
                                "label per row")
        held = held_vectors({"features": found.array, "names": names}, **copies.said())
    else:
        assert matrix_arg is not None
        order = LOWER_FIRST if matrix_arg == "distances" else HIGHER_FIRST
        held = held_scores(score_matrix(given, matrix_arg, (n, n), copies), order, **copies.said())
    return in_memory(dataset, name, held, vectors or matrix_arg or "", tuple(names.tolist()))


def query_gallery(given: Given, vectors: str | None, matrix_arg: str | None) -> Prepared:
    """Return a query -> gallery set of the ``query_labels`` and ``gallery_labels`` given
    (protocol ``inshop``; with ``query_cams`` and ``gallery_cams`` a re-identification set,
    protocol ``market1501``) with the ``queries`` and ``gallery`` vectors (or the score
    matrix ``matrix_arg``) as its method; ArgumentError naming the argument that does not
    fit."""
    if given.query_labels is None or given.gallery_labels is None:
        missing = "gallery_labels" if given.gallery_labels is None else "query_labels"
        raise ArgumentError(missing, f"{missing}: query_labels and gallery_labels go together "
                            "(or labels= alone for a leave-one-out set)")
    if vectors == "embeddings":
        raise ArgumentError("query_labels", "query_labels: labels the rows of queries=; "
                            "embeddings (every image queries the others) take labels=")
    if given.names is not None:
        raise ArgumentError("names", "names: names the rows of embeddings=; a query -> gallery "
                            "set's rows are named by query_names= and gallery_names=")
    q_labels = _labels(given.query_labels, "query_labels")
    g_labels = _labels(given.gallery_labels, "gallery_labels")
    n_q, n_g = len(q_labels), len(g_labels)
    q_names = (names_of(given.query_names, "query_names", n_q, "query_labels")
               if given.query_names is not None else np.array([f"q{i}" for i in range(n_q)]))
    g_names = (names_of(given.gallery_names, "gallery_names", n_g, "gallery_labels")
               if given.gallery_names is not None
               else np.array([f"g{i}" for i in range(n_g)]))
    cams = [getattr(given, k) is not None for k in ("query_cams", "gallery_cams")]
    if any(cams) and not all(cams):
        missing = "gallery_cams" if cams[0] else "query_cams"
        raise ArgumentError(missing, f"{missing}: query_cams and gallery_cams go together "
                            "(a re-identification set: same person on another camera is "
                            "positive)")
    if all(cams):
        dataset = _reid(given, q_labels, g_labels, q_names, g_names)
    else:
        dataset = query_gallery_dataset(q_labels, g_labels, q_names.tolist(),
                                        g_names.tolist(), name=LABELS)
    copies = Copies()
    name = method_name(given, "embeddings" if vectors else matrix_arg or "")
    if vectors is not None:
        arrays, _ = vectors_held(given, "queries", copies)
        for key, n, labels in (("queries", n_q, "query_labels"),
                               ("gallery", n_g, "gallery_labels")):
            if len(arrays[key]) != n:
                raise ArgumentError(labels, f"{labels}: {counted(n, 'label')} for "
                                    f"{counted(len(arrays[key]), 'row')} of {key}; give one "
                                    "label per row")
        arrays.setdefault("query_names", q_names)
        arrays.setdefault("gallery_names", g_names)
        held = held_vectors(arrays, **copies.said())
    else:
        assert matrix_arg is not None
        order = LOWER_FIRST if matrix_arg == "distances" else HIGHER_FIRST
        held = held_scores(score_matrix(given, matrix_arg, (n_q, n_g), copies), order,
                           **copies.said())
    return in_memory(dataset, name, held, vectors or matrix_arg or "",
                     (*q_names.tolist(), *g_names.tolist()))


def _reid(given: Given, q_labels: np.ndarray, g_labels: np.ndarray, q_names: np.ndarray,
          g_names: np.ndarray) -> Dataset:
    """Return the re-identification set of these person ids and cameras (Market-1501's
    rules: same id on another camera positive, same id and camera removed, id -1 junk)."""
    from irviewer.formats.reid import reid_dataset

    ids = []
    for key, labels in (("query_labels", q_labels), ("gallery_labels", g_labels)):
        try:
            ids.append(labels.astype(np.int64))
        except ValueError:
            raise ArgumentError(key, f"{key}: with cameras the labels are person ids, whole "
                                f"numbers (-1 for junk, as Market-1501), not {str(labels[0])!r}"
                                ) from None
    cams = []
    for key, n in (("query_cams", len(q_labels)), ("gallery_cams", len(g_labels))):
        found = _labels(getattr(given, key), key)
        if len(found) != n:
            raise ArgumentError(key, f"{key}: {counted(len(found), 'camera')} for "
                                f"{counted(n, 'label')}; give one camera per image")
        try:
            cams.append(found.astype(np.int64))
        except ValueError:
            raise ArgumentError(key, f"{key}: cameras are whole numbers, not {str(found[0])!r}"
                                ) from None
    try:
        dataset = reid_dataset(Path(LABELS), LABELS, q_names.tolist(), ids[0], cams[0],
                               g_names.tolist(), ids[1], cams[1], {}, REID_PROTOCOL)
    except InputError as e:
        raise argument_error("query_labels", e) from None
    return replace(dataset, path=None, name=LABELS)


def in_memory(dataset: Dataset, name: str, held: Held, argument: str,
              rows: tuple[str, ...]) -> Prepared:
    """Return the dataset built from labels with its one method held in memory."""
    path = Path(name)
    kind = held.kind
    return Prepared(Path(dataset.label()), dataset, ((path, held),),
                    (path,) if kind == "descriptors" else (),
                    (path,) if kind == "scores" else (), argument, rows)


__all__ = ["REID_PROTOCOL", "leave_one_out", "query_gallery"]
