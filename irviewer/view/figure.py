"""A figure of ranked results for a paper or a report, as a Qt-free layout: which queries,
which rows, every tile's place, relevance and words, and the caption. The painter
(:mod:`irviewer.gui.figure_painter`) only draws what this module decides.

One row per query, and per method when two are given: the query image (with the
benchmark's query box), then its top K results after the protocol's removals, each with a
relevance frame *and* a badge shape (✓ relevant, ✗ not relevant, – ignored), its rank and
optionally its score; the row's header names the query, the method and the query's AP. The
caption names the protocol and its conventions, so the figure can be cited.

Relevance and ranks come from the shared result-list view model
(:func:`irviewer.view.result_list.result_list`, which asks the core's
:meth:`Evaluation.relevance`): the figure shows exactly what the window shows.

Geometry is in points (1/72 inch): a 72 pt tile is one inch wide in the PDF, and 300 px in
the PNG at 300 dpi.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from irviewer.core.dataset import Query
from irviewer.core.errors import InputError, counted, either, examples
from irviewer.core.evaluation import IGNORED, NEGATIVE, POSITIVE, Evaluation
from irviewer.core.paired import compare_evaluations
from irviewer.core.protocols import conventions, removals
from irviewer.view.result_list import (
    PLAIN,
    UNJUDGED,
    ResultTile,
    has_ground_truth,
    result_list,
)

#: Badge words, as the legend and the caption say them (the colours are the window's theme).
BADGE_WORDS = {POSITIVE: "relevant", NEGATIVE: "not relevant", IGNORED: "ignored"}


@dataclass(frozen=True)
class Rect:
    """A rectangle in points: left, top, width, height."""

    x: float
    y: float
    w: float
    h: float

    def inset(self, d: float) -> Rect:
        """Return the rectangle shrunk by ``d`` on every side."""
        return Rect(self.x + d, self.y + d, self.w - 2 * d, self.h - 2 * d)


@dataclass(frozen=True)
class Geometry:
    """Sizes in points: tile side, frame width, gaps, text sizes, margin, badge diameter."""

    tile: float = 72.0
    frame: float = 4.0
    gap: float = 6.0
    row_gap: float = 10.0
    group_gap: float = 16.0
    margin: float = 18.0
    header: float = 13.0
    caption_line: float = 10.0
    font: float = 8.0
    small_font: float = 6.5
    badge: float = 15.0
    query_gap: float = 12.0
    width_chars: int = 0  # caption wrapping (0: from the figure's width)


@dataclass(frozen=True)
class TileCell:
    """One result tile on the figure: where it is, what it shows and its words."""

    rect: Rect
    tile: ResultTile
    badge: int
    rank_text: str
    score_text: str


@dataclass(frozen=True)
class FigureRow:
    """One row: a query under one method, its query cell and result tiles."""

    query: int
    query_name: str
    title: str
    method: str
    ap: float
    header: str
    header_rect: Rect
    query_rect: Rect
    query_image: str
    query_path: Path | None
    query_box: tuple[float, float, float, float] | None
    tiles: tuple[TileCell, ...]


@dataclass(frozen=True)
class FigureLayout:
    """The whole figure: its size in points, rows, legend and caption lines."""

    width: float
    height: float
    rows: tuple[FigureRow, ...]
    legend: tuple[tuple[int, str], ...]
    legend_rect: Rect
    caption: tuple[str, ...]
    caption_rect: Rect
    geometry: Geometry


def select_queries(evaluations: list[tuple[str, Evaluation]], *,
                   queries: list[str] | None = None, worst: int | None = None,
                   best: int | None = None, largest_changes: int | None = None,
                   paired: tuple[Evaluation, Evaluation] | None = None) -> list[int]:
    """Return the query positions a figure shows, in the order it shows them.

    Exactly one selection: ``queries`` by name (a query's name, or its file name with or
    without extension when that is unique); ``worst`` / ``best``: the N evaluated queries
    with the lowest / highest AP under the first method (equal APs keep query order);
    ``largest_changes``: the N queries whose AP differs most (|delta|) between the two
    methods, evaluated by both (:mod:`irviewer.core.paired`), as ``paired`` scores them for
    the comparison (:meth:`irviewer.opening.opener.Opened.paired`: at their common depth;
    None: the two evaluations as given). InputError otherwise.
    """
    chosen = [k for k, v in (("--queries", queries), ("--worst", worst), ("--best", best),
                             ("--largest-changes", largest_changes)) if v is not None]
    if len(chosen) != 1:
        raise InputError("choose the queries with exactly one of --queries, --worst, --best "
                         f"or --largest-changes (given: {', '.join(chosen) or 'none'})")
    first = evaluations[0][1]
    ds = first.dataset
    if queries is not None:
        return [find_query(ds.queries, name) for name in queries]
    n = worst if worst is not None else best if best is not None else largest_changes
    assert n is not None
    if n < 1:
        raise InputError(f"{chosen[0]} needs a number of queries of at least 1, not {n}")
    if largest_changes is not None:
        if len(evaluations) != 2:
            changes = either("--largest-changes", "choosing the largest changes",
                             "largest_changes")
            give = either("give two (-d A B, or --ranking)", "open a second one", "descriptors")
            raise InputError(f"{changes} needs two methods to compare: {give}")
        (a, ev_a), (b, ev_b) = evaluations
        if paired is not None:
            ev_a, ev_b = paired
        c = compare_evaluations(a, ev_a, b, ev_b, "AP")
        order = np.argsort(-np.abs(c.deltas), kind="stable")[:n]
        where = {q.name: i for i, q in enumerate(ds.queries)}
        return [where[c.queries[i]] for i in order]
    positions, ap = first.ap_values()
    if not len(positions):
        raise InputError(f"no query of {ds.name} is evaluated under {first.protocol.name}: "
                         "nothing to choose the worst or best from")
    order = np.argsort(ap if worst is not None else -ap, kind="stable")[:n]
    return [int(positions[i]) for i in order]


def find_query(queries: Sequence[Query], name: str) -> int:
    """Return the position of the query called ``name``: its exact name, else the query whose
    name or image has the same file stem ("qa.jpg", "images/qa" and "qa" find query
    "images/qa") when only one has. InputError naming a few queries otherwise."""
    for i, q in enumerate(queries):
        if q.name == name:
            return i
    stem = Path(name).stem
    loose = [i for i, q in enumerate(queries) if stem in (Path(q.name).stem, Path(q.image).stem)]
    if len(loose) == 1:
        return loose[0]
    if len(loose) > 1:
        raise InputError(f"query {name!r} is ambiguous: "
                         f"{examples(queries[i].name for i in loose)}; give the full name")
    raise InputError(f"no query called {name!r}; queries are named like "
                     f"{examples(q.name for q in queries)}")


def layout_figure(evaluations: list[tuple[str, Evaluation]], queries: list[int], top_k: int,
                  *, scores: bool = False, show_ignored: bool = False,
                  labels: dict[str, str] | None = None,
                  geometry: Geometry | None = None) -> FigureLayout:
    """Return the figure of ``queries`` (positions) under one or two methods
    (``evaluations``: (method name, evaluation) under the same protocol), with the first
    ``top_k`` ranked results per row.

    ``scores`` adds each tile's score; ``show_ignored`` shows ignored items where they
    ranked (they take no rank and do not count in K); ``labels`` renames methods in the
    row headers ("Ours", "Baseline").
    """
    g = geometry or Geometry()
    if not 1 <= len(evaluations) <= 2:
        raise InputError(f"a figure shows one or two methods, not {len(evaluations)}")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= 50:
        raise InputError(f"{either('--top', 'the number of results', 'top')} must be a "
                         f"whole number from 1 to 50, not {top_k!r}")
    if not queries:
        raise InputError("the figure has no query to show")
    labels = labels or {}
    stride = g.tile + g.gap
    row_height = g.header + g.tile + g.caption_line * (2 if scores else 1) + g.row_gap
    x0 = g.margin
    judged = any(has_ground_truth(ev, q) for _, ev in evaluations for q in queries)
    # the legend line; a figure of nothing judged has no legend unless ignored items show
    y = g.margin + (g.caption_line * 1.6 if judged or show_ignored else 0)
    rows: list[FigureRow] = []
    widest = 0
    for q in queries:
        for method, ev in evaluations:
            rl = result_list(ev, q, top_k, show_ignored)
            query = ev.dataset.queries[q]
            title = str(query.meta.get("title") or "")
            ap = float(ev.per_query["AP"][q])
            label = labels.get(method, method)
            if has_ground_truth(ev, q):
                ap_text = "skipped: no positive" if math.isnan(ap) else f"AP {100 * ap:.1f}"
                header = f"{title or query.name} · {label} · {ap_text}"
            else:  # a curator's artwork with one photo: nothing was scored
                header = f"{title or query.name} · {label} · more like this"
            query_rect = Rect(x0, y + g.header, g.tile, g.tile)
            cells = []
            for j, t in enumerate(rl.tiles):
                rect = Rect(x0 + g.tile + g.query_gap + j * stride, y + g.header, g.tile, g.tile)
                rank = f"#{t.rank}" if t.rank is not None else "ignored"
                score = "" if not scores or math.isnan(t.score) else f"{t.score:.3f}"
                cells.append(TileCell(rect, t, t.badge, rank, score))
            widest = max(widest, len(cells))
            rows.append(FigureRow(q, query.name, title, label, ap, header,
                                  Rect(x0, y, 10 * stride, g.header), query_rect,
                                  query.image, ev.dataset.image_paths.get(query.image),
                                  query.box, tuple(cells)))
            y += row_height
        y += g.group_gap - g.row_gap if len(evaluations) > 1 else 0
    width = 2 * g.margin + g.tile + g.query_gap + max(widest, 1) * stride - g.gap
    shown = {c.badge for r in rows for c in r.tiles if c.badge not in (PLAIN, UNJUDGED)}
    shown |= {POSITIVE, NEGATIVE} if judged else set()
    order = [POSITIVE, NEGATIVE, IGNORED, *sorted(shown - {POSITIVE, NEGATIVE, IGNORED})]
    legend = tuple((b, badge_words(b)) for b in order if b in shown)
    caption = caption_lines(evaluations[0][1], top_k, show_ignored, width - 2 * g.margin, g,
                            judged)
    caption_rect = Rect(g.margin, y, width - 2 * g.margin, len(caption) * g.caption_line)
    height = y + caption_rect.h + g.margin
    legend_rect = Rect(g.margin, g.margin, width - 2 * g.margin, g.caption_line)
    rows = [_with_header_width(r, width - 2 * g.margin) for r in rows]
    return FigureLayout(width, height, tuple(rows), legend, legend_rect, tuple(caption),
                        caption_rect, g)


def badge_words(badge: int) -> str:
    """Return a badge's meaning for the legend (same-camera and other own badges included)."""
    from irviewer.view.result_list import GROUP_WORDS, OWN_BADGE_GROUPS

    if badge in BADGE_WORDS:
        return BADGE_WORDS[badge]
    group = next((k for k, v in OWN_BADGE_GROUPS.items() if v == badge), "")
    return f"ignored: {GROUP_WORDS.get(group, group)}"


