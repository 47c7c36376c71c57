"""Searching a descriptor file's queries with a FAISS index, every setting of a SPEC, as
generators that yield (stage, done, total) progress and return the result lists scored.

The vectors are the descriptor file's, aligned once: the queries are its query rows
(L2-normalised), the gallery its gallery rows. An index file must hold those rows in the
file's order (its id i is the file's gallery row i); an index built from a factory string
is built from the dataset's gallery rows in dataset order (its id is the gallery index).
"""

from __future__ import annotations

import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from irviewer.core.ann.faiss_index import (
    BuiltIndex,
    iter_build_factory,
    iter_search,
    read_index_file,
    set_parameters,
    warm_up,
)
from irviewer.core.ann.index_ids import choose_id_order, file_rows, rows_to_gallery
from irviewer.core.ann.milvus_engine import ENGINE_WHERE, Collection
from irviewer.core.ann.results import AnnRun, narrow_beam_note, score_lists
from irviewer.core.ann.spec import WHERE, AnnSetting, AnnSpec, engine_label, parse_ann_spec
from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import AlignedDescriptors
from irviewer.core.errors import InputError, either
from irviewer.core.ranking import Ranking

#: How a message names the engine's names field.
NAMES_WHERE = either("--engine-names FIELD", "the names field", key="engine_names")

#: How a message names the engine's collection.
COLLECTION_WHERE = either("--collection NAME", "the collection", key="collection")

#: Progress of a search: (stage, done, total); 0 of 0 is a stage without a count.
Progress = tuple[str, int, int]


@dataclass(frozen=True)
class Searched:
    """One setting's result: the method's name, its lists as a truncated ranking, and the
    run (times, recalls, the exact lists it is compared with)."""

    name: str
    ranking: Ranking
    run: AnnRun


def engine_name(method: str, collection: str, params_text: str = "") -> str:
    """Return the name of ``method``'s queries searched in a Milvus collection with the
    search parameters ``params_text`` ("F + milvus:COLLECTION", "F +
    milvus:COLLECTION:nprobe=8")."""
    return f"{method} + {engine_label(collection, params_text)}"


def ann_name(method: str, setting: AnnSetting) -> str:
    """Return the name of ``method`` searched by ``setting`` ("F + IVF256,Flat:nprobe=8";
    an index file by its file name)."""
    return f"{method} + {setting_label(setting)}"


def setting_label(setting: AnnSetting) -> str:
    """Return a setting as method names and tables show it (:attr:`AnnSetting.label`)."""
    return setting.label


def iter_ann_search(method: str, aligned: AlignedDescriptors, exact: Ranking,
                    dataset: Dataset, depth: int, specs: Sequence[str],
                    label: str = "", names_file: Path | None = None
                    ) -> Generator[Progress, None, list[Searched]]:
    """Return every setting of every SPEC in ``specs`` (:mod:`irviewer.core.ann.spec`)
    searched over the descriptor file's vectors ``aligned`` (method ``method``, whose exact
    ranking is ``exact``), yielding progress; each index is built (or read) once for all its
    settings, in its own child process, ended when its settings are searched (or the search
    is stopped). ``names_file`` names the image of each id of an index file
    (:mod:`irviewer.core.ann.index_ids`; a factory string is built in the dataset's
    order)."""
    parsed = [parse_ann_spec(text) for text in specs]
    out: list[Searched] = []
    for spec in parsed:
        out += yield from _iter_spec(method, aligned, exact, dataset, depth, spec, label,
                                     names_file)
    return out


def _iter_spec(method: str, aligned: AlignedDescriptors, exact: Ranking, dataset: Dataset,
               depth: int, spec: AnnSpec, label: str,
               names_file: Path | None) -> Generator[Progress, None, list[Searched]]:
    n_g = dataset.n_gallery
    id_map: np.ndarray | None = None
    id_order: str | None = None
    if spec.is_file:
        name = Path(spec.index).name
        yield (f"reading the index {name}{label}", 0, 0)
        built = read_index_file(Path(spec.index), name, int(aligned.dim), method)
        try:
            order = choose_id_order(built, aligned, dataset, name, method, names_file)
        except BaseException:
            built.close()
            raise
        id_map, id_order, source = order.id_map, order.sentence, "FAISS index file"
    else:
        built = yield from _labelled(
            iter_build_factory(spec.index, aligned.gallery, aligned.gallery_rows, n_g), label)
        source = "FAISS index factory"
    try:
        return (yield from iter_settings(method, aligned, exact, dataset, depth, built,
                                         spec.settings(), id_map, source, label, id_order))
    finally:
        built.close()


