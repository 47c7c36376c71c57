"""Opening a dataset with one or more methods, as one cancellable generator (Qt-free).

A *method* is what produced a ranking: a descriptor file (irviewer ranks by cosine
similarity) or a precomputed ranking (TREC run, ``.npz`` indices, HPatches ``.results``).
The GUI runs :func:`iter_open` in a worker thread and shows its progress; tests and
``--screenshot`` run it directly. It yields :class:`Step` values and ends with one carrying
the :class:`Opened` result: the dataset and, per method, its ranking and one evaluation per
protocol. Other conventions (AP rule, self-match) are re-scored on request from the same
ranking (:meth:`Opened.evaluation`), never re-ranked.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import align
from irviewer.core.errors import InputError
from irviewer.core.evaluation import Evaluation, evaluate
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import Ranking, iter_rank
from irviewer.formats.base import ReadOptions
from irviewer.formats.descriptor_files import descriptor_names, read_descriptors
from irviewer.formats.hpatches_tasks import NAME as TASKS
from irviewer.formats.hpatches_tasks import iter_rank_tasks
from irviewer.formats.registry import read_dataset
from irviewer.paths import resources_dir


@dataclass(frozen=True)
class OpenRequest:
    """What to open: a dataset, the descriptor files and/or precomputed rankings to inspect,
    the reader to use (None: detect it) and its options, and how deep to keep result lists."""

    dataset: Path
    descriptors: tuple[Path, ...] = ()
    rankings: tuple[Path, ...] = ()
    format: str | None = None
    options: ReadOptions = field(default_factory=ReadOptions)
    k: int = 200

    def sources(self) -> tuple[Path, ...]:
        """Return every method's file: descriptor files first, then rankings."""
        return (*self.descriptors, *self.rankings)


@dataclass(frozen=True)
class Method:
    """One ranking of the dataset and its evaluations under the dataset's protocols."""

    name: str
    path: Path
    kind: str  # "descriptors" or "ranking"
    ranking: Ranking
    evaluations: dict[str, Evaluation]


@dataclass
class Opened:
    """A dataset ready to inspect: per method, its ranking and one evaluation per protocol.

    ``methods`` keeps the request's order; the first is shown first. Evaluations under
    other conventions are computed on first use and cached (:meth:`evaluation`).
    """

    dataset: Dataset
    methods: dict[str, Method]
    request: OpenRequest
    _cache: dict[tuple[str, str, str | None, str | None], Evaluation] = field(
        default_factory=dict, repr=False)

    @property
    def first(self) -> Method:
        """Return the method opened first."""
        return next(iter(self.methods.values()))

    @property
    def ranking(self) -> Ranking:
        """Return the first method's ranking."""
        return self.first.ranking

    @property
    def evaluations(self) -> dict[str, Evaluation]:
        """Return the first method's evaluation per protocol."""
        return self.first.evaluations

    def evaluation(self, method: str, protocol: str, ap: str | None = None,
                   self_match: str | None = None) -> Evaluation:
        """Return ``method``'s evaluation under ``protocol`` with the AP rule and self-match
        rule overridden where given (None: the protocol's own); re-scored, not re-ranked."""
        m = self.methods[method]
        base = m.evaluations[protocol]
        if (ap in (None, base.protocol.ap)) and self_match in (None, base.protocol.self_match):
            return base
        key = (method, protocol, ap, self_match)
        if key not in self._cache:
            self._cache[key] = evaluate(self.dataset, m.ranking,
                                        base.protocol.override(ap=ap, self_match=self_match))
        return self._cache[key]


@dataclass(frozen=True)
class Step:
    """Progress of :func:`iter_open`: a stage name, done of total, and the result at the end."""

    stage: str
    done: int = 0
    total: int = 0
    opened: Opened | None = field(default=None)


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
        names = ["/".join(parts[i][-depth[i]:]) for i in range(len(paths))]
        clash = [i for i, n in enumerate(names) if names.count(n) > 1
                 and depth[i] < len(parts[i])]
        if not clash:
            seen: dict[str, int] = {}
            for i, n in enumerate(names):
                seen[n] = seen.get(n, 0) + 1
                if seen[n] > 1:
                    names[i] = f"{n} ({seen[n]})"
            return names
        for i in clash:
            depth[i] += 1


