"""The names of the two conventions a protocol can change by name, and their labels: how AP is
integrated (``finite``: the mean of P@rank over the positives, trec_eval and torchreid;
``trapezoid``: Oxford ``compute_ap.cpp``, revisitop, cirtorch) and what happens to the query's
own gallery image (``keep`` it where the ground truth puts it, or ``remove`` it from the
ranking). Every other module (the protocols, the metrics, the options, the session file, the
window) imports these; ``docs/metrics.md`` gives each with its source."""

from __future__ import annotations

from typing import Final, Literal

APRule = Literal["finite", "trapezoid"]
SelfMatch = Literal["keep", "remove"]

FINITE: Final = "finite"
TRAPEZOID: Final = "trapezoid"
#: Every AP rule, in the order the options and messages list them.
AP_RULES: tuple[APRule, ...] = (FINITE, TRAPEZOID)

KEEP: Final = "keep"
REMOVE: Final = "remove"
#: Every self-match rule, in the order the options and messages list them.
SELF_MATCH_RULES: tuple[SelfMatch, ...] = (KEEP, REMOVE)

#: What the summary and the window's method bar call each rule.
AP_LABELS: dict[str, str] = {FINITE: "finite-sum AP", TRAPEZOID: "trapezoid AP"}
SELF_MATCH_LABELS: dict[str, str] = {REMOVE: "own image removed", KEEP: "own image kept"}


def one_of(names: tuple[str, ...]) -> str:
    """Return ``names`` as the end of a sentence: ``"finite or trapezoid"``."""
    return " or ".join(names)
