"""The label audit's shared types: the kinds of suspect, the options, a :class:`Suspect`, the
result and the progress steps, and the words every evidence sentence uses.

The audit's other modules import these from here; the ``acyclic`` import contract keeps
them free of cycles.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from irviewer.core.corrections import Correction
from irviewer.core.errors import InputError

NEG_POS = "negative_looks_positive"
POS_NEG = "positive_looks_negative"
LABEL = "label_disagreement"
DUPLICATE = "near_duplicate"
QUERY = "query_ground_truth"
HUB = "hub"
#: An image one list has and another looks like: one problem, both lists fixed.
WRONG_LIST = "wrong_list"
#: Every kind, in the order ties in score are listed.
KINDS = (DUPLICATE, LABEL, WRONG_LIST, NEG_POS, POS_NEG, QUERY, HUB)
AUTHOR = "irviewer audit"


@dataclass(frozen=True)
class AuditOptions:
    """The audit's thresholds (defaults documented in ``docs/audit.md``)."""

    depth: int | None = None
    query_top: int = 10
    hub_top: int = 10
    hub_factor: float = 10.0
    neighbours: int = 10
    duplicate_cosine: float = 0.98
    min_score: float = 0.5
    max_candidates: int = 1024
    full_neighbour_flops: float = 2e10
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("query_top", "hub_top", "neighbours", "max_candidates"):
            if getattr(self, name) < 1:
                raise InputError(f"audit option {name} must be at least 1, "
                                 f"not {getattr(self, name)}")
        if self.depth is not None and self.depth < 1:
            raise InputError(f"audit option depth must be at least 1, not {self.depth}")
        if not 0.0 < self.duplicate_cosine <= 1.0:
            raise InputError("the near-duplicate cosine must be in (0, 1], "
                             f"not {self.duplicate_cosine}")
        if not 0.0 <= self.min_score <= 1.0:
            raise InputError(f"the minimum score must be in [0, 1], not {self.min_score}")


