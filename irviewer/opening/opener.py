"""Opening a dataset with one or more methods: the one opening path of every command and of
the window (Qt-free).

A *method* is what produced a ranking: a descriptor file (irviewer ranks by cosine
similarity, or HPatches task lists by their own pools) or a precomputed ranking (TREC run,
``.npz`` indices, HPatches ``.results``). :func:`iter_open` is a generator: it yields
:class:`Step` progress values and *returns* the :class:`Opened` result, so a caller that
wants progress writes ``opened = yield from iter_open(request)`` (or iterates and takes
``StopIteration.value``); :func:`open_now` returns it directly. The window runs it in a
worker thread; ``irviewer eval`` runs :func:`open_now`.

:class:`Opened` holds one shared :class:`Dataset` and every evaluation, computed once per
(method, protocol, AP rule, self-match rule) and kept in one cache; other conventions are
re-scored from the same ranking on request, never re-ranked, and a change of ground truth
(:meth:`Opened.update_ground_truth`) re-scores only the queries it touches.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from irviewer.core.chance import chance_level
from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import (
    AlignedDescriptors,
    Descriptors,
    align,
    file_sha256,
    prefetch_sha256,
)
from irviewer.core.errors import InputError, Sentence
from irviewer.core.evaluation import Evaluation, evaluate
from irviewer.core.progress import result_of
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import Ranking, iter_rank
from irviewer.core.rerank import Chain, iter_rerank, parse_spec
from irviewer.core.rerank.spec import WHERE
from irviewer.core.resources import resources_dir
from irviewer.formats.base import ReadOptions, option, read_name_list
from irviewer.formats.collection import descriptors_path as collection_descriptors
from irviewer.formats.collection import is_collection
from irviewer.formats.corrections_file import (
    LoadedCorrections,
    corrections_place,
    load_corrections,
)
from irviewer.formats.descriptor_files import descriptor_names, read_descriptors
from irviewer.formats.hpatches_tasks import NAME as TASKS
from irviewer.formats.hpatches_tasks import iter_rank_tasks
from irviewer.formats.registry import read_dataset

#: The suffix of irviewer's session files.
SESSION_SUFFIX = ".irv"
#: How many results per query the viewer can show (``irviewer --results``).
TOP_K_RANGE = (10, 200)


@dataclass(frozen=True)
class DescriptorFile:
    """A method given as a descriptor file (or hpatches-benchmark descriptor folder)."""

    path: Path


@dataclass(frozen=True)
class RankingFile:
    """A method given as precomputed result lists (TREC run, ``.npz`` indices, ``.results``)."""

    path: Path


MethodSource = DescriptorFile | RankingFile


@dataclass(frozen=True)
class OpenRequest:
    """What to open: a dataset, the descriptor files and/or precomputed rankings to inspect,
    the reader to use (None: detect it) and its options, how deep to keep result lists, and
    optionally the protocol and conventions to score with first (None: the dataset's
    protocols, each with its own AP and self-match rules), and the corrections file to
    apply to the published ground truth (None: none; the window fills in the dataset's
    default sidecar with :func:`with_default_corrections`, the CLI only applies a file it is
    given, so a published number never changes silently).

    ``rerank`` holds re-ranking SPECs (:mod:`irviewer.core.rerank`): every descriptor file F
    gives, after its plain method, one more method "F + SPEC" per SPEC. ``reranked`` holds
    (position in ``descriptors``, SPEC) pairs: that file alone re-ranked by SPEC (the
    window's File ▸ Add a re-ranked method, a session's re-ranked methods), after the
    methods ``rerank`` gives it. ``keep_plain`` False leaves the plain methods of the
    descriptor files out (``irviewer eval --rerank`` scores the re-ranked ranking instead of
    the plain one)."""

    dataset: Path
    descriptors: tuple[Path, ...] = ()
    rankings: tuple[Path, ...] = ()
    format: str | None = None
    options: ReadOptions = field(default_factory=ReadOptions)
    k: int = 200
    protocol: str | None = None
    ap: str | None = None
    self_match: str | None = None
    corrections: Path | None = None
    rerank: tuple[str, ...] = ()
    reranked: tuple[tuple[int, str], ...] = ()
    keep_plain: bool = True

    def sources(self) -> tuple[Path, ...]:
        """Return every method's file: descriptor files first, then rankings."""
        return (*self.descriptors, *self.rankings)

    def reranked_pairs(self) -> tuple[tuple[int, str], ...]:
        """Return every re-ranked method as (position in ``descriptors``, SPEC), in the
        order the methods open: per file, the ``rerank`` SPECs, then its own ``reranked``
        ones (a SPEC once per file)."""
        out: list[tuple[int, str]] = []
        for i in range(len(self.descriptors)):
            specs = [*self.rerank, *(s for j, s in self.reranked if j == i)]
            out += [(i, s) for s in dict.fromkeys(specs)]
        return tuple(out)

    def with_methods(self, descriptors: Sequence[Path] = (),
                     rankings: Sequence[Path] = ()) -> OpenRequest:
        """Return this request with more method files: ``descriptors`` and ``rankings`` not
        already open are added after the open ones. Every other setting is kept (reader,
        protocol, conventions, corrections, depth), and so is every re-ranked method already
        asked for, each now named by its own file (``reranked``): a re-ranking given for
        every file (``rerank``) is not extended to the added files, which open plain."""
        known = set(self.sources())
        more_d = tuple(dict.fromkeys(p for p in descriptors if p not in known))
        more_r = tuple(dict.fromkeys(p for p in rankings if p not in known))
        return replace(self, descriptors=(*self.descriptors, *more_d),
                       rankings=(*self.rankings, *more_r), rerank=(),
                       reranked=self.reranked_pairs())

    def method_names(self) -> list[str]:
        """Return the name of every method the request opens, in opening order: each
        file's plain method (unless ``keep_plain`` is False), then its re-ranked ones."""
        names = method_names(self.sources())
        pairs = self.reranked_pairs()
        out = []
        for i, name in enumerate(names):
            mine = [reranked_name(name, s) for j, s in pairs if j == i]
            if self.keep_plain or not mine:
                out.append(name)
            out += mine
        return out

    def method_key(self, name: str | None) -> tuple[int, str | None] | None:
        """Return (position in :meth:`sources`, SPEC or None for the plain method) of the
        method called ``name``, or None when the request opens no such method."""
        names = method_names(self.sources())
        for j, spec in self.reranked_pairs():
            if reranked_name(names[j], spec) == name:
                return j, spec
        return (names.index(name), None) if name in names else None

    def method_named(self, index: int, spec: str | None = None) -> str | None:
        """Return the name of source ``index``'s method (re-ranked by ``spec`` when given),
        or None when the request opens no such method (the inverse of :meth:`method_key`)."""
        names = method_names(self.sources())
        if not 0 <= index < len(names):
            return None
        if spec is None:
            return names[index]
        return reranked_name(names[index], spec) if (index, spec) in self.reranked_pairs() \
            else None

    def method_sources(self) -> tuple[MethodSource, ...]:
        """Return every method as a typed source, in :meth:`sources` order."""
        return (*(DescriptorFile(Path(p)) for p in self.descriptors),
                *(RankingFile(Path(p)) for p in self.rankings))


