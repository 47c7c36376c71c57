"""The viewer's command line: ``irviewer [DATASET -d FILE ...] [--screenshot PATH]``."""

from __future__ import annotations

import argparse
from pathlib import Path

from irviewer import __version__
from irviewer.cli.common import add_reader_options


def build_viewer_parser() -> argparse.ArgumentParser:
    """Return the parser of ``irviewer`` without a subcommand: the viewer window."""
    parser = argparse.ArgumentParser(
        prog="irviewer",
        description="Open the viewer (on the built-in museum demo without a dataset). "
        "For headless scoring see: irviewer eval --help")
    parser.add_argument("--version", action="version", version=f"irviewer {__version__}")
    parser.add_argument("dataset", type=Path, nargs="?",
                        help="dataset file or folder (or a .irv session)")
    parser.add_argument("-d", "--descriptors", type=Path, nargs="+", default=[],
                        metavar="FILE", help="descriptor files, one method each")
    parser.add_argument("--ranking", type=Path, nargs="+", default=[], metavar="FILE",
                        help="precomputed rankings (TREC run, .npz indices, .results)")
    add_reader_options(parser)
    parser.add_argument("--protocol", help="protocol to use instead of the dataset's default(s)")
    parser.add_argument("--screenshot", type=Path, metavar="PATH",
                        help="render the window offscreen to a PNG and exit")
    parser.add_argument("--select", metavar="QUERY", help="query to show (with --screenshot)")
    parser.add_argument("--present", action="store_true",
                        help="start in presentation mode: full screen, the query and its "
                        "best matches large (Esc returns to the inspector)")
    parser.add_argument("--results", type=int, default=50, metavar="N",
                        help="results shown per query (10 to 200)")
    parser.add_argument("--top-k", dest="results", type=int, default=argparse.SUPPRESS,
                        help=argparse.SUPPRESS)  # the old name of --results
    return parser
