"""Opening a dataset with one or more methods: the one opening path of every command and of
the window (Qt-free).

A *method* is what produced a ranking: a descriptor file (irviewer ranks by cosine
similarity, or HPatches task lists by their own pools) or a precomputed ranking (TREC run,
``.npz`` indices, HPatches ``.results``). :func:`iter_open` is a generator: it yields
:class:`Step` progress values and *returns* the :class:`Opened` result, so a caller that
wants progress writes ``opened = yield from iter_open(request)`` (or iterates and takes
``StopIteration.value``); :func:`open_now` returns it directly. The window runs it in a
worker thread; ``irviewer eval`` runs :func:`open_now`. What to open, the
:class:`~irviewer.opening.request.OpenRequest`, is :mod:`irviewer.opening.request`'s.

:class:`Opened` holds one shared :class:`Dataset` and every evaluation, computed once per
(method, protocol, AP rule, self-match rule) and kept in one cache; other conventions are
re-scored from the same ranking on request, never re-ranked, and a change of ground truth
(:meth:`Opened.update_ground_truth`) re-scores only the queries it touches.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from irviewer.core.ann.search import iter_engine
from irviewer.core.ann.spec import WHERE as ANN_WHERE
from irviewer.core.ann.spec import parse_ann_spec
from irviewer.core.chance import chance_level
from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import (
    AlignedDescriptors,
    Descriptors,
    align,
    align_queries,
    file_sha256,
    holds_gallery,
    prefetch_sha256,
)
from irviewer.core.errors import InputError, Sentence
from irviewer.core.evaluation import Evaluation, evaluate
from irviewer.core.progress import result_of
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import Ranking, iter_rank
from irviewer.core.rerank import Chain, iter_rerank, parse_spec
from irviewer.core.rerank.spec import WHERE
from irviewer.formats.base import ReadOptions, option, read_name_list
from irviewer.formats.corrections_file import (
    LoadedCorrections,
    load_corrections,
)
from irviewer.formats.descriptor_files import descriptor_names, read_descriptors
from irviewer.formats.hpatches_tasks import NAME as TASKS
from irviewer.formats.hpatches_tasks import iter_rank_tasks
from irviewer.formats.registry import read_dataset
from irviewer.opening.approximate import iter_ann_methods, iter_engine_search, iter_recorded
from irviewer.opening.method import Method, Step, as_steps
from irviewer.opening.request import (
    DescriptorFile,
    MethodSource,
    OpenRequest,
    RankingFile,
    method_names,
    reranked_name,
    with_default_method,
)


class MethodEvaluations(Mapping[str, Evaluation]):
    """Read-only view: protocol name -> one method's evaluation under the protocol's own
    conventions, read from (and computed into) :class:`Opened`'s cache."""

    def __init__(self, opened: Opened, method: str) -> None:
        self._opened, self._method = opened, method

    def __getitem__(self, protocol: str) -> Evaluation:
        if protocol not in self._opened.protocols:
            raise KeyError(protocol)
        return self._opened.evaluation(self._method, protocol)

    def __iter__(self) -> Iterator[str]:
        return iter(self._opened.protocols)

    def __len__(self) -> int:
        return len(self._opened.protocols)


#: An evaluation's cache key: (method, protocol, AP rule, self-match rule), rules resolved.
EvaluationKey = tuple[str, str, str, str]


