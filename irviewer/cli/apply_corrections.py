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
               "Scoring the written copy gives the numbers of eval --corrections.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``irviewer apply-corrections``' arguments to ``parser``."""
    add_dataset(parser, "the published dataset (file or folder)", optional=False)
    add_options(parser, "corrections", required=("corrections",),
                help={"corrections": "the corrections file to apply"})
    parser.add_argument("--out", type=Path, required=True, metavar="PATH",
                        help="where to write the corrected ground truth (a .csv, .pkl, "
                        ".dat/.txt file, or a folder for Oxford/Paris gt_files)")
    add_options(parser, *READER)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Apply the corrections and write the corrected copy; return the exit code."""
    from irviewer.formats.corrected import write_corrected
    from irviewer.opening.opener import open_ground_truth

    dataset, loaded = open_ground_truth(request_from_args(args))
    assert loaded is not None
    written, notes = write_corrected(dataset, args.out)
    print(f"{len(loaded.log)} corrections from {args.corrections} applied, "
          f"{len(loaded.log.changed_queries())} queries changed; {written}")
    for note in (*loaded.notes(), *notes):
        print(f"note: {note}", file=sys.stderr)
    return 0
