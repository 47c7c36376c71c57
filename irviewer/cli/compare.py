"""``irviewer compare``: two or more methods on the same queries, query by query, with the
statistics a reviewer asks for (paired t, paired randomization, bootstrap interval, Holm)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from irviewer.core.paired import PERMUTATIONS
from irviewer.core.rerank.spec import help_text as spec_help
from irviewer.io.atomic import atomic_write_text
from irviewer.opening.options import (
    CONVENTIONS,
    METHODS,
    READER,
    add_dataset,
    add_options,
    dataset_problem,
    request_from_args,
)
from irviewer.reports.compare_report import LISTED_CHANGES

if TYPE_CHECKING:
    from irviewer.opening.opener import Opened

NAME = "compare"
HELP = "compare methods query by query, with significance tests, headless"
DESCRIPTION = ("Pair two or more methods' per-query values on the queries both evaluated "
               "and test the mean difference. The first method is the baseline.")
EPILOG = ("Tests: two-sided paired t-test (scipy.stats.ttest_1samp of the deltas); paired "
          "randomization test of the per-query deltas' signs (exact up to 16 queries); 95 % "
          "percentile bootstrap interval of the mean delta (10,000 resamples); with three "
          "or more methods, Holm-Bonferroni adjusted randomization p-values. See "
          "docs/compare.md.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``irviewer compare``'s arguments to ``p``."""
    add_dataset(p)
    add_options(p, "demo", *METHODS, *READER, *CONVENTIONS, "rerank", "ann", "ann_names",
                "engine", "collection", "engine_names", "depth", "threads", help={
        "demo": "the built-in museum demo: strong.npz (baseline) against weak.npz unless -d "
        "or --ranking names others",
        "descriptors": "descriptor files, one method each (the first method is the "
        "baseline)",
        "ranking": "precomputed rankings, one method each (after the -d methods)",
        "protocol": "protocols to use instead of the dataset's default(s)",
        "rerank": "also each descriptor file F re-ranked by SPEC, as the method 'F + SPEC' "
        "right after F, so -d F --rerank k-reciprocal pairs plain against re-ranked "
        "(docs/rerank.md). " + spec_help(),
        "ann": "also each descriptor file F searched by an approximate index, one method "
        "'F + SETTING' per setting right after F, so -d F --ann IVF256,Flat:nprobe=8 pairs "
        "exact against approximate: a FAISS index factory string or index file, search "
        "parameters after a colon, a comma list sweeps them (docs/ann.md; irviewer[ann]); "
        "an approximate method is compared with its exact one on the first --depth results "
        "of both",
        "depth": "how many results per query are kept; a method that stops at its lists "
        "(a precomputed ranking, an approximate index, a vector engine) is compared with "
        "another on the first results of both, at the shorter depth"})
    p.add_argument("--metric", default="AP",
                   help="per-query metric to compare: AP (default), P@1, P@5, CMC@1, INP, "
                   "R-precision, ... (the protocol's)")
    p.add_argument("--permutations", type=int, default=PERMUTATIONS, metavar="N",
                   help="random sign assignments of the randomization test beyond 16 "
                   f"queries (default {PERMUTATIONS:,})")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the randomization test and the bootstrap (default 0)")
    p.add_argument("--list", type=int, default=LISTED_CHANGES, metavar="N",
                   help="how many of the largest gains and of the largest losses the table "
                   f"lists (default {LISTED_CHANGES}; --json and --per-query have every "
                   "paired query)")
    p.add_argument("--json", type=Path, metavar="OUT", help="write the comparison as JSON")
    p.add_argument("--per-query", type=Path, metavar="OUT.csv",
                   help="write one CSV row per protocol, method and paired query")


def open_methods(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Opened:
    """Return the :class:`irviewer.opening.opener.Opened` that ``args`` name, through the one
    opening path; the demo opens its two descriptor files (strong first)."""
    from irviewer.opening.opener import open_now

    problem = dataset_problem(args, methods=False)
    if problem:
        parser.error(problem)
    return open_now(request_from_args(args))


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Compare the methods ``args`` name; return the exit code."""
    from irviewer.core.errors import InputError
    from irviewer.reports.compare_report import (
        build_compare_report,
        check_method_count,
        compare_opened,
        format_compare_table,
        write_compare_csv,
    )

    if not args.demo and args.dataset is not None:
        check_method_count(len(request_from_args(args).plan()))
    for value, what in ((args.permutations, "--permutations"), (args.list, "--list")):
        if value < (0 if what == "--list" else 1):
            raise InputError(f"{what} must be at least {0 if what == '--list' else 1}, "
                             f"not {value}")
    if args.protocol:
        from irviewer.core.protocols import get_protocol

        for name in args.protocol:
            get_protocol(name)  # an unknown name fails before the (long) opening
    opened = open_methods(args, parser)
    comparisons = compare_opened(opened, args.metric, args.protocol, args.ap,
                                 args.self_match, args.permutations, args.seed)
    report = build_compare_report(opened, comparisons)
    print(format_compare_table(report, args.list))
    if args.json is not None:
        atomic_write_text(args.json, json.dumps(report, indent=1, allow_nan=False) + "\n")
    if args.per_query is not None:
        write_compare_csv(args.per_query, comparisons)
    return 0
