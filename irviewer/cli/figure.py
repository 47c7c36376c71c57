"""``irviewer figure``: ranked results of chosen queries as a figure for a paper (vector PDF or
SVG, or a 300 dpi PNG), one row per query and method. Paints with Qt, imported only here,
on the offscreen platform when there is no display."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from irviewer.core.errors import InputError
from irviewer.opening.options import (
    CONVENTIONS,
    METHODS,
    READER,
    add_dataset,
    add_options,
    at_most_one,
    dataset_problem,
    request_from_args,
)
from irviewer.view.figure_formats import FORMATS_TEXT, figure_suffix

NAME = "figure"
HELP = "draw the ranked results of chosen queries as a PDF, SVG or PNG figure"
DESCRIPTION = ("One row per query (and per method when two are given): the query image with "
               "its box, its top K results with relevance frames and badges, ranks, "
               "optional scores, the query's AP, and a caption naming the protocol and its "
               "conventions.")
#: The application this command started (kept alive while it paints).
_APP: list[object] = []

EPILOG = ("Choose the queries with one of --queries, --worst, --best, --largest-changes "
          "(worst and best by AP under the first method). See docs/figures.md.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``irviewer figure``'s arguments to ``p``."""
    add_dataset(p)
    add_options(p, "demo", *METHODS, *READER, *CONVENTIONS, "rerank", "ann", "ann_names",
                "engine", "collection", "engine_names", "depth", "threads", help={
        "demo": "the built-in museum demo, with strong.npz and weak.npz unless -d or "
        "--ranking names others",
        "descriptors": "descriptor files, one method each (one or two methods)",
        "ranking": "precomputed rankings, one method each (after the -d methods)",
        "protocol": "the protocol to use instead of the dataset's first",
        "rerank": "also the descriptor file F re-ranked by SPEC, as the method 'F + SPEC' "
        "after F (-d F --rerank k-reciprocal draws plain beside re-ranked; docs/rerank.md)",
        "ann": "also the descriptor file F searched by an approximate index, as the method "
        "'F + SETTING' after F (-d F --ann IVF256,Flat:nprobe=8 draws exact beside "
        "approximate); with --sweep, a comma list of values (:nprobe=1,2,4,8) draws mAP "
        "against search time per query (docs/ann.md)"})
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--queries", nargs="+", metavar="Q",
                       help="queries by name (or by unique file name)")
    which.add_argument("--worst", type=int, metavar="N",
                       help="the N queries with the lowest AP under the first method")
    which.add_argument("--best", type=int, metavar="N",
                       help="the N queries with the highest AP under the first method")
    which.add_argument("--largest-changes", type=int, metavar="N",
                       help="the N queries whose AP changes most between the two methods")
    which.add_argument("--sweep", action="store_true",
                       help="instead of ranked results: an --ann sweep's mAP against search "
                       "time per query, one point per setting, the exact mAP as a line")
    p.add_argument("--top", type=int, default=8, metavar="K",
                   help="results per row (default 8)")
    p.add_argument("--scores", action="store_true", help="print each result's score")
    p.add_argument("--show-ignored", action="store_true",
                   help="show ignored items (junk, the query itself) where they ranked")
    p.add_argument("--label", action="append", default=[], metavar="NAME",
                   help="a method's name in the figure, in method order (repeatable)")
    p.add_argument("--out", type=Path, required=True, metavar="FIG",
                   help=f"the figure: {FORMATS_TEXT}")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Draw the figure ``args`` asks for; return the exit code."""
    from irviewer.view.figure import describe_selection, layout_figure, select_queries

    figure_suffix(args.out)
    if args.sweep:
        return run_sweep(args, parser)

    n_methods = (len(request_from_args(args, demo_methods=2).plan())
                 if args.dataset is not None or args.demo else 0)
    if n_methods > 2 or (not args.demo and n_methods == 0):
        also = ", each -d once more per --rerank" if args.rerank else ""
        raise InputError(f"a figure shows one or two methods (-d / --ranking{also}), not "
                         f"{n_methods}")
    at_most_one(args, ("protocol",), "protocol", "a figure shows one protocol")
    problem = dataset_problem(args, methods=False)
    if problem:
        parser.error(problem)
    from irviewer.opening.opener import open_now

    opened = open_now(request_from_args(args))
    protocol = args.protocol[0] if args.protocol else opened.protocols[0]
    methods = list(opened.methods)
    if len(args.label) > len(methods):
        raise InputError(f"{len(args.label)} --label names for {len(methods)} methods")
    evaluations = [(m, opened.evaluation(m, protocol, ap=args.ap, self_match=args.self_match))
                   for m in methods]
    paired = None
    if len(methods) == 2:
        both = opened.paired(methods[0], methods[1], protocol, args.ap, args.self_match)
        paired = (both.base, both.other)
    queries = select_queries(evaluations, queries=args.queries, worst=args.worst,
                             best=args.best, largest_changes=args.largest_changes,
                             paired=paired)
    layout = layout_figure(evaluations, queries, args.top, scores=args.scores,
                           show_ignored=args.show_ignored,
                           labels=dict(zip(methods, args.label, strict=False)))
    _ensure_gui()
    from irviewer.gui.figure_painter import export_figure

    export_figure(layout, args.out)
    print(f"wrote {args.out} ({layout.width:.0f} × {layout.height:.0f} pt, "
          f"{describe_selection(queries, evaluations)})")
    return 0


def run_sweep(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Draw ``--sweep``: one descriptor file searched by every setting of one swept --ann
    SPEC, or of a vector engine's swept search parameters (``--engine DB:nprobe=1,2,4``),
    mAP against search time per query; return the exit code."""
    from dataclasses import replace

    from irviewer.core.ann.engine_spec import parse_engine_spec
    from irviewer.core.ann.spec import parse_ann_spec
    from irviewer.opening.opener import open_now

    engine: str | None = getattr(args, "engine", None)
    swept_engine = engine is not None and bool(engine) and \
        len(parse_engine_spec(engine).settings()) > 1
    if swept_engine == bool(args.ann) or (args.ann and (
            len(args.ann) != 1 or not parse_ann_spec(args.ann[0]).is_sweep)):
        raise InputError("--sweep draws one --ann SPEC with a comma list of values, e.g. "
                         "--ann IVF256,Flat:nprobe=1,2,4,8, or one --engine with them, e.g. "
                         "--engine gallery.db:nprobe=1,2,4")
    at_most_one(args, ("protocol",), "protocol", "a figure shows one protocol")
    problem = dataset_problem(args, methods=False)
    if problem:
        parser.error(problem)
    request = request_from_args(args, demo_methods=1)
    if len(request.descriptors) != 1:
        raise InputError("--sweep searches one descriptor file (-d F)")
    opened = open_now(replace(request, rankings=()))
    protocol = args.protocol[0] if args.protocol else opened.protocols[0]
    from irviewer.opening.base_comparison import sweep_of
    from irviewer.view.sweep_view import sweep_view

    searched = [m.name for m in opened.methods.values() if m.ann is not None]
    what = args.ann[0] if args.ann else f"milvus:{request.collection}"
    index = parse_ann_spec(args.ann[0]).index if args.ann else what
    title = f"{opened.first.name} + {index}"
    view = sweep_view(sweep_of(opened, searched, protocol, args.ap, args.self_match), title)
    _ensure_gui()
    from irviewer.gui.sweep_painter import export_sweep

    export_sweep(view, args.out)
    print(f"wrote {args.out} ({len(view.rows)} settings of {what}, {protocol})")
    return 0


def _ensure_gui() -> None:
    """Start a QGuiApplication (fonts, painting) if none runs, offscreen without a display."""
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
            or sys.platform in ("win32", "darwin")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        from PySide6.QtGui import QGuiApplication
    except ImportError as e:
        raise InputError(f"irviewer figure paints with Qt, which is not available ({e})") \
            from None
    if QGuiApplication.instance() is None:
        _APP.append(QGuiApplication(["irviewer"]))