@dataclass
class Opened:
    """A dataset ready to inspect: one shared dataset and, per method, its ranking; every
    evaluation in one cache (:meth:`evaluation`).

    ``methods`` keeps the request's order; the first is shown first. ``protocols`` are the
    protocols scored (the request's, else the dataset's). ``corrections`` is the
    corrections file applied when opening (None when none was): its log's ``published``
    dataset is the ground truth as read, ``dataset`` starts as the corrected one.
    ``not_reopened`` says, one sentence each, which methods the request recorded could not
    be made again (an approximate method whose index file is gone); the request keeps them.
    """

    dataset: Dataset
    methods: dict[str, Method]
    request: OpenRequest
    _evaluations: dict[EvaluationKey, Evaluation] = field(default_factory=dict, repr=False)
    corrections: LoadedCorrections | None = None
    not_reopened: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.methods = {name: replace(m, evaluations=MethodEvaluations(self, name))
                        for name, m in self.methods.items()}

    @property
    def protocols(self) -> tuple[str, ...]:
        """Return the names of the protocols scored, in report order."""
        return self.dataset.protocols

    @property
    def first(self) -> Method:
        """Return the method opened first."""
        return next(iter(self.methods.values()))

    @property
    def ranking(self) -> Ranking:
        """Return the first method's ranking."""
        return self.first.ranking

    @property
    def evaluations(self) -> Mapping[str, Evaluation]:
        """Return the first method's evaluation per protocol."""
        return self.first.evaluations

    @property
    def notes(self) -> tuple[str, ...]:
        """Return every sentence for the user: the dataset's notes, then each method's
        (a method's notes name its file)."""
        return (*self.dataset.notes, *(n for m in self.methods.values() for n in m.notes))

    def evaluation(self, method: str, protocol: str, ap: str | None = None,
                   self_match: str | None = None) -> Evaluation:
        """Return ``method``'s evaluation under ``protocol`` with the AP rule and self-match
        rule overridden where given (None: the protocol's own); computed once, from the
        method's ranking (re-scored, never re-ranked)."""
        m = self.methods[method]
        chosen = get_protocol(protocol).override(ap=ap, self_match=self_match)
        key = (method, protocol, chosen.ap, chosen.self_match)
        found = self._evaluations.get(key)
        if found is None:
            found = self._evaluations[key] = evaluate(self.dataset, m.ranking, chosen)
        return found

    def add_reranked(self, index: int, method: Method) -> None:
        """Add ``method``, descriptor file ``index`` re-ranked by ``method.rerank``: placed
        after that file's other methods and recorded in :attr:`request` (``reranked``), so
        that a session reopens it (:mod:`irviewer.opening.reranking` makes it)."""
        assert method.rerank is not None
        self.request = replace(self.request, reranked=(*self.request.reranked,
                                                       (index, method.rerank.text)))
        found = {**self.methods,
                 method.name: replace(method, evaluations=MethodEvaluations(self, method.name))}
        order = [n for n in self.request.method_names() if n in found]
        self.methods = {n: found[n] for n in (*order, *(n for n in found if n not in order))}

    def add_methods(self, after: str, methods: Sequence[Method], spec: str | None = None,
                    engine: tuple[str, str, str | None] | None = None) -> None:
        """Add ``methods`` (approximate searches of method ``after``) right after ``after``
        and the methods already derived from it. What made them is recorded in
        :attr:`request`, so that a session reopens them, when ``after`` is a descriptor
        file's plain method: ``spec``, an approximate-search SPEC (``approximate``; an
        index file by its absolute path), or ``engine``, (URI, collection, names field) of a
        vector engine the first file's queries were searched in (``engine``; one engine a
        request)."""
        key = self.request.method_key(after)
        file = key[0] if key is not None and key[1] is None \
            and key[0] < len(self.request.descriptors) else None
        if file is not None and spec is not None:
            parsed = parse_ann_spec(spec)
            if parsed.is_file:
                parsed = replace(parsed, index=str(Path(parsed.index).resolve()))
            self.request = replace(self.request, approximate=(
                *self.request.approximate, (file, parsed.text)))
        if file == 0 and engine is not None and self.request.engine is None:
            self.request = replace(self.request, engine=engine[0], collection=engine[1],
                                   engine_names=engine[2])
        names = list(self.methods)
        at = names.index(after) + 1
        while at < len(names) and names[at].startswith(f"{after} + "):
            at += 1
        added = {m.name: replace(m, evaluations=MethodEvaluations(self, m.name))
                 for m in methods}
        order = [*names[:at], *added, *names[at:]]
        found = {**self.methods, **added}
        self.methods = {n: found[n] for n in order}

    def cached(self) -> dict[EvaluationKey, Evaluation]:
        """Return a copy of the cache: (method, protocol, AP rule, self-match rule) ->
        evaluation."""
        return dict(self._evaluations)

    def update_ground_truth(self, dataset: Dataset, changed: Sequence[int]) -> None:
        """Replace the dataset by ``dataset`` (the same gallery and queries in the same
        order, new ground truth for the queries at positions ``changed``) and re-score
        only those queries of every cached evaluation (:meth:`Evaluation.with_queries`).

        InputError, and nothing changed, when the gallery or the queries differ.
        """
        updated = {key: ev.with_queries(dataset, changed)
                   for key, ev in self._evaluations.items()}
        self.dataset = dataset
        self._evaluations.clear()
        self._evaluations.update(updated)


#: What :func:`iter_open` and its helpers are: progress steps, then a returned result.
Opening = Generator[Step, None, Opened]