@dataclass(frozen=True)
class Method:
    """One ranking of the dataset, with what a report needs to identify it.

    ``kind`` is ``"descriptors"`` or ``"ranking"``; ``sha256`` the hash of the file's bytes;
    ``dim`` the descriptor dimension (None for a ranking); ``notes`` sentences about this
    method for the user, each naming its file (a ranking's skipped lists; rows matched by
    position and, where the result is at chance level, that they are probably in another
    order), as :class:`~irviewer.core.errors.Sentence` where they name an option.
    ``matched_by_position`` is True when descriptor rows without names were matched to the
    dataset by their order; :attr:`position_note` is then the sentence that says so (the
    window's banner). ``rerank`` is the re-ranking chain of a method "F + SPEC" (None for
    a plain one). ``evaluations`` maps each scored protocol to its evaluation under the
    protocol's own conventions: a view of :class:`Opened`'s one cache.
    """

    name: str
    path: Path
    kind: str
    ranking: Ranking
    notes: tuple[str, ...] = ()
    sha256: str = ""
    dim: int | None = None
    matched_by_position: bool = False
    rerank: Chain | None = None
    evaluations: Mapping[str, Evaluation] = field(default_factory=dict, compare=False,
                                                  repr=False)

    @property
    def position_note(self) -> str | None:
        """Return the sentence saying that rows were matched by position (None when they
        were matched by name)."""
        return self.notes[0] if self.matched_by_position else None


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
    """

    dataset: Dataset
    methods: dict[str, Method]
    request: OpenRequest
    _evaluations: dict[EvaluationKey, Evaluation] = field(default_factory=dict, repr=False)
    corrections: LoadedCorrections | None = None

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


@dataclass(frozen=True)
class Step:
    """Progress of :func:`iter_open`: a stage name and done of total (0 of 0: no count)."""

    stage: str
    done: int = 0
    total: int = 0


#: What :func:`iter_open` and its helpers are: progress steps, then a returned result.
Opening = Generator[Step, None, Opened]


def demo_paths() -> tuple[Path, Path]:
    """Return the built-in demo's manifest and strong descriptor file."""
    demo = resources_dir() / "demo"
    return demo / "demo.csv", demo / "strong.npz"


