"""A method of the open data (:class:`Method`: what produced one ranking, and what a report
needs to identify it) and the opening's progress (:class:`Step`; :func:`as_steps` relays a
core generator's progress as steps). :mod:`irviewer.opening.opener` makes methods and
re-exports both names.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from irviewer.core.ann.results import AnnRun
from irviewer.core.evaluation import Evaluation
from irviewer.core.ranking import Ranking
from irviewer.core.rerank import Chain

T = TypeVar("T")


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
    a plain one). ``ann`` is the approximate search of a method "F + SETTING" (an index or
    a vector engine; None for an exact one): its times, recalls and the exact lists it is
    compared with. ``evaluations`` maps each scored protocol to its evaluation under the
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
    ann: AnnRun | None = None
    evaluations: Mapping[str, Evaluation] = field(default_factory=dict, compare=False,
                                                  repr=False)

    @property
    def position_note(self) -> str | None:
        """Return the sentence saying that rows were matched by position (None when they
        were matched by name)."""
        return self.notes[0] if self.matched_by_position else None


@dataclass(frozen=True)
class Step:
    """Progress of :func:`iter_open`: a stage name and done of total (0 of 0: no count)."""

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
