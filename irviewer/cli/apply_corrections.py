"""``irviewer apply-corrections``: write the corrected ground truth in the benchmark's own
format, so a fix can be published (see docs/corrections.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from irviewer.opening.options import READER, add_dataset, add_options, request_from_args

NAME = "apply-corrections"
HELP = "write a dataset's ground truth with a corrections file applied, in its own format"
DESCRIPTION = ("Apply a label corrections file (query,item,label,author,time,note) to a "
               "dataset's published ground truth and write the result in the dataset's own "
               "format: CSV manifest -> CSV manifest; instance folders and re-id folders -> a "
               "CSV manifest (images never renamed); Oxford/Paris gt_files -> a gt_files "
               "folder; revisited Oxford/Paris -> a gnd .pkl; Holidays -> a name list. "
               "A published file changes only where a correction changes it (diff -r shows "
               "exactly the corrected lines); <out>.provenance.json beside the copy names every "
               "correction, its author, time and note, and the sha256 of the corrections file "
               "and of each published and written file. Scoring the written copy gives the "
               "numbers of eval --corrections.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``irviewer apply-corrections``' arguments to ``parser``."""
    add_dataset(parser, "the published dataset (file or folder)", optional=False)
    add_options(parser, "corrections",
                help={"corrections": "the corrections file to apply (default: the dataset's "
                      "own, the one the window writes)"})
    parser.add_argument("--out", type=Path, required=True, metavar="PATH",
                        help="where to write the corrected ground truth (a .csv, .pkl, "
                        ".dat/.txt file, or a folder for Oxford/Paris gt_files); a path that "
                        "holds anything but a previous corrected copy is refused")
    add_options(parser, *READER)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Apply the corrections and write the corrected copy; return the exit code."""
    from irviewer.formats.corrected import write_corrected
    from irviewer.opening.opener import open_ground_truth

    own = None
    if args.corrections is None:
        args.corrections = own = own_corrections(args.dataset)
    dataset, loaded = open_ground_truth(request_from_args(args))
    assert loaded is not None
    written, notes = write_corrected(dataset, args.out, loaded)
    print(f"{len(loaded.log)} corrections from {args.corrections} applied, "
          f"{len(loaded.log.changed_queries())} queries changed; {written}")
    if own is not None:
        notes.insert(0, f"no --corrections given: applied {own}, the dataset's own "
                     "corrections file (the one the window writes)")
    for note in (*loaded.notes(), *notes):
        print(f"note: {note}", file=sys.stderr)
    return 0


def own_corrections(dataset: Path) -> Path:
    """Return the corrections file the window reads and writes for ``dataset``
    (:func:`irviewer.formats.corrections_file.corrections_place`); InputError when it has
    none yet."""
    from irviewer.core.errors import InputError
    from irviewer.formats.corrections_file import corrections_place

    place = corrections_place(dataset)
    if place.existing is None:
        raise InputError(f"{dataset}: no corrections file given and the dataset has none yet "
                         f"(the window saves them to {place.path}); give --corrections FILE")
    return place.existing