def caption_lines(ev: Evaluation, top_k: int, show_ignored: bool, width: float,
                  g: Geometry, judged: bool = True) -> list[str]:
    """Return the caption, wrapped to ``width`` points: the dataset, the protocol and its
    source (what counts as positive), what is removed, the AP rule, the tie rule, and how
    ranks and ignored items are shown. Not ``judged`` (a curator's collection whose
    artworks have one photo each): the collection, what the rows show, and why nothing is
    marked right or wrong."""
    chars = g.width_chars or max(40, int(width / (g.small_font * 0.62)))
    if not judged:
        return _wrap(f"{ev.dataset.name}: each row is an artwork's photo and the {top_k} "
                     "artworks whose photos look most like it, most similar first. Its "
                     "artworks have one photo each, so nothing is marked right or wrong.",
                     chars)
    p = ev.protocol
    said = conventions(p, ["mAP"])
    text = (f"{ev.dataset.name}, protocol {p.name}: {p.source}. Removed before ranks are "
            f"counted: {removed_before_ranking(ev)}. "
            f"AP: {said['mAP']}. Ties: {said['ties']}. Top {top_k} results per row after "
            "the removals; #n is the rank the metric uses. "
            + ("Ignored items are shown where they ranked and take no rank. "
               if show_ignored else "Ignored items are not shown. ")
            + "Frame colour and badge shape: ✓ relevant, ✗ not relevant, – ignored "
            "(Okabe–Ito colours).")
    return _wrap(text, chars)