def demo_request() -> OpenRequest:
    """Return the request that opens the built-in demo with both descriptor files."""
    manifest, strong = demo_paths()
    return OpenRequest(manifest, (strong, strong.parent / "weak.npz"))


def method_names(paths: tuple[Path, ...]) -> list[str]:
    """Return a short, unique display name per method file: its file name, with as many
    parent folders as needed to tell two equal file names apart (" (2)", " (3)"... for the
    same path given twice)."""
    parts = [Path(p).parts for p in paths]
    depth = {i: 1 for i in range(len(paths))}
    while True:
        names = [Path(*parts[i][-depth[i]:]).as_posix() for i in range(len(paths))]
        clash = [i for i, n in enumerate(names) if depth[i] < len(parts[i]) and any(
            names[j] == n and parts[j] != parts[i] for j in range(len(paths)))]
        if not clash:
            seen: dict[str, int] = {}
            for i, n in enumerate(names):
                seen[n] = seen.get(n, 0) + 1
                if seen[n] > 1:
                    names[i] = f"{n} ({seen[n]})"
            return names
        for i in clash:
            depth[i] += 1


def reranked_name(name: str, spec: str) -> str:
    """Return the name of the method ``name`` re-ranked by ``spec`` ("F + SPEC")."""
    return f"{name} + {spec}"


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
    pairs = request.reranked_pairs()
    yield Step("reading the dataset")
    dataset, corrections = open_ground_truth(request)
    names = method_names(request.sources())
    n_methods = len(names)
    methods: dict[str, Method] = {}
    scored: dict[EvaluationKey, Evaluation] = {}
    for i, (name, source) in enumerate(zip(names, sources, strict=True)):
        label = f" ({name}, {i + 1} of {n_methods})" if n_methods > 1 else ""
        own = tuple(chains[spec] for j, spec in pairs if j == i)
        found = yield from iter_methods(source, name, label, dataset, request, own)
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
    return Opened(dataset, methods, request, scored, corrections)


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
    steps = iter_rerank(chain, aligned, dataset, k, plain)
    while True:
        try:
            stage, done, total = next(steps)
        except StopIteration as finished:
            return finished.value
        yield Step(f"{prefix}{stage}{suffix}", done, total)


def open_ground_truth(request: OpenRequest) -> tuple[Dataset, LoadedCorrections | None]:
    """Return the request's dataset with its corrections file applied (the published one
    when it names none), and the applied corrections (None when none): the ground-truth half
    of :func:`iter_open`, for commands that need no ranking (``apply-corrections``)."""
    dataset = _read_dataset(request)
    if request.corrections is None:
        return dataset, None
    corrections = load_corrections(Path(request.corrections), dataset)
    return corrections.log.dataset, corrections


