"""The ``irviewer`` command line: the viewer without a subcommand, headless subcommands
otherwise (``irviewer eval``; every subcommand is a module of this package).

Exit codes: 0 success; 2 bad input (one line on stderr, a sentence the user can act on);
1 an internal error (a bug: the traceback is printed so it can be reported).

A subcommand module has ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args, parser) -> int``; it is listed once in :data:`COMMANDS`. A module with
``INTERMIXED = True`` takes options between its positional arguments (``irviewer search
DATASET -d F PHOTO ...``: argparse's intermixed parsing). Subcommands that do
not paint never import Qt (``tests/test_architecture.py``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from types import ModuleType

from irviewer.core.errors import InputError
from irviewer.version import __version__

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT = 0, 1, 2

#: Subcommand modules, in the order ``irviewer --help`` lists them.
COMMANDS: tuple[str, ...] = ("eval", "compare", "figure", "apply-corrections", "audit",
                              "search", "index")


def command_module(name: str) -> ModuleType:
    """Return the module that implements subcommand ``name``."""
    return importlib.import_module(f"irviewer.cli.{name.replace('-', '_')}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Return the argument parser of the ``irviewer`` subcommands; with ``only``, of that
    one subcommand alone (so running a command imports no other command's module)."""
    parser = argparse.ArgumentParser(
        prog="irviewer",
        description="Inspect and score image retrieval with each benchmark's own conventions. "
        "Without a subcommand, opens the viewer (irviewer DATASET -d FILE ...).")
    parser.add_argument("--version", action="version", version=f"irviewer {__version__}")
    sub = parser.add_subparsers(dest="command")
    for name in COMMANDS if only is None else (only,):
        module = command_module(name)
        p = sub.add_parser(name, help=module.HELP, description=module.DESCRIPTION,
                           epilog=getattr(module, "EPILOG", None),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(p)
        p.set_defaults(_module=module, _parser=p)
    return parser


def entry() -> None:
    """The process's entry point (the ``irviewer`` script and ``python -m irviewer``): run
    :func:`main` and exit with its code.

    A ``--screenshot`` run ends as soon as its PNG is written, without the interpreter's
    teardown: destroying the Qt and pyqtgraph objects and unloading Qt takes about 0.2 s
    of a Market-1501-sized run and is where PySide6's rare exit-time crashes happen, while
    nothing is left to write (the PNG is saved and closed, no session is kept, and the
    standard streams are flushed here).
    """
    try:
        code = main()
        sys.stdout.flush()  # here, so that a reader gone (| head) is seen as such
    except BrokenPipeError:
        code = _reader_gone()
    if _screenshot_written:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    raise SystemExit(code)


def _reader_gone() -> int:
    """The reader of the standard output closed the pipe (``irviewer --help | head``):
    not an error of ours. Point stdout at the null device, so the interpreter's last flush
    prints no traceback either, and return :data:`EXIT_OK`."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_OK


#: Set when this process rendered the window to a PNG (see :func:`entry`).
_screenshot_written = False


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        if argv[:1] in (["-h"], ["--help"]):
            build_parser().print_help()
            print("\nThe viewer's own options: irviewer DATASET --help-viewer")
            return EXIT_OK
        return _run_viewer(argv)
    parser = build_parser(only=argv[0])
    args, extra = parser.parse_known_args(argv)
    if extra and getattr(args._module, "INTERMIXED", False):  # DATASET -d F PHOTO ...
        args = args._parser.parse_intermixed_args(argv[1:])
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return guarded(lambda: _run_command(args), args._parser)


def _run_command(args: argparse.Namespace) -> int:
    """Run the parsed subcommand with its threads capped (``--threads``, else
    ``IRVIEWER_THREADS``, else the cores this process may use:
    :func:`irviewer.core.parallel.limited_threads`); return its exit code."""
    from irviewer.core.parallel import limited_threads
    from irviewer.core.threads import requested_threads

    with limited_threads(requested_threads(getattr(args, "threads", None))):
        return int(args._module.run(args, args._parser))


def guarded(work: Callable[[], int], parser: argparse.ArgumentParser | None = None) -> int:
    """Run ``work()`` and return its exit code, turning bad input into exit 2 with one line
    (worded for the command whose parser is ``parser``: the options it takes) and a bug
    into exit 1 with the traceback."""
    try:
        return work()
    except InputError as e:
        from irviewer.opening.options import for_command

        print(f"irviewer: error: {for_command(e, parser)}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("irviewer: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader closed the pipe (| head): not an error of ours
        return _reader_gone()
    except Exception:  # a bug: show everything needed to report it
        traceback.print_exc()
        print(f"irviewer {__version__}: internal error (a bug, not your input); please report "
              "it with the traceback above", file=sys.stderr)
        return EXIT_INTERNAL


def check_rerank(args: argparse.Namespace, session: bool) -> None:
    """Return None when the viewer's ``--rerank`` SPECs parse and have descriptor files to
    re-rank; InputError (one sentence) otherwise. A session keeps its own re-ranked
    methods, so it takes none."""
    from irviewer.opening.opener import check_plan
    from irviewer.opening.options import OPTIONS, request_from_args
    from irviewer.opening.request import with_default_method

    if session:
        raise InputError(f"a session reopens its own methods, re-ranked ones included; "
                         f"give {OPTIONS['rerank'].flag} with a DATASET and its -d files")
    request = with_default_method(request_from_args(args))
    if request.sources():
        check_plan(request)


def kiosk_problem(args: argparse.Namespace) -> str | None:
    """Return the sentence that refuses the viewer's kiosk options, or None when they are
    fine: --watch and --idle go with --kiosk, the folder must exist, the idle time is in
    :data:`~irviewer.view.presentation.IDLE_RANGE_S`."""
    if not args.kiosk:
        if args.watch is not None or args.idle is not None:
            return "--watch and --idle set up a kiosk: add --kiosk"
        return None
    if args.watch is not None and not args.watch.is_dir():
        return (f"--watch {args.watch}: no such folder; give the folder visitors' photos "
                "arrive in")
    from irviewer.view.presentation import IDLE_RANGE_S

    low, high = IDLE_RANGE_S
    if args.idle is not None and not low <= args.idle <= high:
        return f"--idle {args.idle}: give a number of seconds from {low} to {high}"
    return None


def _run_viewer(argv: list[str]) -> int:
    from irviewer.cli.viewer import build_viewer_parser
    from irviewer.core.parallel import limited_threads
    from irviewer.core.threads import requested_threads
    from irviewer.opening.options import at_most_one, dataset_problem, for_command
    from irviewer.opening.request import SESSION_SUFFIX

    if "--help-viewer" in argv:
        argv = ["--help"]
    parser = build_viewer_parser()
    gui_args = parser.parse_args(argv)
    session = gui_args.dataset is not None and gui_args.dataset.suffix == SESSION_SUFFIX
    names_data = (gui_args.dataset, gui_args.demo, gui_args.descriptors, gui_args.ranking)
    problem = None if session or not any(names_data) else dataset_problem(gui_args)
    problem = problem or kiosk_problem(gui_args)
    threads = None
    try:
        threads = requested_threads(gui_args.threads)
        at_most_one(gui_args, ("protocol",), "protocol", "the window shows one at a time")
        if gui_args.rerank and not problem:
            check_rerank(gui_args, session)
    except InputError as e:
        problem = for_command(e, parser)
    if problem:
        print(f"irviewer: error: {problem}", file=sys.stderr)
        return EXIT_INPUT
    if gui_args.screenshot is not None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        from irviewer.gui.app import run
    except ImportError as e:
        print(f"irviewer: error: the viewer needs Qt ({e}); irviewer eval works without",
              file=sys.stderr)
        return EXIT_INPUT
    try:
        with limited_threads(threads):
            code = run(gui_args)
    except InputError as e:
        print(f"irviewer: error: {for_command(e, parser)}", file=sys.stderr)
        return EXIT_INPUT
    if gui_args.screenshot is not None:
        global _screenshot_written
        _screenshot_written = True
    return code
