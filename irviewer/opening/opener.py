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
(method, protocol, AP rule, self-match rule, depth) and kept in one cache; other conventions
are re-scored from the same ranking on request, never re-ranked, and a change of ground
truth (:meth:`Opened.update_ground_truth`) re-scores only the queries it touches. Two
methods are compared by one rule (:meth:`Opened.paired`): at their common depth when either
stops at its lists. The methods themselves, every kind, are made by one pipeline
(:mod:`irviewer.methods.making`) from the request's plan (:meth:`OpenRequest.plan`).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from irviewer.core.ann.engine_spec import ENGINE_WHERE, without_credentials
from irviewer.core.ann.index_ids import NAMES_WHERE as ID_NAMES_WHERE
from irviewer.core.ann.search import COLLECTION_WHERE
from irviewer.core.ann.spec import WHERE as ANN_WHERE
from irviewer.core.ann.spec import parse_ann_spec
from irviewer.core.chance import chance_level
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError, Sentence
from irviewer.core.evaluation import Evaluation, evaluate
from irviewer.core.file_digests import prefetch_sha256
from irviewer.core.progress import result_of
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import Ranking, common_depth, cut_at
from irviewer.core.rerank.spec import WHERE
from irviewer.formats.base import ReadOptions, read_name_list
from irviewer.formats.corrections_file import (
    LoadedCorrections,
    load_corrections,
)
from irviewer.formats.descriptor_files import descriptor_names
from irviewer.formats.registry import read_dataset
from irviewer.methods.making import iter_make
from irviewer.methods.method import Method, Step
from irviewer.methods.spec import Approximate, Engine, MethodSpec, Reranked
from irviewer.opening.request import OpenRequest, with_default_method


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


#: An evaluation's cache key: (method, protocol, AP rule, self-match rule, depth), rules
#: resolved; depth None: the method's own lists (a depth: its first results only).
EvaluationKey = tuple[str, str, str, str, "int | None"]


@dataclass(frozen=True)
class Paired:
    """Two methods scored for a comparison under one protocol and conventions: ``base`` and
    ``other`` at one ``depth`` (None: both whole, every positive at its exact rank; a depth
    K: both on their first K results, a positive past K missed, every positive in AP's
    denominator: :mod:`irviewer.core.ranking.cut`), and each method's own evaluation
    (``base_own``, ``other_own``: its lists as made, the numbers eval reports for it)."""

    base: Evaluation
    other: Evaluation
    depth: int | None
    base_own: Evaluation
    other_own: Evaluation