def iter_open(request: OpenRequest) -> Opening:
    """Read, rank and evaluate every method of ``request``, yielding :class:`Step` progress;
    return the :class:`Opened` result (``opened = yield from iter_open(request)``).

    Stop iterating (``close()``) to cancel between steps; ranking yields a step per block
    of queries, so a cancel is honoured within one block. A request that names no method
    takes the dataset's default (:func:`with_default_method`: a collection's descriptor
    file). InputError for bad input.
    """
    request = with_default_method(request)
    sources = request.method_sources()
    if not sources:
        raise InputError(f"{Path(request.dataset).name}: give a descriptor file or a "
                         "precomputed ranking to inspect it with")
    for source in sources:  # each file's hash, for the report, on another core meanwhile
        prefetch_sha256(source.path)
    chains = rerank_chains(request)
    pairs, approximate = request.reranked_pairs(), request.approximate_pairs()
    yield Step("reading the dataset")
    dataset, corrections = open_ground_truth(request)
    names = method_names(request.sources())
    n_methods = len(names)
    methods: dict[str, Method] = {}
    scored: dict[EvaluationKey, Evaluation] = {}
    not_reopened: list[str] = []
    for i, (name, source) in enumerate(zip(names, sources, strict=True)):
        label = f" ({name}, {i + 1} of {n_methods})" if n_methods > 1 else ""
        own = tuple(chains[spec] for j, spec in pairs if j == i)
        only = i == 0 and isinstance(source, DescriptorFile) and _queries_only(
            source, dataset, request, own)
        if only:
            assert isinstance(source, DescriptorFile)
            found = yield from _iter_engine_only(source, name, label, dataset, request)
        else:
            found = yield from iter_methods(source, name, label, dataset, request, own)
        searches = tuple(spec for j, spec in approximate if j == i)
        if (searches or (request.engine and i == 0)) and isinstance(source, DescriptorFile) \
                and not only:
            plain = next((m for m in found if m.rerank is None), None)
            if plain is None or dataset.format == TASKS:
                raise InputError(f"{source.path.name}: {ANN_WHERE} searches one gallery "
                                 "with the descriptor file's plain (exact) method")
            strict = tuple(spec for spec in searches if spec in request.ann)
            found += yield from iter_ann_methods(plain, dataset, request.k, strict, label,
                                                 request.ann_names)
            found += yield from iter_recorded(  # the window's or a session's: said if not
                plain, dataset, request.k, [s for s in searches if s not in strict],
                not_reopened, label)
            if request.engine and i == 0:
                found += yield from iter_engine_search(
                    plain, dataset, request.k, request.engine, request.collection,
                    request.engine_names, label)
        for method in found:
            yield Step(f"scoring{label}")
            mine = []
            for p in dataset.protocols:
                chosen = get_protocol(p).override(ap=request.ap, self_match=request.self_match)
                ev = evaluate(dataset, method.ranking, chosen)
                scored[(method.name, p, chosen.ap, chosen.self_match)] = ev
                mine.append(ev)
            if method.matched_by_position:
                method = replace(method, notes=(*method.notes, *chance_notes(method, mine)))
            methods[method.name] = method
    return Opened(dataset, methods, request, scored, corrections, tuple(not_reopened))


def _queries_only(source: DescriptorFile, dataset: Dataset, request: OpenRequest,
                  chains: tuple[Chain, ...]) -> bool:
    """Return True when ``source`` is searched in a vector engine and names gallery images
    but not every one of ``dataset``'s: it holds the queries, the gallery lives in the
    engine. False (today's path, and its sentence for missing gallery images) without an
    engine, for HPatches task lists, and when the file is also re-ranked or searched by a
    FAISS index, which need its gallery rows."""
    searched = any(j == 0 for j, _ in request.approximate_pairs())
    if not request.engine or chains or searched or dataset.format == TASKS:
        return False
    names = descriptor_names(source.path)
    return names is not None and not holds_gallery(names, dataset)


def _iter_engine_only(source: DescriptorFile, name: str, label: str, dataset: Dataset,
                      request: OpenRequest) -> Generator[Step, None, list[Method]]:
    """Return the methods "F + milvus:COLLECTION" of a descriptor file holding the queries
    only (one per setting of the engine's search parameters), yielding progress: its
    queries searched in the engine (:func:`irviewer.core.ann.search.iter_engine`), no exact
    ranking beside them."""
    descriptors = yield from _iter_read_descriptors(source, label, dataset, request)
    aligned = align_queries(descriptors, dataset)
    assert request.engine is not None
    searched = yield from as_steps(iter_engine(name, aligned, None, dataset, request.k,
                                               request.engine, request.collection,
                                               request.engine_names, label))
    return [replace(_descriptor_method(source, name, descriptors, s.ranking), name=s.name,
                    ann=s.run) for s in searched]