def default_methods(dataset: Path | str) -> tuple[Path, ...]:
    """Return the descriptor files a dataset opens with when no method is named: a
    collection's own (``irviewer index`` made it; :mod:`irviewer.formats.collection`),
    nothing for any other dataset. The one rule by which every command and the window open
    a collection without a descriptor file."""
    if is_collection(Path(dataset)):
        return (collection_descriptors(Path(dataset)),)
    return ()


def with_default_method(request: OpenRequest) -> OpenRequest:
    """Return ``request`` with the dataset's default method (:func:`default_methods`) when
    it names none; unchanged otherwise."""
    if request.sources():
        return request
    defaults = default_methods(request.dataset)
    return replace(request, descriptors=defaults) if defaults else request


def with_default_corrections(request: OpenRequest) -> OpenRequest:
    """Return ``request`` with the dataset's own corrections file when it names none and one
    exists (``<dataset>.corrections.csv`` beside it, or the one the user's data folder keeps
    for a dataset whose folder cannot be written: :func:`corrections_place`), as the window
    opens a dataset with the corrections made on it before."""
    if request.corrections is not None:
        return request
    existing = corrections_place(Path(request.dataset)).existing
    return replace(request, corrections=existing) if existing is not None else request


def unapplied_corrections(request: OpenRequest) -> Path | None:
    """Return the dataset's own corrections file (made in the window) when it exists and the
    request applies another file or none (the command line applies only the file it is
    given, and says where the window's are)."""
    existing = corrections_place(Path(request.dataset)).existing
    if existing is None or (request.corrections is not None
                            and Path(request.corrections).resolve() == existing.resolve()):
        return None
    return existing


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


@dataclass(frozen=True)
class Dropped:
    """Files a user dropped on the window (or named on the command line), by role."""

    datasets: tuple[Path, ...] = ()
    descriptors: tuple[Path, ...] = ()
    rankings: tuple[Path, ...] = ()
    sessions: tuple[Path, ...] = ()
    images: tuple[Path, ...] = ()  # photos to search the gallery with (issue #13)


RANKING_SUFFIXES = (".results", ".run", ".trec")


def classify_paths(paths: list[Path] | tuple[Path, ...]) -> Dropped:
    """Return ``paths`` sorted by role: ``.irv`` session files; precomputed rankings (an
    archive with ``indices``, ``.results``, a TREC run); descriptor files (``.npz``,
    ``.npy``, ``.fvecs``, ``.mat``, ``.h5``, an hpatches-benchmark descriptor folder); image
    files (``.jpg``, ``.png``, ... :data:`irviewer.core.descriptors.IMAGE_SUFFIXES`: photos to
    search the gallery with); and anything else as a dataset (a manifest, a gt_files
    folder, a pickle, ...)."""
    from irviewer.core.descriptors import IMAGE_SUFFIXES
    from irviewer.formats.descriptor_files import SUFFIXES
    from irviewer.formats.hpatches import is_descriptor_folder
    from irviewer.formats.rankings import sniff_ranking

    roles: dict[str, list[Path]] = {"datasets": [], "descriptors": [], "rankings": [],
                                    "sessions": [], "images": []}
    for raw in paths:
        p = Path(raw)
        suffix = p.suffix.lower()
        if suffix == SESSION_SUFFIX:
            roles["sessions"].append(p)
        elif suffix in RANKING_SUFFIXES or (p.is_file() and sniff_ranking(p)):
            roles["rankings"].append(p)
        elif (suffix in SUFFIXES and p.is_file()) or (p.is_dir() and is_descriptor_folder(p)):
            roles["descriptors"].append(p)
        elif suffix in IMAGE_SUFFIXES and not p.is_dir():
            roles["images"].append(p)
        else:
            roles["datasets"].append(p)
    return Dropped(**{k: tuple(v) for k, v in roles.items()})
