"""What to open: a dataset, its methods (descriptor files, precomputed rankings, re-ranked
versions) and the reader options, as one :class:`OpenRequest`; the methods' display names;
the built-in demo; the defaults a dataset opens with (a collection's descriptor file, the
corrections made on it in the window); and files dropped on the window sorted by role
(Qt-free). :mod:`irviewer.opening.opener` opens a request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from irviewer.core.ann.engine_spec import engine_labels
from irviewer.core.ann.spec import parse_ann_spec
from irviewer.core.errors import InputError
from irviewer.core.ranking import DEFAULT_DEPTH
from irviewer.formats.base import ReadOptions
from irviewer.formats.collection import descriptors_path as collection_descriptors
from irviewer.formats.collection import is_collection
from irviewer.formats.corrections_file import corrections_place
from irviewer.io.resources import resources_dir

#: The suffix of irviewer's session files.
SESSION_SUFFIX = ".irv"


#: How many results per query the viewer can show (``irviewer --results``): at most what a
#: ranking stores by default.
TOP_K_RANGE = (10, DEFAULT_DEPTH)
#: How many results per query the viewer shows unless told otherwise.
RESULTS_SHOWN = 50


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
    methods ``rerank`` gives it. ``ann`` holds approximate-search SPECs
    (:mod:`irviewer.core.ann.spec`): every descriptor file F gives, after its methods above,
    one method "F + SETTING" per setting of each SPEC; ``approximate`` holds (position in
    ``descriptors``, SPEC) pairs, that file alone searched by SPEC (the window's File ▸ Add
    an approximate index method, a session's approximate methods). ``engine`` (a Milvus URI) and
    ``collection`` name a vector engine's collection holding the gallery (image names in
    its primary key, or in the field ``engine_names``): the first descriptor file's queries
    searched there give the method "F + milvus:COLLECTION" (one per setting of the search
    parameters after the URI). ``ann_names`` names the image of each id of the ``ann``
    SPECs' index files (:mod:`irviewer.core.ann.index_ids`). ``keep_plain`` False leaves the
    plain methods of the descriptor files out (``irviewer eval --rerank`` scores the
    re-ranked ranking instead of the plain one)."""

    dataset: Path
    descriptors: tuple[Path, ...] = ()
    rankings: tuple[Path, ...] = ()
    format: str | None = None
    options: ReadOptions = field(default_factory=ReadOptions)
    k: int = DEFAULT_DEPTH
    protocol: str | None = None
    ap: str | None = None
    self_match: str | None = None
    corrections: Path | None = None
    rerank: tuple[str, ...] = ()
    reranked: tuple[tuple[int, str], ...] = ()
    ann: tuple[str, ...] = ()
    approximate: tuple[tuple[int, str], ...] = ()
    engine: str | None = None
    collection: str | None = None
    engine_names: str | None = None
    ann_names: Path | None = None
    keep_plain: bool = True

    def sources(self) -> tuple[Path, ...]:
        """Return every method's file: descriptor files first, then rankings."""
        return (*self.descriptors, *self.rankings)

    def reranked_pairs(self) -> tuple[tuple[int, str], ...]:
        """Return every re-ranked method as (position in ``descriptors``, SPEC), in the
        order the methods open: per file, the ``rerank`` SPECs, then its own ``reranked``
        ones (a SPEC once per file)."""
        return self._per_file(self.rerank, self.reranked)

    def approximate_pairs(self) -> tuple[tuple[int, str], ...]:
        """Return every approximate search as (position in ``descriptors``, SPEC), in the
        order the methods open: per file, the ``ann`` SPECs, then its own ``approximate``
        ones (a SPEC once per file)."""
        return self._per_file(self.ann, self.approximate)

    def _per_file(self, every: tuple[str, ...], own: tuple[tuple[int, str], ...]
                  ) -> tuple[tuple[int, str], ...]:
        out: list[tuple[int, str]] = []
        for i in range(len(self.descriptors)):
            specs = [*every, *(s for j, s in own if j == i)]
            out += [(i, s) for s in dict.fromkeys(specs)]
        return tuple(out)

    def derived(self) -> list[tuple[int, str, str]]:
        """Return every method derived from a file's plain method, in opening order, as
        (position in :meth:`sources`, what derives it: the re-ranking SPEC, the approximate
        search's setting label or the engine's "milvus:COLLECTION", the method's name
        "F + WHAT"). An approximate SPEC that does not parse derives nothing here (opening
        says why)."""
        names = method_names(self.sources())
        out = [(j, spec, reranked_name(names[j], spec)) for j, spec in self.reranked_pairs()]
        for j, spec in self.approximate_pairs():
            try:
                settings = parse_ann_spec(spec).settings()
            except InputError:
                continue
            out += [(j, s.label, reranked_name(names[j], s.label)) for s in settings]
        if self.engine and self.collection and self.descriptors:
            out += [(0, label, reranked_name(names[0], label))
                    for label in engine_labels(self.engine, self.collection)]
        return sorted(out, key=lambda d: d[0])  # stable: re-ranked, approximate, engine

    def with_methods(self, descriptors: Sequence[Path] = (),
                     rankings: Sequence[Path] = ()) -> OpenRequest:
        """Return this request with more method files: ``descriptors`` and ``rankings`` not
        already open are added after the open ones. Every other setting is kept (reader,
        protocol, conventions, corrections, depth), and so is every re-ranked method already
        asked for, each now named by its own file (``reranked``), and every approximate
        search (``approximate``): a re-ranking or search given for every file (``rerank``,
        ``ann``) is not extended to the added files, which open plain."""
        known = set(self.sources())
        more_d = tuple(dict.fromkeys(p for p in descriptors if p not in known))
        more_r = tuple(dict.fromkeys(p for p in rankings if p not in known))
        return replace(self, descriptors=(*self.descriptors, *more_d),
                       rankings=(*self.rankings, *more_r), rerank=(),
                       reranked=self.reranked_pairs(), ann=(),
                       approximate=self.approximate_pairs())

    def method_names(self) -> list[str]:
        """Return the name of every method the request opens, in opening order: each
        file's plain method (unless ``keep_plain`` is False and it is re-ranked), then its
        re-ranked, approximate and engine methods (:meth:`derived`)."""
        names = method_names(self.sources())
        derived = self.derived()
        reranked = {j for j, _ in self.reranked_pairs()}
        out = []
        for i, name in enumerate(names):
            if self.keep_plain or i not in reranked:
                out.append(name)
            out += [d for j, _, d in derived if j == i]
        return out

    def method_key(self, name: str | None) -> tuple[int, str | None] | None:
        """Return (position in :meth:`sources`, what derives the method from the file's
        plain one as :meth:`derived` says it, or None for the plain method) of the method
        called ``name``, or None when the request opens no such method."""
        names = method_names(self.sources())
        for j, what, derived in self.derived():
            if derived == name:
                return j, what
        return (names.index(name), None) if name in names else None

    def method_named(self, index: int, spec: str | None = None) -> str | None:
        """Return the name of source ``index``'s method (derived by ``spec`` as
        :meth:`derived` says it, when given), or None when the request opens no such method
        (the inverse of :meth:`method_key`)."""
        names = method_names(self.sources())
        if not 0 <= index < len(names):
            return None
        if spec is None:
            return names[index]
        return next((d for j, what, d in self.derived() if (j, what) == (index, spec)), None)

    def method_sources(self) -> tuple[MethodSource, ...]:
        """Return every method as a typed source, in :meth:`sources` order."""
        return (*(DescriptorFile(Path(p)) for p in self.descriptors),
                *(RankingFile(Path(p)) for p in self.rankings))


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


@dataclass(frozen=True)
class Dropped:
    """Files a user dropped on the window (or named on the command line), by role."""

    datasets: tuple[Path, ...] = ()
    descriptors: tuple[Path, ...] = ()
    rankings: tuple[Path, ...] = ()
    sessions: tuple[Path, ...] = ()
    images: tuple[Path, ...] = ()  # photos to search the gallery with


RANKING_SUFFIXES = (".results", ".run", ".trec")


def classify_paths(paths: list[Path] | tuple[Path, ...]) -> Dropped:
    """Return ``paths`` sorted by role: ``.irv`` session files; precomputed rankings (an
    archive with ``indices``, ``.results``, a TREC run); descriptor files (``.npz``,
    ``.npy``, ``.fvecs``, ``.mat``, ``.h5``, an hpatches-benchmark descriptor folder); image
    files (``.jpg``, ``.png``, ... :data:`irviewer.core.image_names.IMAGE_SUFFIXES`: photos to
    search the gallery with); and anything else as a dataset (a manifest, a gt_files
    folder, a pickle, ...)."""
    from irviewer.core.image_names import IMAGE_SUFFIXES
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
