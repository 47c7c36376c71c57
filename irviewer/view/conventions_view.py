"""The conventions panel's content (Qt-free): the shown ranking's mean under every
convention irviewer knows (:func:`irviewer.core.conventions.all_conventions`), one line
each, the protocol's own marked, as ``irviewer eval --conventions`` prints them."""

from __future__ import annotations

import math
from dataclasses import dataclass

from irviewer.core.conventions import all_conventions
from irviewer.core.evaluation import Evaluation

#: The panel's columns: the value first, so that a narrow panel still shows it.
HEADERS = ("%", "Metric", "Convention", "Used by")
#: The mark of the protocol's own convention.
OWN_MARK = "★"


@dataclass(frozen=True)
class ConventionLine:
    """One line of the panel: ``metric`` (AP, P@k), ``convention`` (with the mark when it
    is the protocol's own), ``value`` in percent as text, ``own``, and ``source`` (the
    public evaluators that use it)."""

    metric: str
    convention: str
    value: str
    own: bool
    source: str


def convention_lines(ev: Evaluation) -> tuple[ConventionLine, ...]:
    """Return one line per convention of ``ev``'s ranking, the protocol's own marked."""
    out = []
    for row in all_conventions(ev):
        value = "—" if math.isnan(row.mean) else f"{100 * row.mean:.2f}"
        name = f"{OWN_MARK} {row.name}" if row.own else row.name
        out.append(ConventionLine(row.metric, name, value, row.own, row.source))
    return tuple(out)


def conventions_caption(ev: Evaluation) -> str:
    """Return the sentence above the table: what is compared and what the mark means."""
    return (f"The same ranking ({ev.ranking.source}) under every convention; {OWN_MARK} marks "
            f"protocol {ev.protocol.name}'s own. Each row equals that convention chosen "
            "alone (irviewer eval --conventions).")
