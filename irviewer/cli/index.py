"""``irviewer index``: turn a folder of photos into a collection that every command opens
without a descriptor file."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from irviewer.collection.describing import PROCESSES, THREADS
from irviewer.core.threads import ENV as THREADS_ENV
from irviewer.opening.options import THREADS_HELP, thread_count

NAME = "index"
HELP = "turn a folder of photos into a collection (one photo or one subfolder per artwork)"
DESCRIPTION = ("Describe every photo in PHOTOS and write a collection to COLLECTION: a "
               "manifest of the photos (referenced, not copied), their descriptors, what "
               "the extractor learnt from them and a record of how it was made. PHOTOS holds "
               "one photo per artwork (its id is the file name without the extension) or one "
               "subfolder per artwork (its photos are views of it). Run it again on the "
               "same folders to add new or changed photos; removed ones are dropped.")
EPILOG = """examples:
  irviewer index photos/ --out our-collection
  irviewer index photos/ --out our-collection --titles titles.csv
  irviewer our-collection                      # open it in the window
  irviewer our-collection --present            # present it
  irviewer search our-collection visitor.jpg   # which artwork is this?

TITLES.csv: the first line names the columns; the first column is the artwork id, the others
(title, artist, year, room, ...) are shown wherever the artwork is shown. A photo that cannot
be used (broken, empty, not an image, a decompression bomb) is skipped with one line; the
exit code is 2 only when no photo at all could be indexed."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``irviewer index``'s arguments to ``p``."""
    p.add_argument("photos", type=Path, metavar="PHOTOS",
                   help="the folder of photos: one per artwork, or one subfolder per artwork")
    p.add_argument("--out", type=Path, required=True, metavar="COLLECTION",
                   help="the collection folder to write (new, empty, or a collection to "
                   "update)")
    p.add_argument("--titles", type=Path, metavar="TITLES.csv",
                   help="CSV: artwork id, then title, artist, year, room, ... (first line: "
                   "the column names)")
    p.add_argument("--extractor", metavar="NAME",
                   help="extractor that describes the photos (default: demo-vlad, with a "
                   "vocabulary learnt from the photos; any installed irviewer.extractors "
                   "entry point)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="photos described at once (default: one per thread --threads "
                   "allows, else one per core this process may use); at most --threads")
    p.add_argument("--describe-in", choices=(PROCESSES, THREADS), default=PROCESSES,
                   help="describe the photos in worker processes (the default: each one "
                   "thread) or in threads of this process")
    p.add_argument("--threads", type=thread_count, metavar="N", nargs="?", const=None,
                   default=None, action=_Threads, help=THREADS_HELP)


class _Threads(argparse.Action):
    """``--threads N``; ``--threads`` without a number, the switch it once was (describe in
    threads of this process), is refused with one line naming what replaced it, so an old
    script never runs with another meaning."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        if values is None:
            parser.exit(2, "irviewer: error: --threads takes a number now (--threads N caps "
                           "the threads); to describe in threads of this process, as "
                           "--threads alone did, use --describe-in threads\n")
        setattr(namespace, self.dest, values)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Index the photos with a progress bar on stderr; return the exit code. This process
    keeps the memory a photo frees for the next, as the worker processes do
    (:func:`irviewer.io.allocator.keep_freed_memory`): with ``--describe-in threads`` or one
    worker it describes the photos itself. ``--workers`` more than the threads a cap
    (``--threads``, ``IRVIEWER_THREADS``) allows is refused."""
    from irviewer.cli.progress import ProgressBar
    from irviewer.collection.describing import SERIAL
    from irviewer.collection.indexing import IndexRequest, answers_line, iter_index
    from irviewer.core import parallel
    from irviewer.core.errors import command_line_text
    from irviewer.core.threads import requested_threads
    from irviewer.io.allocator import keep_freed_memory

    keep_freed_memory()
    if args.workers is not None and args.workers < 1:
        parser.error(f"--workers must be at least 1, not {args.workers}")
    cap = requested_threads(args.threads)
    if cap is not None and args.workers is not None and args.workers > cap:
        by = "--threads" if args.threads is not None else THREADS_ENV
        parser.error(f"--workers {args.workers} describes {args.workers} photos at once, "
                     f"more than the {cap} thread{'s' if cap > 1 else ''} {by} allows; "
                     f"give --workers {cap} or "
                     "fewer, or allow more threads")
    workers = args.workers or parallel.WORKERS
    mode = SERIAL if workers == 1 else args.describe_in
    request = IndexRequest(args.photos, args.out, args.titles, args.extractor, mode,
                           workers)
    bar = ProgressBar()
    steps = iter_index(request)
    try:
        while True:
            step = next(steps)
            if step.problem is not None:
                bar.message(f"irviewer: skipped {step.problem}")
            bar.update(step.stage, step.done, step.total)
    except StopIteration as finished:
        indexed = finished.value
    finally:
        bar.close()
        steps.close()
    for line in indexed.lines:
        print(f"note: {command_line_text(line)}", file=sys.stderr)
    print(indexed.summary())
    if indexed.record.calibration is not None:
        print(answers_line(indexed.record.calibration))
    print(next_commands(indexed.collection))
    return 0


def next_commands(collection: Path) -> str:
    """Return the line that says how to open, present and search ``collection``: each
    command starts this very program (the desktop app has no ``irviewer`` on the PATH:
    :func:`irviewer.io.program.program_command`) and is quoted for the shell (a folder
    named "our collection" is one argument when the line is pasted)."""
    from irviewer.io.program import program_command

    out, program = shlex.quote(str(collection)), program_command()
    return (f"open it: {program} {out}   present it: {program} {out} --present   "
            f"search it: {program} search {out} PHOTO")