def removed_before_ranking(ev: Evaluation) -> str:
    """Return what the caption says each ranking loses before ranks are counted: the
    protocol's removed groups this dataset has (in words), the images removed for every
    query, and the query's own image by the self-match rule
    (:func:`irviewer.core.protocols.removals`, which says "nothing" only when nothing is)."""
    from irviewer.view.result_list import GROUP_WORDS

    ds, p = ev.dataset, ev.protocol
    words = [GROUP_WORDS.get(g, g) for g in p.ignored if g in ds.groups and ds.has_members(g)]
    if len(ds.global_ignored):
        words.append("the images removed for every query (junk ids, ignored labels)")
    return removals(words, p.self_match, ds.has_self_images)


def _with_header_width(row: FigureRow, width: float) -> FigureRow:
    from dataclasses import replace

    return replace(row, header_rect=Rect(row.header_rect.x, row.header_rect.y, width,
                                         row.header_rect.h))


def _wrap(text: str, chars: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > chars:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines


def describe_selection(queries: list[int], evaluations: list[tuple[str, Evaluation]]) -> str:
    """Return a sentence naming the figure's queries ("4 queries: a, b, c, ...")."""
    ds = evaluations[0][1].dataset
    return f"{counted(len(queries), 'query', 'queries')}: " + examples(
        (ds.queries[q].name for q in queries), 4)