def rerank_chains(request: OpenRequest) -> dict[str, Chain]:
    """Return the request's re-ranking chains by SPEC (``rerank`` and ``reranked``), parsed
    (nothing is read yet); InputError for a bad SPEC, for SPECs without a descriptor file to
    re-rank (precomputed rankings carry no vectors), or for a ``reranked`` pair naming no
    descriptor file."""
    texts = dict.fromkeys([*request.rerank, *(s for _, s in request.reranked)])
    chains = {text: parse_spec(text) for text in texts}
    if request.rerank and not request.descriptors:
        files = ", ".join(Path(p).name for p in request.rankings) or Path(request.dataset).name
        raise InputError(f"{files}: {WHERE} re-ranks the vectors of a descriptor file, and a "
                         "precomputed ranking (TREC run, .npz indices, .results) has none; "
                         "give the descriptor file instead")
    for i, spec in request.reranked:
        if not 0 <= i < len(request.descriptors):
            raise InputError(f"{WHERE} {spec}: there is no descriptor file {i + 1} to "
                             f"re-rank ({len(request.descriptors)} given)")
    return chains


def iter_methods(source: MethodSource, name: str, label: str, dataset: Dataset,
                 request: OpenRequest,
                 chains: tuple[Chain, ...] = ()) -> Generator[Step, None, list[Method]]:
    """Return the methods that ``source`` gives, yielding progress: its plain method
    (:func:`iter_method`) and, for a descriptor file, one method "name + SPEC" per chain
    (:func:`irviewer.core.rerank.iter_rerank`; the plain one left out when
    ``request.keep_plain`` is False). The vectors are read and aligned once for all."""
    if isinstance(source, RankingFile) or not chains:
        return [(yield from iter_method(source, name, label, dataset, request))]
    if dataset.format == TASKS:
        raise InputError(f"{source.path.name}: HPatches task lists rank each query's own "
                         f"pool of patches; {WHERE} applies to a dataset with one gallery")
    descriptors = yield from _iter_read_descriptors(source, label, dataset, request)
    aligned = align(descriptors, dataset)
    plain = None
    out = []
    if request.keep_plain:
        for progress in iter_rank(aligned, dataset, k=request.k):
            yield Step(f"ranking{label}", progress.done, progress.total)
            plain = progress.ranking or plain
        assert plain is not None
        out.append(_descriptor_method(source, name, descriptors, plain))
    for chain in chains:
        ranking = yield from iter_reranking(chain, aligned, dataset, request.k, plain,
                                            f"re-ranking {chain.text}: ", label)
        out.append(replace(_descriptor_method(source, name, descriptors, ranking),
                           name=reranked_name(name, chain.text), rerank=chain))
    return out


def iter_reranking(chain: Chain, aligned: AlignedDescriptors, dataset: Dataset, k: int,
                   plain: Ranking | None, prefix: str,
                   suffix: str = "") -> Generator[Step, None, Ranking]:
    """Return the ranking of ``aligned`` re-ranked by ``chain``
    (:func:`irviewer.core.rerank.iter_rerank`, ``plain`` the cosine ranking when made),
    yielding each of its stages as a :class:`Step` named ``prefix + stage + suffix``."""
    return (yield from as_steps(iter_rerank(chain, aligned, dataset, k, plain), prefix,
                                suffix))


def open_ground_truth(request: OpenRequest) -> tuple[Dataset, LoadedCorrections | None]:
    """Return the request's dataset with its corrections file applied (the published one
    when it names none), and the applied corrections (None when none): the ground-truth half
    of :func:`iter_open`, for commands that need no ranking (``apply-corrections``)."""
    dataset = _read_dataset(request)
    if request.corrections is None:
        return dataset, None
    corrections = load_corrections(Path(request.corrections), dataset)
    return corrections.log.dataset, corrections


def open_now(request: OpenRequest) -> Opened:
    """Return :func:`iter_open`'s result without progress (scripts, tests, ``eval``)."""
    return result_of(iter_open(request))


def iter_method(source: MethodSource, name: str, label: str, dataset: Dataset,
                request: OpenRequest) -> Generator[Step, None, Method]:
    """Return the :class:`Method` that ``source`` gives on ``dataset``, yielding progress
    (``label`` names the method in the stages): the one place where a ranking is chosen —
    a precomputed ranking is read (:func:`irviewer.formats.rankings.read_ranking`), a
    descriptor file ranks HPatches task lists over their own pools
    (:func:`irviewer.formats.hpatches_tasks.iter_rank_tasks`) and every other dataset by
    cosine similarity (:func:`irviewer.core.ranking.iter_rank`)."""
    if isinstance(source, RankingFile):
        return (yield from _iter_ranking_method(source, name, label, dataset))
    return (yield from _iter_descriptor_method(source, name, label, dataset, request))


