"""Approximate searches as methods of the open data, Qt-free: a descriptor file's exact
method searched by a FAISS index (:func:`iter_ann_methods`, one method per setting) or in a
vector engine's collection (:func:`iter_engine_search`), each a :class:`Method` "F + ..."
made from the exact one, with the search's run (times, recalls, the exact lists it is
compared with). :func:`irviewer.opening.opener.iter_open` calls them for ``--ann`` and
``--engine`` and for the searches a session recorded (:func:`iter_recorded`);
:mod:`irviewer.opening.ann` for the window.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import replace
from pathlib import Path

from irviewer.core.ann.search import Searched, iter_ann_search, iter_engine
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.opening.method import Method, Step, as_steps


def iter_ann_methods(plain: Method, dataset: Dataset, depth: int, specs: Sequence[str],
                     label: str = "", names_file: Path | None = None
                     ) -> Generator[Step, None, list[Method]]:
    """Return the methods "F + SETTING" of every setting of every SPEC in ``specs`` over
    the exact method ``plain``'s vectors (:func:`irviewer.core.ann.search.iter_ann_search`;
    ``names_file`` names the images of an index file's ids), yielding progress."""
    aligned = plain.ranking.descriptors
    assert aligned is not None
    return derived(plain, (yield from as_steps(iter_ann_search(
        plain.name, aligned, plain.ranking, dataset, depth, specs, label, names_file))))


def iter_engine_search(plain: Method, dataset: Dataset, depth: int, uri: str,
                       collection: str | None, names_field: str | None = None,
                       label: str = "") -> Generator[Step, None, list[Method]]:
    """Return the methods "F + milvus:COLLECTION" (one per setting of the search parameters
    after the URI, "F + milvus:COLLECTION:nprobe=8"): ``plain``'s queries searched in
    ``collection`` at ``uri`` (:func:`irviewer.core.ann.search.iter_engine`), yielding
    progress."""
    aligned = plain.ranking.descriptors
    assert aligned is not None
    return derived(plain, (yield from as_steps(iter_engine(
        plain.name, aligned, plain.ranking, dataset, depth, uri, collection, names_field,
        label))))


def iter_recorded(plain: Method, dataset: Dataset, depth: int, specs: Sequence[str],
                  not_searched: list[str], label: str = ""
                  ) -> Generator[Step, None, list[Method]]:
    """Return the methods of the approximate searches a session or the window recorded
    (``specs``), as :func:`iter_ann_methods` does, except that a SPEC that cannot be
    searched again (its index file gone) adds its sentence, with what to do, to
    ``not_searched`` instead of stopping the opening."""
    found: list[Method] = []
    for spec in specs:
        try:
            found += yield from iter_ann_methods(plain, dataset, depth, (spec,), label)
        except InputError as e:
            not_searched.append(
                f"{plain.name}: the approximate method {spec} was not searched again "
                f"({e.for_window()}); put its index file back, or add the method again "
                "(File \u25b8 Add an approximate index method\u2026)")
    return found


def derived(plain: Method, searched: Sequence[Searched]) -> list[Method]:
    """Return the methods of approximate searches of ``plain``'s vectors."""
    return [replace(plain, name=s.name, ranking=s.ranking, notes=(), ann=s.run,
                    evaluations={}) for s in searched]


__all__ = ["derived", "iter_ann_methods", "iter_engine_search", "iter_recorded"]
