"""A method made (:class:`Method`: its :class:`~irviewer.methods.spec.MethodSpec`, its
ranking, and what a report needs to identify it) and the progress of making one
(:class:`Step`; :func:`as_steps` relays a core generator's progress as steps)."""

from __future__ import annotations

from collections.abc import Generator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from irviewer.core.ann.results import AnnRun
from irviewer.core.evaluation import Evaluation
from irviewer.core.file_digests import digest_hex, ready_digest
from irviewer.core.ranking import Ranking
from irviewer.core.rerank import Chain
from irviewer.methods.spec import MethodSpec, Source

T = TypeVar("T")


@dataclass(frozen=True)
class Method:
    """One ranking of the dataset, with what a report needs to identify it.

    ``kind`` is the kind of its file, ``"descriptors"`` or ``"ranking"`` (what it was
    derived by is :attr:`spec`'s); ``digest`` the future sha256 of the file's bytes (of the
    arrays', for data held in memory), computed on another thread since the file was named
    and waited for by :attr:`sha256` when a report needs it; ``dim`` the
    descriptor dimension (None for a ranking); ``notes`` sentences about this method for the
    user, each naming its file (a ranking's skipped lists; rows matched by position and,
    where the result is at chance level, that they are probably in another order), as
    :class:`~irviewer.core.errors.Sentence` where they name an option.
    ``matched_by_position`` is True when descriptor rows without names were matched to the
    dataset by their order; :attr:`position_note` is then the sentence that says so (the
    window's banner). ``rerank`` is the re-ranking chain of a method "F + SPEC" (None
    otherwise). ``ann`` is the approximate search of a method "F + SETTING" (an index or a
    vector engine; None for an exact one): its times and recalls. ``spec`` is what the
    method is (its derivation, depth, and :attr:`base`, the method it is compared with).
    ``evaluations`` maps each scored protocol to its evaluation under the protocol's own
    conventions: a view of :class:`~irviewer.opening.opener.Opened`'s one cache.
    """

    name: str
    path: Path
    kind: str
    ranking: Ranking
    notes: tuple[str, ...] = ()
    digest: Future[str] = field(default_factory=lambda: ready_digest(""), compare=False,
                                repr=False)
    dim: int | None = None
    matched_by_position: bool = False
    rerank: Chain | None = None
    ann: AnnRun | None = None
    spec: MethodSpec | None = field(default=None, compare=False, repr=False)
    evaluations: Mapping[str, Evaluation] = field(default_factory=dict, compare=False,
                                                  repr=False)

    def __post_init__(self) -> None:
        if self.spec is None:  # a method made by hand: a plain method of its file
            object.__setattr__(self, "spec", MethodSpec(
                self.name, Source(Path(self.path), self.kind, 0), depth=self.ranking.k))

    @property
    def sha256(self) -> str:
        """Return the hex sha256 of the method's file (of its arrays' bytes for data held in
        memory; "" for a method made by hand), waiting for its thread; InputError when the
        file could not be read to the end."""
        return digest_hex(self.digest, self.path)

    @property
    def made(self) -> MethodSpec:
        """Return :attr:`spec` (always set once the method exists)."""
        assert self.spec is not None
        return self.spec

    @property
    def base(self) -> str | None:
        """Return the name of the method this one is derived from and compared with (the
        plain method of its file), or None for a plain method."""
        return self.made.base

    @property
    def position_note(self) -> str | None:
        """Return the sentence saying that rows were matched by position (None when they
        were matched by name)."""
        return self.notes[0] if self.matched_by_position else None


@dataclass(frozen=True)
class Step:
    """Progress of making methods: a stage name and done of total (0 of 0: no count)."""

    stage: str
    done: int = 0
    total: int = 0


def as_steps(steps: Generator[tuple[str, int, int], None, T], prefix: str = "",
             suffix: str = "") -> Generator[Step, None, T]:
    """Return what the core generator ``steps`` returns, yielding each of its
    (stage, done, total) progress tuples as a :class:`Step` named
    ``prefix + stage + suffix``."""
    while True:
        try:
            stage, done, total = next(steps)
        except StopIteration as finished:
            return finished.value
        yield Step(f"{prefix}{stage}{suffix}", done, total)


__all__ = ["Method", "Step", "as_steps"]