def _read_dataset(request: OpenRequest) -> Dataset:
    """Return the request's dataset; a gallery it does not list comes from the row-name
    list or the first descriptor file's names; ``request.protocol`` replaces its
    protocols."""
    opts = request.options
    if opts.gallery_names is None:
        names = _row_names(opts)
        if names is None and request.descriptors:
            names = descriptor_names(request.descriptors[0])
        if names is not None:
            opts = replace(opts, gallery_names=names)
    dataset = read_dataset(Path(request.dataset), request.format, opts)
    if request.protocol is not None:
        dataset = replace(dataset, protocols=(get_protocol(request.protocol).name,))
    return dataset


def _row_names(options: ReadOptions) -> tuple[str, ...] | None:
    """Return the names of the row-name list the options name, or None."""
    if options.row_names is None:
        return None
    return tuple(read_name_list(options.row_names))


def _iter_ranking_method(source: RankingFile, name: str, label: str,
                         dataset: Dataset) -> Generator[Step, None, Method]:
    from irviewer.formats.rankings import read_ranking

    yield Step(f"reading the ranking{label}")
    ranking, notes = read_ranking(source.path, dataset)
    return Method(name, source.path, "ranking", ranking, notes=tuple(notes),
                  sha256=file_sha256(source.path))


def _iter_read_descriptors(source: DescriptorFile, label: str, dataset: Dataset,
                           request: OpenRequest) -> Generator[Step, None, Descriptors]:
    yield Step(f"reading the descriptors{label}")
    return read_descriptors(source.path, gallery_names=dataset.gallery,
                            query_names=tuple(q.name for q in dataset.queries),
                            row_names=_row_names(request.options))


def _iter_descriptor_method(source: DescriptorFile, name: str, label: str, dataset: Dataset,
                            request: OpenRequest) -> Generator[Step, None, Method]:
    descriptors = yield from _iter_read_descriptors(source, label, dataset, request)
    ranking = yield from _iter_rank_descriptors(descriptors, dataset, request.k, label)
    return _descriptor_method(source, name, descriptors, ranking)


def _descriptor_method(source: DescriptorFile, name: str, descriptors: Descriptors,
                       ranking: Ranking) -> Method:
    by_position = descriptors.by_position is not None
    notes = (position_note(source.path, descriptors.by_position),) if by_position else ()
    return Method(name, source.path, "descriptors", ranking, notes=notes,
                  sha256=descriptors.sha256, dim=int(descriptors.dim),
                  matched_by_position=by_position)


def position_note(path: Path, layout: str | None) -> Sentence:
    """Return the sentence saying that the rows of the descriptor file ``path`` were matched
    to the dataset by position (``layout``: which order was assumed) and how to match them
    by name instead."""
    return Sentence(f"{Path(path).name}: its rows carry no image names, so they were matched "
                    f"to the dataset by position ({layout}); if the file is in another order "
                    "the numbers mean nothing. To match by name, give "
                    f"{option('row_names')} (one image name per row, in file order) or a "
                    "descriptor file with names")


def chance_notes(method: Method, evaluations: Sequence[Evaluation]) -> tuple[Sentence, ...]:
    """Return the sentence saying that ``method``'s result is at chance level, so its rows
    are probably in another order, when it is so under every evaluation
    (:func:`irviewer.core.chance.chance_level`); else nothing."""
    levels = [chance_level(ev) for ev in evaluations]
    if not levels or not all(level.at_chance for level in levels):
        return ()
    first, ev = levels[0], evaluations[0]
    also = "; likewise under every other protocol" if len(levels) > 1 else ""
    return (Sentence(f"{method.path.name}: the result is at chance level (finite-sum mAP "
                     f"{100 * first.observed:.2f} % under {ev.protocol.name}, where a random "
                     f"order gives {100 * first.chance:.2f} %{also}): the rows are probably "
                     "in another order than the dataset's"),)


def _iter_rank_descriptors(descriptors: Descriptors, dataset: Dataset, k: int,
                           label: str) -> Generator[Step, None, Ranking]:
    ranking: Ranking | None = None
    if dataset.format == TASKS:  # each query ranks its own pool (HPatches tasks)
        for done, total, result in iter_rank_tasks(dataset, descriptors, k):
            yield Step(f"ranking{label}", done, total)
            ranking = result or ranking
    else:
        for progress in iter_rank(align(descriptors, dataset), dataset, k=k):
            yield Step(f"ranking{label}", progress.done, progress.total)
            ranking = progress.ranking or ranking
    assert ranking is not None
    return ranking