def iter_open(request: OpenRequest) -> Iterator[Step]:
    """Read, rank and evaluate every method of ``request``, yielding progress; the last step
    carries the result.

    Stop iterating (``close()``) to cancel between steps; ranking yields a step per block
    of queries, so a cancel is honoured within one block. InputError for bad input.
    """
    from irviewer.formats.rankings import read_ranking

    if not request.sources():
        raise InputError(f"{Path(request.dataset).name}: give a descriptor file or a "
                         "precomputed ranking to inspect it with")
    opts = request.options
    yield Step("reading the dataset")
    if opts.gallery_names is None and request.descriptors:
        opts = replace(opts, gallery_names=descriptor_names(request.descriptors[0]))
    dataset = read_dataset(Path(request.dataset), request.format, opts)
    names = method_names(request.sources())
    methods: dict[str, Method] = {}
    notes = list(dataset.notes)
    total = len(names)
    for i, (name, path) in enumerate(zip(names, request.sources(), strict=True)):
        label = f" ({name}, {i + 1} of {total})" if total > 1 else ""
        path = Path(path)
        if i < len(request.descriptors):
            yield Step(f"reading the descriptors{label}")
            descriptors = read_descriptors(path, gallery_names=dataset.gallery,
                                           query_names=tuple(q.name for q in dataset.queries))
            ranking = None
            if dataset.format == TASKS:  # each query ranks its own pool (HPatches tasks)
                for done, total, result in iter_rank_tasks(dataset, descriptors, request.k):
                    yield Step(f"ranking{label}", done, total)
                    ranking = result or ranking
            else:
                for progress in iter_rank(align(descriptors, dataset), dataset, k=request.k):
                    yield Step(f"ranking{label}", progress.done, progress.total)
                    ranking = progress.ranking or ranking
            assert ranking is not None
            kind = "descriptors"
        else:
            yield Step(f"reading the ranking{label}")
            ranking, more = read_ranking(path, dataset)
            notes += [f"{name}: {n}" for n in more]
            kind = "ranking"
        yield Step(f"scoring{label}")
        evaluations = {p: evaluate(dataset, ranking, get_protocol(p))
                       for p in dataset.protocols}
        methods[name] = Method(name, path, kind, ranking, evaluations)
    if len(notes) != len(dataset.notes):
        dataset = replace(dataset, notes=tuple(notes))
        methods = {n: replace(m, evaluations={p: replace(e, dataset=dataset)
                                              for p, e in m.evaluations.items()})
                   for n, m in methods.items()}
    yield Step("done", 1, 1, Opened(dataset, methods, request))


def open_now(request: OpenRequest) -> Opened:
    """Return :func:`iter_open`'s result without progress (scripts, tests)."""
    last = None
    for step in iter_open(request):
        last = step
    assert last is not None and last.opened is not None
    return last.opened


@dataclass(frozen=True)
class Dropped:
    """Files a user dropped on the window (or named on the command line), by role."""

    datasets: tuple[Path, ...] = ()
    descriptors: tuple[Path, ...] = ()
    rankings: tuple[Path, ...] = ()
    sessions: tuple[Path, ...] = ()


SESSION_SUFFIX = ".irv"
RANKING_SUFFIXES = (".results", ".run", ".trec")


def classify_paths(paths: list[Path] | tuple[Path, ...]) -> Dropped:
    """Return ``paths`` sorted by role: ``.irv`` session files; precomputed rankings (an
    archive with ``indices``, ``.results``, a TREC run); descriptor files (``.npz``,
    ``.npy``, ``.fvecs``, ``.mat``, ``.h5``, an hpatches-benchmark descriptor folder); and
    anything else as a dataset (a manifest, a gt_files folder, a pickle, ...)."""
    from irviewer.formats.descriptor_files import SUFFIXES
    from irviewer.formats.hpatches import is_descriptor_folder
    from irviewer.formats.rankings import sniff_ranking

    roles: dict[str, list[Path]] = {"datasets": [], "descriptors": [], "rankings": [],
                                    "sessions": []}
    for raw in paths:
        p = Path(raw)
        suffix = p.suffix.lower()
        if suffix == SESSION_SUFFIX:
            roles["sessions"].append(p)
        elif suffix in RANKING_SUFFIXES or (p.is_file() and sniff_ranking(p)):
            roles["rankings"].append(p)
        elif (suffix in SUFFIXES and p.is_file()) or (p.is_dir() and is_descriptor_folder(p)):
            roles["descriptors"].append(p)
        else:
            roles["datasets"].append(p)
    return Dropped(**{k: tuple(v) for k, v in roles.items()})
