""":func:`evaluate`: score vectors (or a score matrix) held in Python with a benchmark's own
conventions, as ``irviewer eval`` scores files; :func:`read_dataset`: a dataset read once,
to evaluate many times (every epoch of a training)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from irviewer.api.data import prepare, read_given_dataset
from irviewer.api.errors import ArgumentError, api_text, argument_error, fresh
from irviewer.api.given import DatasetLike, Given
from irviewer.api.requests import open_request, options_of, request_of
from irviewer.api.result import Result
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.core.ranking import DEFAULT_DEPTH


def evaluate(data: object = None, more: object = None, /, *,
             dataset: DatasetLike | None = None,
             embeddings: object = None, names: object = None, labels: object = None,
             queries: object = None, gallery: object = None,
             query_names: object = None, gallery_names: object = None,
             query_labels: object = None, gallery_labels: object = None,
             query_cams: object = None, gallery_cams: object = None,
             scores: object = None, distances: object = None,
             descriptors: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None
             = None,
             ranking: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
             name: str | None = None, format: str | None = None,
             read_options: Mapping[str, object] | None = None,
             protocol: str | None = None, ap: str | None = None, self_match: str | None = None,
             depth: int = DEFAULT_DEPTH, rerank: str | Sequence[str] | None = None,
             ann: str | Sequence[str] | None = None, engine: str | None = None,
             collection: str | None = None, engine_names: str | None = None,
             corrections: str | os.PathLike[str] | None = None,
             ann_names: str | os.PathLike[str] | None = None,
             conventions: bool = False, pair_scores: bool = False) -> Result:
    """Return the evaluation of vectors (or a score matrix) against a ground truth, with
    the benchmark's own conventions: what ``irviewer eval --json`` writes for the same data
    (:meth:`Result.to_dict`), with typed access to the summary and per-query values.

    The ground truth, one of:

    * a dataset — ``dataset``, or the first positional argument: a path (any dataset
      ``irviewer eval`` reads, ``format`` and ``read_options`` as its reader options) or a
      Dataset (:func:`read_dataset`); its method: ``embeddings`` (one row per image, named
      by ``names``, else in the dataset's order as a descriptor file's rows), or
      ``queries`` and ``gallery`` (named by ``query_names`` and ``gallery_names``), or a
      matrix, or descriptor files (``descriptors``, ``ranking``);
    * ``labels`` of every row of ``embeddings`` — the first positional argument: each row
      queries all the others, itself removed by index (leave-one-out, protocol
      ``metric-learning``: MAP@R, R-precision, P@1, Recall@1/2/4/8); names default to the
      positions;
    * ``query_labels`` and ``gallery_labels`` of ``queries`` and ``gallery`` (the first two
      positional arguments; protocol ``inshop``: Recall@K, mAP), with ``query_cams`` and
      ``gallery_cams`` a re-identification set (protocol ``market1501``: same id on another
      camera positive, same id and camera removed, id -1 junk; mAP, CMC, mINP); names
      default to ``q0``, ``q1``, ... and ``g0``, ``g1``, ....

    A matrix instead of vectors: ``scores`` (higher first) or ``distances`` (lower first,
    as torchreid's ``distmat``), one row per query and one column per gallery image in the
    dataset's order (``query_names`` / ``gallery_names`` reorder its rows / columns).

    Arrays are numpy arrays or anything speaking DLPack (torch, cupy, jax), read in place
    on the CPU (no copy); a GPU array is copied to the host (:attr:`Result.copied_to_host`
    and the notes say so). The method's name is ``name`` (default ``"embeddings"``,
    ``"scores"``, ``"distances"``).

    The options are ``irviewer eval``'s: ``protocol``, ``ap`` (``finite``, ``trapezoid``,
    ``interpolated``, ``11point``), ``self_match`` (``keep``, ``remove``), ``depth``
    (results kept per query), ``rerank`` and ``ann`` (SPECs, one or a list: each gives a
    method scored instead of the plain one, compared with it), ``engine`` /
    ``collection`` / ``engine_names`` (a vector engine holding the gallery),
    ``corrections`` (a corrections file applied to the ground truth), ``conventions``
    (every convention side by side, ``--conventions``) and ``pair_scores`` (the positive
    and negative pairs' scores, ``--scores``).

    ArgumentError (a ValueError) with one sentence naming the argument for anything that
    cannot be used.
    """
    try:
        given = Given.of(data, more, dataset=dataset, embeddings=embeddings, names=names,
                         labels=labels, queries=queries, gallery=gallery,
                         query_names=query_names, gallery_names=gallery_names,
                         query_labels=query_labels, gallery_labels=gallery_labels,
                         query_cams=query_cams, gallery_cams=gallery_cams, scores=scores,
                         distances=distances, descriptors=descriptors, ranking=ranking,
                         name=name, format=format, read_options=read_options)
        for key, value in (("conventions", conventions), ("pair_scores", pair_scores)):
            if not isinstance(value, bool):
                raise ArgumentError(key, f"{key}: give True or False, not {value!r}")
        options = options_of(protocol, ap, self_match, depth, rerank, ann, engine,
                             collection, engine_names, corrections, ann_names)
        prepared = prepare(given)
        request = request_of(given, prepared, options)
        opened = open_request(request, prepared)
        from irviewer.reports.eval_document import eval_document

        document = eval_document(opened, options.ap, options.self_match,
                                 every_convention=conventions, pair_scores=pair_scores)
        said = document.report["dataset"]
        said["notes"] = [api_text(n) for n in said["notes"]]  # options named by keyword
    except ArgumentError as e:
        raise fresh(e) from None
    except InputError as e:  # a sentence of the layers below not yet blamed on an argument
        raise fresh(argument_error("dataset", e)) from None
    return Result(document.report, opened, prepared.rows, prepared.vectors_argument)


def read_dataset(path: str | os.PathLike[str], format: str | None = None, *,
                 protocol: str | None = None, **read_options: object) -> Dataset:
    """Return the dataset at ``path`` (any dataset ``irviewer eval`` reads: a manifest, an
    Oxford gt_files folder, a Market-1501 folder, ...), read once, to give to
    :func:`evaluate` and :func:`view` as often as needed. ``format`` names the reader (None:
    detected), ``protocol`` replaces the dataset's own protocols, ``read_options`` are the
    readers' options by name (``images``, ``row_names``, ``instance_rule``,
    ``ignore_labels``, ``distractors``, ``drop_orphans``). ArgumentError with one sentence
    for a path, a reader or an option that cannot be used."""
    from dataclasses import replace

    from irviewer.core.protocols import get_protocol

    try:
        given = Given(format=format, read_options=read_options)
        found = Path(path).expanduser()
        if not found.exists():
            raise ArgumentError("path", f"path: {found}: no such file or folder")
        dataset = read_given_dataset(found, given)
        if protocol is not None:
            options_of(protocol=protocol)
            dataset = replace(dataset, protocols=(get_protocol(protocol).name,))
    except ArgumentError as e:
        raise fresh(e) from None
    return dataset


__all__ = ["evaluate", "read_dataset"]
