"""What a method is, as one typed value: :class:`MethodSpec`.

Every method irviewer scores is a file it ranks from (:class:`Source`: a descriptor file,
or a precomputed ranking), optionally a derivation of that file's plain method
(:class:`Reranked`, :class:`Approximate` — a FAISS index, one setting — or :class:`Engine`,
a vector engine's collection), a depth (the results kept per query) and the tie rule. Its
name ("F", "F + SPEC") is given once, by the plan of a request
(:meth:`irviewer.opening.request.OpenRequest.plan`), and every command, report, session and
the window take it from there; so does which method a derived one is compared with
(:attr:`MethodSpec.base`) and at which depth (:mod:`irviewer.core.ranking.cut`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from irviewer.core.ann.spec import AnnSetting, engine_label
from irviewer.core.protocols import TIES
from irviewer.core.ranking import DEFAULT_DEPTH

#: A source's kinds: a descriptor file (or hpatches-benchmark descriptor folder) ranked by
#: cosine similarity, or precomputed result lists (TREC run, .npz indices, .results).
DESCRIPTORS, RANKING = "descriptors", "ranking"


@dataclass(frozen=True)
class Source:
    """The file a method ranks from: its ``path``, ``kind`` (:data:`DESCRIPTORS` or
    :data:`RANKING`) and ``position`` among the request's files (descriptor files first,
    then rankings), which sessions record."""

    path: Path
    kind: str
    position: int


@dataclass(frozen=True)
class Reranked:
    """The plain method re-ranked by a chain (:mod:`irviewer.core.rerank`): ``spec`` is the
    chain as the user wrote it, canonical."""

    spec: str

    @property
    def label(self) -> str:
        """Return what follows "F + " in the method's name."""
        return self.spec


@dataclass(frozen=True)
class Approximate:
    """The plain method's queries searched by a FAISS index with one setting: ``spec`` is
    the whole SPEC (every setting of a sweep builds one index), ``setting`` this method's,
    ``id_names`` the names file of an index file's ids (``--ann-names``; None: the ids
    follow the dataset's or the file's order, :mod:`irviewer.core.ann.index_ids`)."""

    spec: str
    setting: AnnSetting
    id_names: Path | None = None

    @property
    def label(self) -> str:
        """Return what follows "F + " in the method's name ("IVF256,Flat:nprobe=8"; an
        index file by its file name)."""
        return self.setting.label


@dataclass(frozen=True)
class Engine:
    """The plain method's queries searched in a vector engine's collection: the engine's
    ``uri`` (never with credentials), the ``collection``, the field holding image names
    (None: the primary key) and the search parameters of this setting."""

    uri: str
    collection: str
    names_field: str | None = None
    params: tuple[tuple[str, float], ...] = ()

    @property
    def params_text(self) -> str:
        """Return the search parameters as written after the URI ("nprobe=8"; "")."""
        return ",".join(f"{k}={_show(v)}" for k, v in self.params)

    @property
    def label(self) -> str:
        """Return what follows "F + " in the method's name ("milvus:paintings",
        "milvus:paintings:nprobe=8")."""
        return engine_label(self.collection, self.params_text)

    @property
    def written(self) -> str:
        """Return the engine as ``--engine`` and sessions write it: the URI, then this
        setting's search parameters ("gallery.db:nprobe=8")."""
        return f"{self.uri}:{self.params_text}" if self.params else self.uri


Derivation = Reranked | Approximate | Engine


@dataclass(frozen=True)
class MethodSpec:
    """One method: its unique ``name``, the ``source`` it ranks from, how it is derived from
    that file's plain method (``derivation``, None for the plain method), the ``depth`` of
    its result lists, and the name of the method it is compared with (``base``: the plain
    method of the same file; None for a plain method). ``required`` False: a method a
    session or the window recorded, which says why when it cannot be made again instead of
    stopping the opening."""

    name: str
    source: Source
    derivation: Derivation | None = None
    depth: int = DEFAULT_DEPTH
    base: str | None = None
    required: bool = True

    @property
    def kind(self) -> str:
        """Return the method's kind: "descriptors", "ranking", "reranked", "approximate"
        or "engine"."""
        if self.derivation is None:
            return self.source.kind
        return {Reranked: "reranked", Approximate: "approximate",
                Engine: "engine"}[type(self.derivation)]

    @property
    def label(self) -> str | None:
        """Return what derives the method from its file's plain one, as names show it (None
        for the plain method)."""
        return None if self.derivation is None else self.derivation.label

    @property
    def key(self) -> tuple[int, str | None]:
        """Return (position of the file among the request's, :attr:`label`): how a session
        names the method."""
        return self.source.position, self.label

    @property
    def tie_rule(self) -> str:
        """Return how equal scores are ordered (the one rule of every ranking irviewer
        makes; a precomputed list keeps its own order)."""
        return "as listed in the file" if self.source.kind == RANKING and \
            self.derivation is None else TIES


def derived_name(name: str, label: str) -> str:
    """Return the name of the method ``name`` derived by ``label`` ("F + SPEC")."""
    return f"{name} + {label}"


def file_names(paths: tuple[Path, ...]) -> list[str]:
    """Return a short, unique display name per method file: its file name, with as many
    parent folders as needed to tell two equal file names apart (" (2)", " (3)"... for the
    same path given twice)."""
    parts = [Path(p).parts for p in paths]
    depth = dict.fromkeys(range(len(paths)), 1)
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


def _show(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


__all__ = ["DESCRIPTORS", "RANKING", "Approximate", "Derivation", "Engine", "MethodSpec",
           "Reranked", "Source", "derived_name", "file_names"]
