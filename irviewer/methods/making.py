"""Making methods: the one pipeline that turns :class:`~irviewer.methods.spec.MethodSpec`
values into rankings (:class:`~irviewer.methods.method.Method`), for every command and the
window.

A file's methods are made together: a descriptor file is read and aligned once; its plain
method is ranked by cosine similarity (HPatches task lists: over each query's own pool;
DISC21: the pairs of isc2021's descriptor track, :mod:`irviewer.formats.own_rankers`);
each derived method starts from that plain method — re-ranked by a chain
(:func:`irviewer.core.rerank.iter_rerank`), searched by a FAISS index (one index built or
read for every setting of a SPEC: :mod:`irviewer.core.ann.search`) or in a vector engine's
collection. A precomputed ranking is read. A descriptor file that holds the queries only,
whose gallery lives in the engine it is searched in, gives the engine's method alone.
Vectors held in memory (:mod:`irviewer.methods.held`) are made exactly as a descriptor
file's; a score matrix held in memory is ranked as score rows
(:func:`irviewer.core.ranking.iter_rank_rows`).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from irviewer.core.ann.search import Searched, iter_ann_search, iter_engine
from irviewer.core.ann.spec import WHERE as ANN_WHERE
from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import (
    AlignedDescriptors,
    Descriptors,
    align,
    align_queries,
    holds_gallery,
)
from irviewer.core.errors import InputError, Sentence
from irviewer.core.file_digests import file_digest
from irviewer.core.ranking import Ranking, iter_rank, iter_rank_rows
from irviewer.core.rerank import iter_rerank, parse_spec
from irviewer.core.rerank.spec import WHERE as RERANK_WHERE
from irviewer.formats.base import option
from irviewer.formats.descriptor_files import (
    descriptor_names,
    descriptors_of_arrays,
    read_descriptors,
)
from irviewer.formats.disc21 import NAME as DISC21
from irviewer.formats.hpatches_tasks import NAME as TASKS
from irviewer.formats.own_rankers import own_ranker
from irviewer.methods.held import LOWER_FIRST
from irviewer.methods.method import Method, Step, as_steps
from irviewer.methods.spec import (
    RANKING,
    SCORES,
    Approximate,
    Engine,
    MethodSpec,
    Reranked,
    Source,
)

#: What one file's methods are made as: progress steps, then the methods.
Making = Generator[Step, None, list[Method]]


def iter_make(specs: Sequence[MethodSpec], dataset: Dataset,
              row_names: tuple[str, ...] | None = None,
              not_made: list[str] | None = None, pairs: str | None = None) -> Making:
    """Return the methods of ``specs`` on ``dataset``, in the specs' order, yielding
    progress; every file is read once for all its methods. ``row_names`` names the rows
    of descriptor files without names; ``pairs``: DISC21's pair settings (``--copy-pairs``).
    A spec that is not ``required`` (recorded by a session or the window) and cannot be
    made again adds its sentence to ``not_made`` instead of stopping; InputError for any
    other bad input."""
    by_file: dict[int, list[MethodSpec]] = {}
    for spec in specs:
        by_file.setdefault(spec.source.position, []).append(spec)
    made: dict[str, Method] = {}
    for i, own in enumerate(by_file.values()):
        label = f" ({own[0].name}, {i + 1} of {len(by_file)})" if len(by_file) > 1 else ""
        for method in (yield from iter_file(own, dataset, row_names, label, not_made, pairs)):
            made[method.name] = method
    return [made[s.name] for s in specs if s.name in made]


def iter_file(specs: Sequence[MethodSpec], dataset: Dataset, row_names: tuple[str, ...] | None,
              label: str = "", not_made: list[str] | None = None,
              pairs: str | None = None) -> Making:
    """Return the methods of one file's ``specs`` (its plain method first when asked for),
    yielding progress (``label`` names the file in the stages; ``pairs`` as
    :func:`iter_make`)."""
    source = specs[0].source
    derived = [s for s in specs if s.derivation is not None]
    if source.kind in (RANKING, SCORES):
        if derived:
            what = ("a score matrix has none; give the vectors instead" if source.kind == SCORES
                    else "a precomputed ranking (TREC run, .npz indices, .results) has none; "
                    "give the descriptor file instead")
            raise InputError(f"{source.path.name}: {_where(derived[0])} works on the vectors "
                             f"of a descriptor file, and {what}")
        if source.kind == SCORES:
            return [(yield from _iter_score_matrix(specs[0], dataset, label))]
        return [(yield from _iter_ranking_file(specs[0], dataset, label, pairs))]
    if derived and dataset.format == TASKS:
        raise InputError(f"{source.path.name}: HPatches task lists rank each query's own "
                         f"pool of patches; {_where(derived[0])} applies to a dataset with one "
                         "gallery")
    if derived and dataset.format == DISC21:
        raise InputError(f"{source.path.name}: DISC21 scores the pairs isc2021's descriptor "
                         f"track makes; {_where(derived[0])} applies to a cosine ranking")
    descriptors = yield from _iter_read(source, dataset, row_names, label)
    if derived and all(isinstance(s.derivation, Engine) for s in derived) \
            and _queries_only(source, dataset):
        aligned = align_queries(descriptors, dataset)
        out = []
        for spec in derived:
            searched = yield from _iter_engine(spec, aligned, None, dataset, label)
            out.append(replace(_descriptor_method(specs[0], descriptors, searched.ranking),
                               name=spec.name, ann=searched.run, spec=replace(spec, base=None)))
        return out
    plain_spec = next(s for s in specs if s.derivation is None)
    if (own := own_ranker(dataset.format)) is not None:  # HPatches tasks, DISC21 pairs
        ranking = None
        for done, total, result in own(dataset, descriptors, plain_spec.depth, pairs):
            yield Step(f"ranking{label}", done, total)
            ranking = result or ranking
        assert ranking is not None
        return [_descriptor_method(plain_spec, descriptors, ranking)]
    aligned = align(descriptors, dataset)
    plain = _descriptor_method(plain_spec, descriptors,
                               (yield from _iter_rank(aligned, dataset, plain_spec.depth, label)))
    return [plain, *(yield from iter_derived(plain, derived, dataset, label, not_made))]


def iter_derived(plain: Method, specs: Sequence[MethodSpec], dataset: Dataset,
                 label: str = "", not_made: list[str] | None = None) -> Making:
    """Return the methods ``specs`` derive from the exact method ``plain`` (its aligned
    vectors and its ranking: the first ``aqe`` of a chain starts from its lists, an
    approximate search's recall is measured against them), in the specs' order, yielding
    progress: the window's additions and :func:`iter_file` both make derived methods here."""
    aligned = plain.ranking.descriptors
    if aligned is None:
        raise InputError(f"{plain.name} has no vectors to derive a method from")
    by_spec: dict[str, list[MethodSpec]] = {}
    for spec in specs:
        if isinstance(spec.derivation, Approximate):
            by_spec.setdefault(spec.derivation.spec, []).append(spec)
    out: list[Method] = []
    for spec in specs:
        d = spec.derivation
        if isinstance(d, Reranked):
            chain = parse_spec(d.spec)
            ranking = yield from as_steps(
                iter_rerank(chain, aligned, dataset, spec.depth, plain.ranking),
                f"re-ranking {plain.name} by {d.spec}: ", label)
            out.append(replace(plain, name=spec.name, ranking=ranking, notes=(), rerank=chain,
                               spec=spec, evaluations={}))
        elif isinstance(d, Approximate) and d.spec in by_spec:
            out += yield from _iter_approximate(by_spec.pop(d.spec), plain, aligned, dataset,
                                                label, not_made)
        elif isinstance(d, Engine):
            searched = yield from _iter_engine(spec, aligned, plain.ranking, dataset, label)
            out.append(replace(plain, name=spec.name, ranking=searched.ranking, notes=(),
                               ann=searched.run, spec=spec, evaluations={}))
    return out


def _iter_approximate(specs: list[MethodSpec], plain: Method, aligned: AlignedDescriptors,
                      dataset: Dataset, label: str, not_made: list[str] | None) -> Making:
    """Return the methods of every setting of one SPEC (one index for all), yielding
    progress; a recorded SPEC that cannot be searched again is said in ``not_made``."""
    first = specs[0].derivation
    assert isinstance(first, Approximate)
    try:
        searched = yield from as_steps(iter_ann_search(
            plain.name, aligned, plain.ranking, dataset, specs[0].depth, (first.spec,), label,
            first.id_names))
    except InputError as e:
        if specs[0].required or not_made is None:
            raise
        not_made.append(
            f"{plain.name}: the approximate method {first.spec} was not searched again "
            f"({e.for_window()}); put its index file back, or add the method again "
            "(File \u25b8 Add an approximate index method\u2026)")
        return []
    by_setting = {s.derivation.setting.text: s for s in specs
                  if isinstance(s.derivation, Approximate)}
    out = []
    for result in searched:
        spec = by_setting.get(result.run.setting)
        if spec is not None:
            out.append(replace(plain, name=spec.name, ranking=result.ranking, notes=(),
                               ann=result.run, spec=spec, evaluations={}))
    return out


def _iter_engine(spec: MethodSpec, aligned: AlignedDescriptors, exact: Ranking | None,
                 dataset: Dataset, label: str) -> Generator[Step, None, Searched]:
    d = spec.derivation
    assert isinstance(d, Engine)
    return (yield from as_steps(iter_engine(spec.name, aligned, exact, dataset, spec.depth,
                                            d.uri, d.collection, d.names_field, label,
                                            d.params)))


def _iter_ranking_file(spec: MethodSpec, dataset: Dataset, label: str,
                       pairs: str | None = None) -> Generator[Step, None, Method]:
    from irviewer.formats.rankings import read_ranking

    yield Step(f"reading the ranking{label}")
    ranking, notes = read_ranking(spec.source.path, dataset, pairs)
    return Method(spec.name, spec.source.path, RANKING, ranking, notes=tuple(notes),
                  digest=file_digest(spec.source.path), spec=spec)


def _iter_score_matrix(spec: MethodSpec, dataset: Dataset, label: str
                       ) -> Generator[Step, None, Method]:
    """Return the method of a score matrix held in memory: its rows ranked as every score
    row made elsewhere (equal scores in gallery order, the exact rank of every item of
    interest), distances negated first."""
    held = spec.source.held
    assert held is not None
    matrix = held.scores
    shape = (dataset.n_queries, dataset.n_gallery)
    if tuple(matrix.shape) != shape:
        raise InputError(f"{spec.source.path.name}: a matrix of shape {tuple(matrix.shape)} "
                         f"for {dataset.n_queries:,} queries and {dataset.n_gallery:,} gallery "
                         "images; give one row per query and one column per gallery image, "
                         "in the dataset's order")
    sign = np.float32(-1 if held.order == LOWER_FIRST else 1)

    def rows(qa: int, qb: int) -> np.ndarray:
        block = np.asarray(matrix[qa:qb], dtype=np.float32)
        bad = ~np.isfinite(block) if block.dtype.kind == "f" else None
        if bad is not None and bad.any():
            q, g = (int(v) for v in np.argwhere(bad)[0])
            raise InputError(f"{spec.source.path.name}: the score of query "
                             f"{dataset.queries[qa + q].name} and gallery image "
                             f"{dataset.gallery[g]} is {float(block[q, g])}; every score must "
                             "be a finite number")
        return sign * block

    ranking = None
    for progress in iter_rank_rows(dataset, rows, k=spec.depth, source="scores"):
        yield Step(f"ranking{label}", progress.done, progress.total)
        ranking = progress.ranking or ranking
    assert ranking is not None
    return Method(spec.name, spec.source.path, SCORES, ranking, notes=held.notes,
                  digest=held.digest, spec=spec)


def _iter_read(source: Source, dataset: Dataset, row_names: tuple[str, ...] | None,
               label: str) -> Generator[Step, None, Descriptors]:
    yield Step(f"reading the descriptors{label}")
    queries = tuple(q.name for q in dataset.queries)
    if source.held is not None:
        return descriptors_of_arrays(source.path, source.held.arrays,
                                     gallery_names=dataset.gallery, query_names=queries,
                                     row_names=row_names)
    return read_descriptors(source.path, gallery_names=dataset.gallery, query_names=queries,
                            row_names=row_names)


def _iter_rank(aligned: AlignedDescriptors, dataset: Dataset, depth: int,
               label: str) -> Generator[Step, None, Ranking]:
    ranking: Ranking | None = None
    for progress in iter_rank(aligned, dataset, k=depth):
        yield Step(f"ranking{label}", progress.done, progress.total)
        ranking = progress.ranking or ranking
    assert ranking is not None
    return ranking


def _queries_only(source: Source, dataset: Dataset) -> bool:
    """Return True when the descriptor file (or vectors held in memory) of ``source`` names
    gallery images but not every one of ``dataset``'s: it holds the queries, the gallery
    lives in the engine."""
    names = source.held.names if source.held is not None else descriptor_names(source.path)
    return names is not None and not holds_gallery(names, dataset)


def _descriptor_method(spec: MethodSpec, descriptors: Descriptors, ranking: Ranking) -> Method:
    by_position = descriptors.by_position is not None
    notes = (position_note(spec.source.path, descriptors.by_position),) if by_position else ()
    held = spec.source.held
    if held is not None:  # the arrays' bytes, hashed while they are ranked
        notes, digest = (*notes, *held.notes), held.digest
    else:  # the file's, hashed since it was named
        digest = descriptors.digest
    return Method(spec.name, spec.source.path, spec.source.kind, ranking, notes=notes,
                  digest=digest, dim=int(descriptors.dim),
                  matched_by_position=by_position, spec=spec)


def _where(spec: MethodSpec) -> str:
    return str(RERANK_WHERE if isinstance(spec.derivation, Reranked) else ANN_WHERE)


def position_note(path: Path, layout: str | None) -> Sentence:
    """Return the sentence saying that the rows of the descriptor file ``path`` were matched
    to the dataset by position (``layout``: which order was assumed) and how to match them
    by name instead."""
    return Sentence(f"{Path(path).name}: its rows carry no image names, so they were matched "
                    f"to the dataset by position ({layout}); if the file is in another order "
                    "the numbers mean nothing. To match by name, give "
                    f"{option('row_names')} (one image name per row, in file order) or a "
                    "descriptor file with names")


__all__ = ["Making", "iter_derived", "iter_file", "iter_make", "position_note"]
