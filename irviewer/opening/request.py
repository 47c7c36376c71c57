"""What to open: a dataset, its methods (descriptor files, precomputed rankings, and the
methods derived from them) and the reader options, as one :class:`OpenRequest`; its plan
(every method as a :class:`~irviewer.methods.spec.MethodSpec`, with its unique name);
the built-in demo; the defaults a dataset opens with (a collection's descriptor file, the
corrections made on it in the window); and files dropped on the window sorted by role
(Qt-free). :mod:`irviewer.opening.opener` opens a request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from irviewer.core.ann.engine_spec import parse_engine_spec
from irviewer.core.ann.spec import parse_ann_spec
from irviewer.core.ranking import DEFAULT_DEPTH
from irviewer.core.rerank import parse_spec
from irviewer.formats.base import ReadOptions
from irviewer.formats.collection import descriptors_path as collection_descriptors
from irviewer.formats.collection import is_collection
from irviewer.formats.corrections_file import corrections_place
from irviewer.io.resources import resources_dir
from irviewer.methods.spec import (
    DESCRIPTORS,
    RANKING,
    Approximate,
    Derivation,
    Engine,
    MethodSpec,
    Reranked,
    Source,
    derived_name,
    file_names,
)

#: The suffix of irviewer's session files.
SESSION_SUFFIX = ".irv"


#: How many results per query the viewer can show (``irviewer --results``): at most what a
#: ranking stores by default.
TOP_K_RANGE = (10, DEFAULT_DEPTH)
#: How many results per query the viewer shows unless told otherwise.
RESULTS_SHOWN = 50


#: A vector engine's collection: (URI, collection, the field holding image names or None).
EngineRef = tuple[str, str, "str | None"]

T = TypeVar("T")


@dataclass(frozen=True)
class OpenRequest:
    """What to open: a dataset, the descriptor files and/or precomputed rankings to inspect,
    the reader to use (None: detect it) and its options, how deep to keep result lists, and
    optionally the protocol and conventions to score with first (None: the dataset's
    protocols, each with its own AP and self-match rules), and the corrections file to
    apply to the published ground truth (None: none; the window fills in the dataset's
    default corrections file, the CLI only applies a file it is
    given, so a published number never changes silently).

    The methods it opens are :meth:`plan`'s, one :class:`~irviewer.methods.spec.MethodSpec`
    each: every file's plain method, then the methods derived from it. ``rerank`` holds
    re-ranking SPECs (:mod:`irviewer.core.rerank`): every descriptor file F gives one more
    method "F + SPEC" per SPEC. ``reranked`` holds (position in ``descriptors``, SPEC)
    pairs: that file alone re-ranked by SPEC (the window's File ▸ Add a re-ranked method, a
    session's re-ranked methods), after the methods ``rerank`` gives it. ``ann`` holds
    approximate-search SPECs (:mod:`irviewer.core.ann.spec`): every descriptor file F gives
    one method "F + SETTING" per setting of each SPEC; ``approximate`` holds (position in
    ``descriptors``, SPEC) pairs, that file alone searched by SPEC (the window's File ▸ Add
    an approximate index method, a session's approximate methods). ``engine`` (a Milvus
    URI, search parameters after it) and ``collection`` name a vector engine's collection
    holding the gallery (image names in its primary key, or in the field ``engine_names``):
    every descriptor file's queries searched there give the method "F + milvus:COLLECTION"
    (one per setting of the search parameters, "F + milvus:COLLECTION:nprobe=8");
    ``engines`` holds (position in ``descriptors``, (URI, collection, names field)) pairs,
    that file alone searched there (the window's File ▸ Add an engine method).
    ``ann_names`` names the image of each id of the index files searched (``ann`` or
    ``approximate``; :mod:`irviewer.core.ann.index_ids`): one names file for them all, which
    a session keeps."""

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
    engines: tuple[tuple[int, EngineRef], ...] = ()
    ann_names: Path | None = None

    def sources(self) -> tuple[Path, ...]:
        """Return every method's file: descriptor files first, then rankings."""
        return (*self.descriptors, *self.rankings)

    def reranked_pairs(self) -> tuple[tuple[int, str], ...]:
        """Return every re-ranked method as (position in ``descriptors``, SPEC), in the
        order the methods open: per file, the ``rerank`` SPECs, then its own ``reranked``
        ones (a SPEC once per file)."""
        return _per_file(len(self.descriptors), self.rerank, self.reranked)

    def approximate_pairs(self) -> tuple[tuple[int, str], ...]:
        """Return every approximate search as (position in ``descriptors``, SPEC), in the
        order the methods open: per file, the ``ann`` SPECs, then its own ``approximate``
        ones (a SPEC once per file)."""
        return _per_file(len(self.descriptors), self.ann, self.approximate)

    def engine_pairs(self) -> tuple[tuple[int, EngineRef], ...]:
        """Return every vector-engine search as (position in ``descriptors``, (URI,
        collection, names field)), in the order the methods open: per file, the request's
        ``engine`` (every file), then its own ``engines`` (an engine's collection once per
        file)."""
        every: tuple[EngineRef, ...] = ()
        if self.engine and self.collection:
            every = ((self.engine, self.collection, self.engine_names),)
        return _per_file(len(self.descriptors), every, self.engines)

    @property
    def derives(self) -> bool:
        """Return True when the request asks for derived methods for every file (``rerank``,
        ``ann``, ``engine``): what ``irviewer eval`` then scores instead of the plain
        methods."""
        return bool(self.rerank or self.ann or (self.engine and self.collection))

    def plan(self) -> tuple[MethodSpec, ...]:
        """Return every method the request opens, in opening order: each file's plain method,
        then (descriptor files) its re-ranked, approximate and engine methods, each named
        "F + WHAT" after its file's unique name. InputError for a SPEC that does not
        parse."""
        return plan_methods(self)

    def with_methods(self, descriptors: Sequence[Path] = (),
                     rankings: Sequence[Path] = ()) -> OpenRequest:
        """Return this request with more method files: ``descriptors`` and ``rankings`` not
        already open are added after the open ones. Every other setting is kept (reader,
        protocol, conventions, corrections, depth), and so is every derived method already
        asked for, each now named by its own file (``reranked``, ``approximate``,
        ``engines``): a derivation given for every file (``rerank``, ``ann``, ``engine``)
        is not extended to the added files, which open plain."""
        known = set(self.sources())
        more_d = tuple(dict.fromkeys(p for p in descriptors if p not in known))
        more_r = tuple(dict.fromkeys(p for p in rankings if p not in known))
        return replace(self, descriptors=(*self.descriptors, *more_d),
                       rankings=(*self.rankings, *more_r), rerank=(),
                       reranked=self.reranked_pairs(), ann=(),
                       approximate=self.approximate_pairs(), engine=None, collection=None,
                       engine_names=None, engines=self.engine_pairs())

    def method_key(self, name: str | None) -> tuple[int, str | None] | None:
        """Return (position in :meth:`sources`, what derives the method from the file's
        plain one, or None for the plain method) of the method called ``name``
        (:attr:`MethodSpec.key`), or None when the request opens no such method."""
        return next((s.key for s in self.plan() if s.name == name), None)

    def method_named(self, index: int, label: str | None = None) -> str | None:
        """Return the name of source ``index``'s method derived by ``label`` (None: its
        plain method), or None when the request opens no such method (the inverse of
        :meth:`method_key`)."""
        return next((s.name for s in self.plan() if s.key == (index, label)), None)


def _per_file(n_files: int, every: tuple[T, ...], own: tuple[tuple[int, T], ...]
              ) -> tuple[tuple[int, T], ...]:
    out: list[tuple[int, T]] = []
    for i in range(n_files):
        items = [*every, *(x for j, x in own if j == i)]
        out += [(i, x) for x in dict.fromkeys(items)]
    return tuple(out)


def plan_methods(request: OpenRequest) -> tuple[MethodSpec, ...]:
    """Return :meth:`OpenRequest.plan`: every method of ``request`` as a
    :class:`~irviewer.methods.spec.MethodSpec`."""
    names = file_names(request.sources())
    n_d = len(request.descriptors)
    strict_ann = set(request.ann)
    out: list[MethodSpec] = []
    for i, path in enumerate(request.sources()):
        kind = DESCRIPTORS if i < n_d else RANKING
        plain = MethodSpec(names[i], Source(Path(path), kind, i), depth=request.k)
        out.append(plain)
        if kind != DESCRIPTORS:
            continue
        derived: list[tuple[Derivation, bool]] = []
        derived += [(Reranked(parse_spec(s).text), True)
                    for j, s in request.reranked_pairs() if j == i]
        for j, text in request.approximate_pairs():
            if j != i:
                continue
            parsed = parse_ann_spec(text)
            ids = request.ann_names if parsed.is_file else None
            derived += [(Approximate(parsed.text, setting, ids), text in strict_ann)
                        for setting in parsed.settings()]
        for j, (uri, collection, names_field) in request.engine_pairs():
            if j == i:
                engine = parse_engine_spec(uri)
                derived += [(Engine(engine.uri, collection, names_field, setting.params), True)
                            for setting in engine.settings()]
        out += [MethodSpec(derived_name(plain.name, d.label), plain.source, d, request.k,
                           plain.name, required) for d, required in derived]
    return tuple(out)


def demo_paths() -> tuple[Path, Path]:
    """Return the built-in demo's manifest and strong descriptor file."""
    demo = resources_dir() / "demo"
    return demo / "demo.csv", demo / "strong.npz"


def demo_request() -> OpenRequest:
    """Return the request that opens the built-in demo with both descriptor files."""
    manifest, strong = demo_paths()
    return OpenRequest(manifest, (strong, strong.parent / "weak.npz"))


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