def iter_settings(method: str, aligned: AlignedDescriptors, exact: Ranking, dataset: Dataset,
                  depth: int, built: BuiltIndex, settings: Sequence[AnnSetting],
                  id_map: np.ndarray | None = None, source: str = "FAISS index factory",
                  label: str = "", id_order: str | None = None
                  ) -> Generator[Progress, None, list[Searched]]:
    """Return every setting in ``settings`` searched on the index ``built`` (already built
    or read; ``id_map`` maps its ids to gallery indices, None when they are; ``id_order``
    says how, for the output), yielding progress: each one's lists scored and compared
    with the exact ranking ``exact``, with a note when its search beam is narrower than
    the depth (:func:`~irviewer.core.ann.results.narrow_beam_note`)."""
    warm_up(built, aligned.queries)
    out = []
    for setting in settings:
        beam = set_parameters(built, setting, setting_label(setting))
        searched = yield from _iter_setting(method, aligned, exact, dataset, depth, built,
                                            setting, id_map, source, label)
        out.append(replace(searched, run=replace(
            searched.run, id_order=id_order, warnings=built.warnings,
            beam_note=narrow_beam_note(beam, depth, "efSearch", "FAISS"))))
    return out


def _iter_setting(method: str, aligned: AlignedDescriptors, exact: Ranking,
                  dataset: Dataset, depth: int, built: BuiltIndex,
                  setting: AnnSetting, id_map: np.ndarray | None, source: str,
                  label: str) -> Generator[Progress, None, Searched]:
    # Entries that cannot count (rows outside the dataset, images removed for every query)
    # are asked for on top of the depth, so that each list still holds ``depth`` results.
    extra = int(dataset.global_ignored.size) + (
        int(np.count_nonzero(id_map[:built.ntotal] < 0)) if id_map is not None else 0)
    ids, sims, spent = yield from iter_search(
        built, aligned.queries, depth + extra, f"searching {setting_label(setting)}{label}")
    if (ids < -1).any():
        raise InputError(f"{WHERE} {setting_label(setting)}: the index returns id "
                         f"{int(ids[ids < -1][0])}; FAISS ids are rows from 0 (-1 is FAISS's "
                         "\"no result\")")
    if id_map is not None:
        beyond = ids >= len(id_map)
        if beyond.any():
            raise InputError(f"{WHERE} {setting_label(setting)}: the index returns id "
                             f"{int(ids[beyond][0])}, beyond the {len(id_map):,} images its "
                             "ids were read as")
        ids = np.where(ids >= 0, id_map[np.maximum(ids, 0)], -1)
    name = ann_name(method, setting)
    yield (f"scoring {setting_label(setting)}{label}", 0, 0)
    ranking, recall = score_lists(dataset, ids, sims, depth, name, aligned, exact)
    run = AnnRun(setting.text, source, built.facts.kind, built.build_s, spent,
                 dataset.n_queries, depth, recall)
    return Searched(name, ranking, run)


