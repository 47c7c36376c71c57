"""What File ▸ Export figure asks for, and the figure layout it makes (Qt-free): the window's
choices mapped onto :func:`irviewer.view.figure.select_queries` and
:func:`irviewer.view.figure.layout_figure`, the same two ``irviewer figure`` calls, so the
window's figure and the command's are the same drawing (see docs/figures.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from irviewer.core.errors import InputError
from irviewer.core.evaluation import Evaluation
from irviewer.view.figure import FigureLayout, layout_figure, select_queries
from irviewer.view.figure_formats import SUFFIXES_TEXT, figure_suffix

#: The query choices, in the dialog's order: (key, words).
CHOICES = (
    ("selected", "the selected query"),
    ("listed", "the queries the table lists (its filter and order)"),
    ("worst", "the worst N (lowest AP under the shown method)"),
    ("best", "the best N (highest AP under the shown method)"),
    ("largest_changes", "the N largest changes (|ΔAP| against the compared method)"),
)
#: Most rows a figure from the table's list gets (a page stays printable).
MAX_LISTED = 50


@dataclass(frozen=True)
class FigureRequest:
    """The dialog's answers: which queries (``choice`` a key of :data:`CHOICES`, ``n`` for
    worst / best / largest changes), ``top_k`` results per row, ``scores`` under tiles,
    ``second_row`` (the compared method as a second row per query) and the output path."""

    choice: str
    n: int
    top_k: int
    scores: bool
    second_row: bool
    path: Path


def check_path(path: Path | str) -> Path:
    """Return ``path`` when its suffix is a figure format
    (:mod:`irviewer.view.figure_formats`) and its folder exists; InputError otherwise."""
    path = Path(path)
    if not path.name:
        raise InputError(f"choose the file to write the figure to ({SUFFIXES_TEXT})")
    figure_suffix(path)
    if not path.parent.is_dir():
        raise InputError(f"{path.parent}: no such folder to write the figure into")
    return path


def figure_layout(request: FigureRequest, shown: tuple[str, Evaluation],
                  compared: tuple[str, Evaluation] | None, selected: int | None,
                  listed: list[int],
                  paired: tuple[Evaluation, Evaluation] | None = None) -> FigureLayout:
    """Return the layout of ``request``: ``shown`` (and ``compared`` when asked for a second
    row, or for the largest changes) under one protocol, each its own evaluation;
    ``paired`` the two as compared (at their common depth), whose deltas choose the largest
    changes; ``selected`` the query shown, ``listed`` the query positions the table lists in
    its order. InputError for a choice that cannot be made (no query selected, nothing
    listed, no compared method)."""
    check_path(request.path)
    evaluations = [shown]
    if compared is not None and (request.second_row or request.choice == "largest_changes"):
        evaluations.append(compared)
    elif request.choice == "largest_changes":
        raise InputError("the largest changes need a method to compare with: choose one in "
                         "Compare with")
    if request.choice == "selected":
        if selected is None:
            raise InputError("no query is selected: select one in the table")
        queries = [selected]
    elif request.choice == "listed":
        if not listed:
            raise InputError("the table lists no query: clear its filters")
        queries = listed[:MAX_LISTED]
    else:
        n = {request.choice: request.n}  # worst, best or largest_changes
        queries = select_queries(evaluations, worst=n.get("worst"), best=n.get("best"),
                                 largest_changes=n.get("largest_changes"), paired=paired)
    if not request.second_row:
        evaluations = evaluations[:1]
    return layout_figure(evaluations, queries, request.top_k, scores=request.scores)