@dataclass(frozen=True)
class Suspect:
    """One probably wrong label, as the review queue shows it.

    ``query`` is the query's name, or None for an image-level suspect; ``item`` the gallery
    image's name (for ``query_ground_truth`` the query's own image). ``labelled`` and
    ``suggested`` are what the label is and what the evidence suggests (None: no fix to
    suggest). ``ranks`` gives, per method, the item's 1-based rank for ``context_query``
    after the protocol's removals (None: not ranked). ``context_query`` is the query whose
    ranking shows the evidence best (-1 when none does), also for image-level suspects.
    ``queries``: every query the suspect is about when several queries share the label (the
    five queries of an Oxford landmark share their lists: one problem, one suspect), ``query``
    the one its evidence is shown for; ``corrections`` the fix of each of them (accepting
    applies them all). ``log_odds``: the log odds that the label is wrong, which orders the
    suspects where ``score`` rounds to 1 (None: ordered by ``score``).
    """

    kind: str
    score: float
    query: str | None
    item: str
    labelled: str
    suggested: str | None
    evidence: str
    methods_agreeing: int
    n_methods: int
    item_index: int = -1
    context_query: int = -1
    ranks: tuple[tuple[str, int | None], ...] = ()
    correction: Correction | None = None
    queries: tuple[str, ...] = ()
    corrections: tuple[Correction, ...] = ()
    log_odds: float | None = None

    def fixes(self) -> tuple[Correction, ...]:
        """Return every correction accepting the suspect applies (empty: no fix)."""
        if self.corrections:
            return self.corrections
        return (self.correction,) if self.correction is not None else ()

    def moves(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Return the suggested corrections grouped by the label they set, in order: (label,
        the queries whose lists get it); an image-level relabel has no query (``()``). A
        suspect in the wrong list has two: the list it looks like, the list that has it."""
        out: dict[str, list[str]] = {}
        for c in self.fixes():
            out.setdefault(c.label, [])
            if c.query:
                out[c.label].append(c.query)
        return tuple((label, tuple(queries)) for label, queries in out.items())

    def order(self) -> float:
        """Return how strongly the suspect is held to be an error: its log odds, else the
        log odds of its score (clipped to [1e-12, 1 - 1e-12])."""
        if self.log_odds is not None:
            return self.log_odds
        p = min(max(self.score, 1e-12), 1 - 1e-12)
        return math.log(p) - math.log1p(-p)


@dataclass(frozen=True)
class AuditResult:
    """Suspects, most suspicious first, with the protocol used and notes for the user."""

    suspects: tuple[Suspect, ...]
    protocol: str
    methods: tuple[str, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class AuditStep:
    """Progress of :func:`iter_audit`: a stage, done of total, and the result at the end."""

    stage: str
    done: int
    total: int
    result: AuditResult | None = None


# -- words shared by every detector ------------------------------------------------------

def score_words(suspect: Suspect) -> str:
    """Return the score as people read it, with enough digits to tell the most certain
    suspects apart: ``0.87``; ``0.9993``; ``1 - 2.1e-06`` where it rounds to 1."""
    p = suspect.score
    if p < 0.99:
        return f"{p:.2f}"
    if p < 0.9999:
        return f"{p:.4f}"
    x = suspect.order()
    rest = math.exp(-x) / (1 + math.exp(-x)) if x < 700 else 0.0
    return f"1 - {rest:.1e}" if rest > 0 else "1 - <1e-300"


def ordinal(n: int) -> str:
    """Return ``1st``, ``2nd``, ``3rd``, ``11th``, ``22nd``..."""
    if 10 <= n % 100 <= 20:
        return f"{n:,}th"
    return f"{n:,}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def under(n_methods: int) -> str:
    """Return "under the one method", "under both methods" or "under all N methods"."""
    if n_methods == 1:
        return "under the one method"
    return "under both methods" if n_methods == 2 else f"under all {n_methods} methods"


def rank_phrase(ranks: list[int | None]) -> str:
    """Return "2nd" when every method gives the same rank, else "2nd and 5th" / "2nd, 3rd
    and 7th" (methods in order); "unranked" for a rank beyond a list."""
    words = [ordinal(r) if r is not None else "unranked" for r in ranks]
    if len(set(words)) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " and " + words[-1]


def span(names: list[str]) -> str:
    """Return a list of query names as people read it: runs of three or more consecutive
    numbered names folded ("all_souls_1–5", "all_souls_1–3 and all_souls_5", zero-padded
    names keep their digits: "q_0007–0009"), else "a, b and c" (more than four parts: "a, b
    and 7 more")."""
    if not names:
        return ""
    parts: list[str] = []
    run: list[tuple[str, str]] = []  # (stem, digits) of consecutive names

    def close() -> None:
        if len(run) > 2:
            parts.append(f"{run[0][0]}{run[0][1]}–{run[-1][1]}")
        else:
            parts.extend(stem + digits for stem, digits in run)
        run.clear()

    for name in names:
        m = re.fullmatch(r"(.*?)(\d+)", name)
        if m and run and run[-1][0] == m.group(1) and _follows(run[-1][1], m.group(2)):
            run.append((m.group(1), m.group(2)))
            continue
        close()
        if m:
            run.append((m.group(1), m.group(2)))
        else:
            parts.append(name)
    close()
    if len(parts) == 1:
        return parts[0]
    if len(parts) <= 4:
        return ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"{', '.join(parts[:2])} and {len(parts) - 2} more"


def _follows(before: str, after: str) -> bool:
    """Return True when the digits ``after`` number the name after ``before`` (zero-padded
    numbers of one width, or numbers without padding)."""
    padded = before.startswith("0") or after.startswith("0")
    return int(before) + 1 == int(after) and (len(before) == len(after) or not padded)