def iter_engine(method: str, aligned: AlignedDescriptors, exact: Ranking | None,
                dataset: Dataset, depth: int, uri: str, collection: str | None,
                names_field: str | None = None, label: str = "",
                params: Sequence[tuple[str, float]] = ()
                ) -> Generator[Progress, None, Searched]:
    """Return the descriptor file's queries (``aligned``) searched in the Milvus collection
    ``collection`` at ``uri`` (:mod:`irviewer.core.ann.milvus_engine`) with the search
    parameters ``params`` (one setting; or the URI's own, :mod:`irviewer.core.ann.
    engine_spec`, when it holds one setting), yielding progress: the returned image names
    matched to the dataset's gallery by name, scored as result lists and, when the exact
    ranking ``exact`` was computed beside it, compared with it, with the note of a beam
    narrower than the depth. InputError (one sentence) when none of the returned names is
    a gallery image, or for a parameter the collection's index type does not take."""
    from irviewer.core.ann.engine_spec import (
        EngineSetting,
        parse_engine_spec,
        search_beam,
        search_params,
    )
    from irviewer.core.ann.milvus_engine import connect, describe, is_local

    spec = parse_engine_spec(uri)
    settings = spec.settings()
    if params:
        settings = (EngineSetting(spec.uri, tuple(params)),)
    if len(settings) != 1:
        raise InputError(f"{ENGINE_WHERE} {spec.text}: one setting is searched at a time")
    setting = settings[0]
    if not collection:
        raise InputError(f"{ENGINE_WHERE} {spec.uri}: name the collection holding the "
                         f"gallery ({COLLECTION_WHERE})")
    yield (f"connecting to {spec.uri}{label}", 0, 0)
    start = time.perf_counter()
    client = connect(spec.uri)
    found = describe(client, spec.uri, collection, names_field, int(aligned.dim))
    build_s = time.perf_counter() - start
    local = is_local(spec.uri)
    source = "Milvus Lite" if local else "Milvus"
    request = search_params(found.index_type, found.name, setting, f"{ENGINE_WHERE} {spec.uri}"
                            + (f":{setting.params_text}" if setting.params_text else ""))
    searched = yield from _iter_engine_setting(
        method, aligned, exact, dataset, depth, client, found, collection,
        setting.params_text, request, label, build_s, source)
    note = narrow_beam_note(search_beam(found.index_type, request, local), depth, "ef", source)
    return replace(searched, run=replace(searched.run, beam_note=note))


def _iter_engine_setting(method: str, aligned: AlignedDescriptors, exact: Ranking | None,
                         dataset: Dataset, depth: int, client: object, found: Collection,
                         collection: str, params_text: str, params: dict,
                         label: str, build_s: float,
                         source: str) -> Generator[Progress, None, Searched]:
    from irviewer.core.ann.milvus_engine import iter_engine_search
    from irviewer.core.descriptors import name_key, name_keys

    shown = engine_label(collection, params_text)
    asked = depth + int(dataset.global_ignored.size)
    names, sims, spent = yield from iter_engine_search(
        client, found, aligned.queries, asked, f"searching {shown}{label}", params=params)
    index = {k: g for g, k in enumerate(name_keys(dataset.gallery))}
    ids = np.full(sims.shape, -1, dtype=np.int64)
    unknown = 0
    for q, row in enumerate(names):
        for j, n in enumerate(row):
            g = index.get(name_key(n), -1)
            ids[q, j] = g
            unknown += g < 0
    listed = sum(len(r) for r in names)
    if listed and unknown == listed:
        raise InputError(f"{ENGINE_WHERE} {collection}: none of the {found.names_field} values "
                         f"the engine returns is a gallery image of the dataset (e.g. "
                         f"{names[0][0]!r}); name the field holding image names with "
                         f"{NAMES_WHERE}")
    name = engine_name(method, collection, params_text)
    yield (f"scoring {shown}{label}", 0, 0)
    ranking, recall = score_lists(dataset, ids, sims, depth, name, aligned, exact)
    run = AnnRun(shown, source, f"{found.index_type} {found.metric}".strip(), build_s, spent,
                 dataset.n_queries, depth, recall)
    return Searched(name, ranking, run)


def _labelled(steps: Generator[Progress, None, BuiltIndex],
              label: str) -> Generator[Progress, None, BuiltIndex]:
    while True:
        try:
            stage, done, total = next(steps)
        except StopIteration as finished:
            return finished.value
        yield (f"{stage}{label}", done, total)


__all__ = ["COLLECTION_WHERE", "NAMES_WHERE", "Progress", "Searched", "ann_name", "engine_name",
           "file_rows", "iter_ann_search", "iter_engine", "iter_settings",
           "rows_to_gallery", "setting_label"]