@dataclass
class Opened:
    """A dataset ready to inspect: one shared dataset and, per method, its ranking; every
    evaluation in one cache (:meth:`evaluation`).

    ``methods`` keeps the request's plan order (:meth:`OpenRequest.plan`); the first is
    shown first. ``protocols`` are the protocols scored (the request's, else the dataset's).
    ``corrections`` is the corrections file applied when opening (None when none was): its
    log's ``published`` dataset is the ground truth as read, ``dataset`` starts as the
    corrected one. ``not_reopened`` says, one sentence each, which methods the request
    recorded could not be made again (an approximate method whose index file is gone); the
    request keeps them.
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

    def reported(self) -> list[Method]:
        """Return the methods a report scores: the derived ones when the request asks every
        file for a derivation (``--rerank``, ``--ann``, ``--engine``: one per file and
        setting), otherwise the plain ones; each derived one is reported with its plain
        method beside it (:meth:`paired`)."""
        if self.request.derives:
            derived = [m for m in self.methods.values() if m.made.derivation is not None]
            if derived:
                return derived
        return [m for m in self.methods.values() if m.made.derivation is None]

    def evaluation(self, method: str, protocol: str, ap: str | None = None,
                   self_match: str | None = None, depth: int | None = None) -> Evaluation:
        """Return ``method``'s evaluation under ``protocol`` with the AP rule and self-match
        rule overridden where given (None: the protocol's own), on its first ``depth``
        results when given (:func:`irviewer.core.ranking.cut_at`; None: its lists as made);
        computed once, from the method's ranking (re-scored, never re-ranked)."""
        m = self.methods[method]
        chosen = get_protocol(protocol).override(ap=ap, self_match=self_match)
        if depth is not None and m.ranking.truncated and m.ranking.k <= depth:
            depth = None  # its lists stop there already
        key = (method, protocol, chosen.ap, chosen.self_match, depth)
        found = self._evaluations.get(key)
        if found is None:
            ranking = m.ranking if depth is None else cut_at(m.ranking, self.dataset, depth)
            found = self._evaluations[key] = evaluate(self.dataset, ranking, chosen)
        return found

    def paired(self, base: str, other: str, protocol: str, ap: str | None = None,
               self_match: str | None = None) -> Paired:
        """Return ``base`` and ``other`` scored for comparison under ``protocol``: at their
        common depth when either stops at its lists (:func:`irviewer.core.ranking.
        common_depth`), else whole. The one rule of compare, the window's compare mode, an
        approximate search's ΔAP and the sweep."""
        depth = common_depth(self.methods[base].ranking, self.methods[other].ranking)
        own = (self.evaluation(base, protocol, ap, self_match),
               self.evaluation(other, protocol, ap, self_match))
        return Paired(self.evaluation(base, protocol, ap, self_match, depth),
                      self.evaluation(other, protocol, ap, self_match, depth), depth, *own)

    def base_of(self, method: str) -> Method | None:
        """Return the method ``method`` is derived from and compared with (its file's plain
        method), or None for a plain method or one with no plain method beside it (a
        descriptor file holding the queries only, searched in a vector engine)."""
        base = self.methods[method].base
        return None if base is None else self.methods.get(base)

    def related(self, method: str) -> list[str]:
        """Return the other methods of ``method``'s file, in the Method list's order: its
        plain method and every method derived from it."""
        position = self.methods[method].made.source.position
        return [n for n, m in self.methods.items()
                if n != method and m.made.source.position == position]

    def add(self, methods: Sequence[Method]) -> None:
        """Add ``methods`` (derived from methods already open: the window's File ▸ Add a
        re-ranked / approximate index / engine method) right after their file's methods,
        and record what derives them in :attr:`request` (``reranked``, ``approximate``,
        ``engines``), so that a session reopens them."""
        request = self.request
        for m in methods:
            spec = m.made
            d, i = spec.derivation, spec.source.position
            if isinstance(d, Reranked) and (i, d.spec) not in request.reranked_pairs():
                request = replace(request, reranked=(*request.reranked, (i, d.spec)))
            elif isinstance(d, Approximate):
                text = d.spec
                parsed = parse_ann_spec(text)
                if parsed.is_file:
                    text = replace(parsed, index=str(Path(parsed.index).resolve())).text
                if (i, text) not in request.approximate_pairs() \
                        and (i, d.spec) not in request.approximate_pairs():
                    request = replace(request, approximate=(*request.approximate, (i, text)))
            elif isinstance(d, Engine):
                ref = (d.written, d.collection, d.names_field)
                if (i, ref) not in request.engine_pairs():
                    request = replace(request, engines=(*request.engines, (i, ref)))
        self.request = request
        found = {**self.methods, **{m.name: replace(m, evaluations=MethodEvaluations(
            self, m.name)) for m in methods}}
        order: list[str] = []
        for m in found.values():  # each file's methods together, in the order they came
            if m.name in order:
                continue
            position = m.made.source.position
            order += [n for n, o in found.items() if o.made.source.position == position
                      and n not in order]
        self.methods = {n: found[n] for n in order}

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
    """Read, rank and evaluate every method of ``request`` (:meth:`OpenRequest.plan`,
    made by :func:`irviewer.methods.making.iter_make`), yielding :class:`Step` progress;
    return the :class:`Opened` result (``opened = yield from iter_open(request)``).

    Stop iterating (``close()``) to cancel between steps; ranking yields a step per block
    of queries, so a cancel is honoured within one block. A request that names no method
    takes the dataset's default (:func:`with_default_method`: a collection's descriptor
    file). InputError for bad input.
    """
    request = with_default_method(request)
    specs = check_plan(request)
    for path in request.sources():  # each file's hash, for the report, on another core
        if request.held_at(path) is None:
            prefetch_sha256(Path(path))
    yield Step("reading the dataset")
    dataset, corrections = open_ground_truth(request)
    not_reopened: list[str] = []
    made = yield from iter_make(specs, dataset, _row_names(request.options), not_reopened,
                                request.options.copy_pairs)
    methods: dict[str, Method] = {}
    scored: dict[EvaluationKey, Evaluation] = {}
    files = list(dict.fromkeys(m.made.source.position for m in made))
    for method in made:
        yield Step(f"scoring{file_label(method, files)}")
        mine = []
        for p in dataset.protocols:
            chosen = get_protocol(p).override(ap=request.ap, self_match=request.self_match)
            ev = evaluate(dataset, method.ranking, chosen)
            scored[(method.name, p, chosen.ap, chosen.self_match, None)] = ev
            mine.append(ev)
        if method.matched_by_position:
            method = replace(method, notes=(*method.notes, *chance_notes(method, mine)))
        methods[method.name] = method
    return Opened(dataset, methods, request, scored, corrections, tuple(not_reopened))


def file_label(method: Method, files: list[int]) -> str:
    """Return how a progress stage names ``method``'s file among ``files`` (positions):
    " (F, i of n)", or nothing for one file; as :func:`irviewer.methods.making.iter_make`
    names them."""
    if len(files) < 2:
        return ""
    at = files.index(method.made.source.position)
    plain = method.base or method.name
    return f" ({plain}, {at + 1} of {len(files)})"


def check_plan(request: OpenRequest) -> tuple[MethodSpec, ...]:
    """Return ``request``'s plan (:meth:`OpenRequest.plan`), checked before anything is read:
    InputError (one sentence) for no method at all, a SPEC that does not parse, a
    derivation asked for every file when no descriptor file is given (precomputed rankings
    carry no vectors), a recorded derivation naming no descriptor file, or a names file of
    index ids (``ann_names``) without an index file to read them for."""
    if not request.sources():
        raise InputError(f"{Path(request.dataset).name}: give a descriptor file or a "
                         "precomputed ranking to inspect it with")
    if (request.rerank or request.ann) and not request.descriptors:
        files = ", ".join(Path(p).name for p in request.rankings) or Path(request.dataset).name
        where, verb = (WHERE, "re-ranks") if request.rerank else (ANN_WHERE, "searches")
        raise InputError(f"{files}: {where} {verb} the vectors of a descriptor file, and a "
                         "precomputed ranking (TREC run, .npz indices, .results) has none; "
                         "give the descriptor file instead")
    if request.engine and not request.collection:
        raise InputError(f"{ENGINE_WHERE} {without_credentials(request.engine)}: name the "
                         f"collection holding the gallery ({COLLECTION_WHERE})")
    if request.ann_names is not None and not any(
            parse_ann_spec(t).is_file for _, t in request.approximate_pairs()):
        raise InputError(f"{ID_NAMES_WHERE}: names the images of an index file's ids, and no "
                         f"{ANN_WHERE} SPEC is an index file (a factory string is built in the "
                         "dataset's order)")
    n = len(request.descriptors)
    for pairs, where, verb in ((request.reranked, WHERE, "re-rank"),
                               (request.approximate, ANN_WHERE, "search")):
        for i, spec in pairs:
            if not 0 <= i < n:
                raise InputError(f"{where} {spec}: there is no descriptor file {i + 1} to "
                                 f"{verb} ({n} given)")
    for i, (_uri, collection, _names) in request.engines:
        if not 0 <= i < n:
            raise InputError(f"engine {collection}: there is no descriptor file {i + 1} to "
                             f"search ({n} given)")
    return request.plan()


def open_ground_truth(request: OpenRequest) -> tuple[Dataset, LoadedCorrections | None]:
    """Return the request's dataset with its corrections file applied (the published one
    when it names none), and the applied corrections (None when none): the ground-truth half
    of :func:`iter_open`, for commands that need no ranking (``apply-corrections``)."""
    dataset = read_request_dataset(request)
    if request.corrections is None:
        return dataset, None
    corrections = load_corrections(Path(request.corrections), dataset)
    return corrections.log.dataset, corrections


def open_now(request: OpenRequest) -> Opened:
    """Return :func:`iter_open`'s result without progress (scripts, tests, ``eval``)."""
    return result_of(iter_open(request))


def read_request_dataset(request: OpenRequest) -> Dataset:
    """Return the request's dataset (the one held in memory, else read); a gallery it does
    not list comes from the row-name list or the first descriptor file's names;
    ``request.protocol`` replaces its protocols."""
    opts = request.options
    if request.held_dataset is not None:
        dataset = request.held_dataset
    else:
        if opts.gallery_names is None:
            names = _row_names(opts)
            if names is None and request.descriptors:
                first = request.descriptors[0]
                held = request.held_at(first)
                names = held.names if held is not None else descriptor_names(first)
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
