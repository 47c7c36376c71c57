"""Command-line pieces every subcommand shares: the dataset reader's options and the
request they build for the one opening path (:mod:`irviewer.opening.opener`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from irviewer.formats.base import ReadOptions, read_name_list


def add_reader_options(parser: argparse.ArgumentParser) -> None:
    """Add the dataset reader's options (``--format``, ``--images``, ``--row-names``,
    ``--instance-rule``, ``--distractors``, ignore labels, ``--keep-orphans``) to ``parser``."""
    parser.add_argument("--format", help="dataset reader to use instead of detecting it")
    parser.add_argument("--images", type=Path, help="folder with the image files")
    parser.add_argument("--row-names", type=Path, metavar="FILE",
                        help="text file naming the descriptor rows, one image per line, for "
                        ".fvecs/.npy files that carry no names; ground truth that does not "
                        "list its gallery (Oxford5k gt_files) takes these names as the gallery")
    parser.add_argument("--instance-rule", metavar="RULE",
                        help="instance sets named by file: dash (text before the first -), "
                        "underscore2 (first two _ fields) or a regular expression whose first "
                        "group is the instance label")
    parser.add_argument("--distractors", type=Path, metavar="FILE",
                        help="text file of extra gallery names (the revisited 1M distractors)")
    parser.add_argument("--ignore-label", action="append", default=[], metavar="LABEL",
                        help="instance label whose images take no part (repeatable)")
    parser.add_argument("--ignore-labels", type=Path, metavar="FILE",
                        help="file with one instance label to ignore per line")
    parser.add_argument("--keep-orphans", action="store_true",
                        help="keep queries whose instance has no gallery image (reported as "
                        "skipped) instead of removing them")


def read_options(args: argparse.Namespace) -> ReadOptions:
    """Return the reader options that :func:`add_reader_options`' arguments name."""
    ignore = list(getattr(args, "ignore_label", []) or [])
    if getattr(args, "ignore_labels", None) is not None:
        ignore += read_name_list(args.ignore_labels)
    return ReadOptions(images=args.images, ignore_labels=tuple(ignore),
                       drop_orphans=not getattr(args, "keep_orphans", False),
                       distractors=getattr(args, "distractors", None),
                       instance_rule=args.instance_rule,
                       row_names=getattr(args, "row_names", None))

