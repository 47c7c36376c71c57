"""Searching a descriptor file's queries with a FAISS index, every setting of a SPEC, as
generators that yield (stage, done, total) progress and return the result lists scored.

The vectors are the descriptor file's, aligned once: the queries are its query rows
(L2-normalised), the gallery its gallery rows. An index file must hold those rows in the
file's order (its id i is the file's gallery row i); an index built from a factory string
is built from the dataset's gallery rows in dataset order (its id is the gallery index).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from irviewer.core.ann.faiss_index import (
    BuiltIndex,
    iter_build_factory,
    iter_search,
    read_index_file,
    set_parameters,
)
from irviewer.core.ann.results import AnnRun, score_lists
from irviewer.core.ann.spec import WHERE, AnnSetting, AnnSpec, parse_ann_spec
from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import AlignedDescriptors
from irviewer.core.errors import InputError
from irviewer.core.ranking import Ranking, ranking_from_lists

#: Progress of a search: (stage, done, total); 0 of 0 is a stage without a count.
Progress = tuple[str, int, int]


@dataclass(frozen=True)
class Searched:
    """One setting's result: the method's name, its lists as a truncated ranking, and the
    run (times, recalls, the exact lists it is compared with)."""

    name: str
    ranking: Ranking
    run: AnnRun


def ann_name(method: str, setting: AnnSetting) -> str:
    """Return the name of ``method`` searched by ``setting`` ("F + IVF256,Flat:nprobe=8";
    an index file by its file name)."""
    return f"{method} + {setting_label(setting)}"


def setting_label(setting: AnnSetting) -> str:
    """Return a setting as method names and tables show it: an index file by its file
    name, then the parameters."""
    if not setting.is_file:
        return setting.text
    base = Path(setting.index).name
    return f"{base}:{setting.params_text}" if setting.params else base


def exact_lists(dataset: Dataset, exact: Ranking) -> Ranking:
    """Return the exact ranking's top K scored by the rule for result lists (a positive
    beyond the depth never retrieved): what an approximate search of the same depth is
    compared with, so that an exhaustive index loses nothing at any depth."""
    return ranking_from_lists(dataset, exact.top_indices, exact.top_scores,
                              f"exact top {exact.k}")


def file_rows(aligned: AlignedDescriptors) -> int:
    """Return how many gallery rows the descriptor file has (an index file must hold as
    many)."""
    return len(aligned.gallery_names) or int(aligned.gallery.shape[0])


def rows_to_gallery(aligned: AlignedDescriptors, n_gallery: int) -> np.ndarray:
    """Return, per gallery row of the descriptor file, its dataset gallery index (-1 for a
    row the dataset does not hold)."""
    out = np.full(file_rows(aligned), -1, dtype=np.int64)
    if aligned.gallery_rows is None:
        out[:n_gallery] = np.arange(n_gallery)
    else:
        out[aligned.gallery_rows] = np.arange(n_gallery)
    return out


def iter_ann_search(method: str, aligned: AlignedDescriptors, exact: Ranking,
                    dataset: Dataset, depth: int, specs: Sequence[str],
                    label: str = "") -> Generator[Progress, None, list[Searched]]:
    """Return every setting of every SPEC in ``specs`` (:mod:`irviewer.core.ann.spec`)
    searched over the descriptor file's vectors ``aligned`` (method ``method``, whose exact
    ranking is ``exact``), yielding progress; each index is built (or read) once for all its
    settings."""
    out: list[Searched] = []
    for text in specs:
        spec = parse_ann_spec(text)
        out += yield from _iter_spec(method, aligned, exact, dataset, depth, spec, label)
    return out


def _iter_spec(method: str, aligned: AlignedDescriptors, exact: Ranking, dataset: Dataset,
               depth: int, spec: AnnSpec,
               label: str) -> Generator[Progress, None, list[Searched]]:
    n_g = dataset.n_gallery
    id_map: np.ndarray | None = None
    if spec.is_file:
        yield (f"reading the index {Path(spec.index).name}{label}", 0, 0)
        sizes = (file_rows(aligned),) + ((n_g,) if aligned.gallery_rows is None else ())
        built = read_index_file(Path(spec.index), Path(spec.index).name, int(aligned.dim),
                                sizes, method)
        id_map = rows_to_gallery(aligned, n_g)
        source = "FAISS index file"
    else:
        built = yield from _labelled(
            iter_build_factory(spec.index, aligned.gallery, aligned.gallery_rows, n_g), label)
        source = "FAISS index factory"
    compared = exact_lists(dataset, exact)
    out = []
    for setting in spec.settings():
        set_parameters(built, setting, setting_label(setting))
        out.append((yield from _iter_setting(method, aligned, exact, compared, dataset,
                                             depth, built, setting, id_map, source, label)))
    return out


def _iter_setting(method: str, aligned: AlignedDescriptors, exact: Ranking,
                  compared: Ranking, dataset: Dataset, depth: int, built: BuiltIndex,
                  setting: AnnSetting, id_map: np.ndarray | None, source: str,
                  label: str) -> Generator[Progress, None, Searched]:
    # Entries that cannot count (rows outside the dataset, images removed for every query)
    # are asked for on top of the depth, so that each list still holds ``depth`` results.
    extra = int(dataset.global_ignored.size) + (
        int(np.count_nonzero(id_map[:built.index.ntotal] < 0)) if id_map is not None else 0)
    ids, sims, spent = yield from iter_search(
        built, aligned.queries, depth + extra, f"searching {setting_label(setting)}{label}")
    if id_map is not None:
        beyond = ids >= len(id_map)
        if beyond.any():
            raise InputError(f"{WHERE} {setting_label(setting)}: the index returns id "
                             f"{int(ids[beyond][0])}, beyond the descriptor file's "
                             f"{len(id_map):,} gallery rows")
        ids = np.where(ids >= 0, id_map[np.maximum(ids, 0)], -1)
    name = ann_name(method, setting)
    yield (f"scoring {setting_label(setting)}{label}", 0, 0)
    ranking, recall = score_lists(dataset, ids, sims, depth, name, aligned, exact)
    run = AnnRun(setting.text, source, built.facts.kind, built.build_s, spent,
                 dataset.n_queries, depth, recall, compared)
    return Searched(name, ranking, run)


def _labelled(steps: Generator[Progress, None, BuiltIndex],
              label: str) -> Generator[Progress, None, BuiltIndex]:
    while True:
        try:
            stage, done, total = next(steps)
        except StopIteration as finished:
            return finished.value
        yield (f"{stage}{label}", done, total)


__all__ = ["Progress", "Searched", "ann_name", "exact_lists", "file_rows", "iter_ann_search",
           "rows_to_gallery", "setting_label"]
