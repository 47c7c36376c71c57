"""The viewer's command line: ``irviewer [DATASET -d FILE ...] [--screenshot PATH]``, its
shared options from the one table (:mod:`irviewer.opening.options`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from irviewer.core.rerank.spec import help_text as spec_help
from irviewer.opening.options import METHODS, READER, add_dataset, add_options, refuse_old_name
from irviewer.opening.request import RESULTS_SHOWN, TOP_K_RANGE
from irviewer.version import __version__


def build_viewer_parser() -> argparse.ArgumentParser:
    """Return the parser of ``irviewer`` without a subcommand: the viewer window."""
    parser = argparse.ArgumentParser(
        prog="irviewer",
        description="Open the viewer (on the built-in museum demo without a dataset). "
        "For headless scoring see: irviewer eval --help")
    parser.add_argument("--version", action="version", version=f"irviewer {__version__}")
    add_dataset(parser, "dataset file or folder (or a .irv session)")
    add_options(parser, "demo", *METHODS, *READER, "protocol", "ap", "rerank", "ann",
                "ann_names", "engine", "collection", "engine_names", "depth", "threads", help={
        "demo": "open the built-in museum demo (as without a DATASET), with its descriptor "
        "files unless -d or --ranking names others",
        "ranking": "precomputed rankings, one method each (TREC run, .npz indices, "
        ".results)",
        "rerank": "also each descriptor file F re-ranked by SPEC, as the method 'F + SPEC' "
        "after F; the window compares F with it (Compare with), query by query. "
        + spec_help()})
    parser.add_argument("--screenshot", type=Path, metavar="PATH",
                        help="render the window offscreen to a PNG and exit")
    parser.add_argument("--select", metavar="QUERY", help="query to show (with --screenshot)")
    parser.add_argument("--present", action="store_true",
                        help="start in presentation mode: full screen, the query and its "
                        "best matches large (Esc returns to the inspector)")
    parser.add_argument("--kiosk", action="store_true",
                        help="start as a kiosk for visitors: presentation full screen, "
                        "Esc, Alt+F4 and the menus do nothing, staff leave with "
                        "Ctrl+Alt+Shift+Q; the slideshow comes back after --idle seconds")
    parser.add_argument("--watch", type=Path, metavar="FOLDER",
                        help="with --kiosk: answer each photo put into FOLDER (default: the "
                        "folder set in View > Kiosk mode, if any)")
    parser.add_argument("--idle", type=int, metavar="SECONDS",
                        help="with --kiosk: back to the slideshow after SECONDS without input "
                        "(default 60, or as set in View > Kiosk mode)")
    low, high = TOP_K_RANGE
    parser.add_argument("--results", type=int, default=RESULTS_SHOWN, metavar="N",
                        help=f"results shown per query ({low} to {high})")
    refuse_old_name(parser, "--top-k", "--results N")
    return parser
