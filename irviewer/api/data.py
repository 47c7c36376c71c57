"""What the caller gives, turned into what irviewer opens: the data arguments of
:func:`irviewer.evaluate` and :func:`irviewer.view` (a dataset with vectors, a score matrix
or descriptor files; or labels alone) checked one by one, each refusal one sentence naming
its argument, and made into the one :class:`~irviewer.opening.request.OpenRequest` every
command and the window open.

Three ways to give the ground truth:

* a dataset: a path (read by the readers of every command) or a
  :class:`~irviewer.core.dataset.Dataset` (:func:`irviewer.read_dataset`, read once);
* labels of every image, each image a query against all the others (leave-one-out, as
  metric-learning sets are scored: :func:`~irviewer.core.label_sets.leave_one_out_dataset`);
* labels of the queries and of a separate gallery
  (:func:`~irviewer.core.label_sets.query_gallery_dataset`), with cameras a
  re-identification set (:func:`~irviewer.formats.reid.reid_dataset`).

The vectors (or the score matrix) become a method held in memory
(:mod:`irviewer.methods.held`), made by the same pipeline as a descriptor file's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path

import numpy as np

from irviewer.api.arrays import names_of
from irviewer.api.errors import ArgumentError, argument_error
from irviewer.api.given import DatasetLike, Given, Prepared
from irviewer.api.labels import leave_one_out, query_gallery
from irviewer.api.vectors import (
    Copies,
    matrix_given,
    method_name,
    score_matrix,
    vectors_given,
    vectors_held,
)
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError, counted
from irviewer.formats.base import ReadOptions
from irviewer.methods.held import HIGHER_FIRST, LOWER_FIRST, Held, held_scores, held_vectors


def prepare(given: Given) -> Prepared:
    """Return the data arguments checked and made ready to open: ArgumentError (one
    sentence naming the argument) for a missing, contradictory or unusable one."""
    vectors = vectors_given(given)
    matrix_arg = matrix_given(given)
    files_d = paths_given(given.descriptors, "descriptors")
    files_r = paths_given(given.ranking, "ranking")
    if vectors is not None and matrix_arg is not None:
        raise ArgumentError(matrix_arg, f"{matrix_arg}: give vectors or a matrix, not both; "
                            "call evaluate once for each")
    label_keys = [k for k in ("labels", "query_labels", "gallery_labels", "query_cams",
                              "gallery_cams") if getattr(given, k) is not None]
    if given.dataset is not None:
        if label_keys:
            raise ArgumentError(label_keys[0], f"{label_keys[0]}: the dataset gives the ground "
                                "truth; give labels without a dataset, or a dataset without "
                                "labels")
        dataset = dataset_argument(given.dataset)
        return with_dataset(given, dataset, vectors, matrix_arg, files_d, files_r)
    if files_d or files_r:
        key = "descriptors" if files_d else "ranking"
        raise ArgumentError(key, f"{key}: a file's rows are named after a dataset's images; "
                            "give the dataset too (its path first)")
    if not label_keys:
        what = vectors or matrix_arg
        if what is None:
            raise ArgumentError("dataset", "dataset: nothing to evaluate; give a dataset with "
                                "vectors, or vectors with their labels (embeddings with "
                                "labels=, or queries and gallery with query_labels= and "
                                "gallery_labels=)")
        raise ArgumentError("labels", f"labels: {what} needs its ground truth: a dataset "
                            "(first), or labels (labels= for every image, or query_labels= "
                            "and gallery_labels=)")
    if given.labels is not None:
        return leave_one_out(given, vectors, matrix_arg)
    return query_gallery(given, vectors, matrix_arg)


def dataset_argument(value: DatasetLike) -> Dataset | Path:
    """Return the dataset argument: a Dataset as it is, a path that exists."""
    if isinstance(value, Dataset):
        return value
    path = Path(value).expanduser()
    if not path.exists():
        raise ArgumentError("dataset", f"dataset: {path}: no such file or folder")
    return path


def with_dataset(given: Given, dataset: Dataset | Path, vectors: str | None,
                  matrix_arg: str | None, files_d: tuple[Path, ...],
                  files_r: tuple[Path, ...]) -> Prepared:
    """Return the data of a dataset given (its path, or the Dataset) with the vectors, the
    score matrix or the files given to evaluate it with; ArgumentError naming the
    argument that does not fit."""
    held: list[tuple[Path, Held]] = []
    copies = Copies()
    argument = vectors or matrix_arg or ("descriptors" if files_d else "ranking")
    if given.names is not None and vectors is None:
        raise ArgumentError("names", "names: names the rows of embeddings=; give them with it")
    if vectors is not None:
        arrays, _ = vectors_held(given, vectors, copies)
        held.append((Path(method_name(given, "embeddings")),
                     held_vectors(arrays, **copies.said())))
    elif matrix_arg is not None:
        if not isinstance(dataset, Dataset):  # its order of queries and gallery is needed
            dataset = read_given_dataset(dataset, given)
        scores = score_matrix(given, matrix_arg, (dataset.n_queries, dataset.n_gallery), copies)
        scores = _reordered(given, scores, dataset, matrix_arg)
        order = LOWER_FIRST if matrix_arg == "distances" else HIGHER_FIRST
        held.append((Path(method_name(given, matrix_arg)),
                     held_scores(scores, order, **copies.said())))
    elif not files_d and not files_r:
        raise ArgumentError("embeddings", "embeddings: a dataset needs something to evaluate: "
                            "vectors (embeddings=, or queries= and gallery=), a score matrix "
                            "(scores= or distances=) or a descriptor file (descriptors=)")
    for p, _ in held:
        if p in (*files_d, *files_r):
            raise ArgumentError("name", f"name: {p.name!r} is also a file given; name the "
                                "vectors otherwise")
    held_d = tuple(p for p, h in held if h.kind == "descriptors")
    held_r = tuple(p for p, h in held if h.kind == "scores")
    rows: tuple[str, ...] = ()
    if held and held[0][1].kind == "descriptors":
        found = held[0][1].arrays
        rows = tuple(str(n) for key in ("names", "query_names", "gallery_names")
                     if key in found for n in found[key].tolist())
    if isinstance(dataset, Dataset):
        place = dataset.path if dataset.path is not None else Path(dataset.label())
        return Prepared(place, dataset, tuple(held), (*files_d, *held_d), (*files_r, *held_r),
                        argument, rows)
    return Prepared(dataset, None, tuple(held), (*files_d, *held_d), (*files_r, *held_r),
                    argument, rows)


def read_options_of(value: Mapping[str, object] | None) -> ReadOptions:
    """Return the reader options ``read_options`` names (the fields of
    :class:`~irviewer.formats.base.ReadOptions`: images, row_names, instance_rule,
    ignore_labels, distractors, drop_orphans); ArgumentError for another key or value."""
    if value is None:
        return ReadOptions()
    if not isinstance(value, Mapping):
        raise ArgumentError("read_options", "read_options: give a mapping of reader options, "
                            "e.g. {'images': 'jpg/'}")
    known = {f.name for f in fields(ReadOptions)} - {"gallery_names"}
    unknown = [k for k in value if k not in known]
    if unknown:
        raise ArgumentError("read_options", f"read_options: no reader option is called "
                            f"{unknown[0]!r}; the options are {', '.join(sorted(known))}")
    out = {}
    for k, v in value.items():
        if k in ("images", "row_names", "distractors") and v is not None:
            v = Path(str(v)).expanduser()
        elif k == "ignore_labels":
            v = (v,) if isinstance(v, str) else tuple(str(x) for x in np.asarray(v).tolist())
        out[k] = v
    return ReadOptions(**out)  # type: ignore[arg-type]


def read_given_dataset(path: Path, given: Given) -> Dataset:
    """Return the dataset at ``path`` read with the ``format`` and ``read_options`` given, as
    every command reads it; ArgumentError naming ``dataset`` for what the reader refuses."""
    from irviewer.formats.registry import read_dataset

    try:
        return read_dataset(path, given.format, read_options_of(given.read_options))
    except InputError as e:
        raise argument_error("dataset", e) from None


def _reordered(given: Given, scores: np.ndarray, dataset: Dataset, key: str) -> np.ndarray:
    """Return the matrix in the dataset's order: its rows named by ``query_names`` and its
    columns by ``gallery_names`` when given (a copy when they are in another order), else
    as it is."""
    rows = cols = None
    if given.query_names is not None:
        names = names_of(given.query_names, "query_names", scores.shape[0], f"rows of {key}")
        rows = _order(names, dataset.query_names, "query_names", "query", "queries")
    if given.gallery_names is not None:
        names = names_of(given.gallery_names, "gallery_names", scores.shape[1],
                         f"columns of {key}")
        cols = _order(names, dataset.gallery, "gallery_names", "gallery image",
                      "gallery images")
    if rows is None and cols is None:
        return scores
    return scores[np.ix_(rows if rows is not None else np.arange(scores.shape[0]),
                         cols if cols is not None else np.arange(scores.shape[1]))]


def _order(names: np.ndarray, wanted: Sequence[str], key: str, one: str,
           many: str) -> np.ndarray | None:
    at = {str(n): i for i, n in enumerate(names.tolist())}
    missing = [w for w in wanted if w not in at]
    if missing:
        raise ArgumentError(key, f"{key}: {counted(len(missing), one, many)} of the dataset "
                            f"{'is' if len(missing) == 1 else 'are'} not named, e.g. "
                            f"{', '.join(missing[:3])}")
    order = np.fromiter((at[w] for w in wanted), dtype=np.int64, count=len(wanted))
    return None if np.array_equal(order, np.arange(len(order))) else order


def paths_given(value: object, key: str) -> tuple[Path, ...]:
    """Return the files of argument ``key`` (one path or several), each of which exists."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str | os.PathLike) else value
    if not isinstance(items, Sequence):
        raise ArgumentError(key, f"{key}: give a path, or a list of paths")
    out = []
    for item in items:
        if not isinstance(item, str | os.PathLike):
            raise ArgumentError(key, f"{key}: {item!r} is not a path")
        path = Path(item).expanduser()
        if not path.exists():
            raise ArgumentError(key, f"{key}: {path}: no such file")
        out.append(path)
    return tuple(out)


__all__ = ["prepare", "read_given_dataset", "read_options_of"]
