"""``irviewer eval``: score a dataset headless and print citable numbers, each with the
name of its convention."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from irviewer.cli.common import add_reader_options, read_options
from irviewer.core.atomic import atomic_write_text
from irviewer.core.errors import InputError
from irviewer.reports.eval_report import (
    build_report,
    corrections_record,
    format_table,
    method_record,
    report_json,
    write_per_query_csv,
)

NAME = "eval"
HELP = "score a dataset with a descriptor file, headless"
DESCRIPTION = ("Rank the gallery for every query by cosine similarity and print the "
               "benchmark's metrics with their conventions.")
EPILOG = ("Every protocol and convention -- its formula, its source (paper and reference "
          "code), its default and when to switch it -- is described in docs/metrics.md in "
          "irviewer's source tree, beside the README.")


def add_arguments(ev: argparse.ArgumentParser) -> None:
    """Add ``irviewer eval``'s arguments to ``ev``."""
    ev.add_argument("dataset", type=Path, nargs="?",
                    help="dataset file or folder (e.g. a CSV manifest)")
    ev.add_argument("--demo", action="store_true",
                    help="evaluate the built-in museum demo (with its strong descriptors "
                    "unless -d names another file)")
    source = ev.add_mutually_exclusive_group()
    source.add_argument("-d", "--descriptors", type=Path,
                        help="descriptor file: .npz, .npy, .fvecs, .mat or .h5, or an "
                        "hpatches-benchmark descriptors/<name> folder of <sequence>/<type>.csv")
    source.add_argument("--ranking", type=Path,
                        help="precomputed result lists instead of descriptors: a TREC run "
                        "(qid Q0 docid rank score tag) or an .npz with indices (and scores)")
    add_reader_options(ev)
    ev.add_argument("--protocol", help="protocol to use instead of the dataset's default(s)")
    ev.add_argument("--ap", choices=("finite", "trapezoid"),
                    help="AP integration rule (default: the protocol's)")
    ev.add_argument("--self-match", choices=("keep", "remove"),
                    help="keep the query's own image in the ranking or remove it "
                    "(default: the protocol's)")
    ev.add_argument("--corrections", type=Path, metavar="FILE",
                    help="apply this label corrections file (query,item,label,...) to the "
                    "ground truth before scoring; the output says so (never applied unless "
                    "given, so a published number never changes silently)")
    ev.add_argument("--depth", type=int, default=200, metavar="N",
                    help="how many results per query are kept (the lists --export-trec and "
                    "--write-results write); the ranks of positives are exact at any depth")
    ev.add_argument("--top-k", dest="depth", type=int, default=argparse.SUPPRESS,
                    help=argparse.SUPPRESS)  # the old name of --depth
    ev.add_argument("--json", type=Path, metavar="OUT", help="write results as JSON")
    ev.add_argument("--per-query", type=Path, metavar="OUT.csv",
                    help="write one CSV row per query")
    ev.add_argument("--write-results", type=Path, metavar="OUT.results",
                    help="HPatches: write the ranking as a .results submission file")
    ev.add_argument("--export-trec", type=Path, metavar="PREFIX",
                    help="write PREFIX.<protocol>.run and PREFIX.<protocol>.qrels, with which "
                    "trec_eval or ranx reproduce the finite-sum mAP")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Check ``args`` and evaluate; return the exit code."""
    if args.demo:
        from irviewer.core.resources import resources_dir

        demo = resources_dir() / "demo"
        if args.dataset is not None:
            parser.error("--demo takes no DATASET argument")
        args.dataset = demo / "demo.csv"
        if args.descriptors is None and args.ranking is None:
            args.descriptors = demo / "strong.npz"
    elif args.dataset is None:
        parser.error("give a DATASET (or --demo)")
    elif args.descriptors is None and args.ranking is None:
        parser.error("give --descriptors FILE or --ranking FILE")
    return run_eval(args)


def run_eval(args: argparse.Namespace) -> int:
    """Evaluate as ``irviewer eval`` asks, through the one opening path
    (:mod:`irviewer.opening.opener`); return the exit code."""
    from irviewer.formats.trec import write_qrels, write_trec_run
    from irviewer.opening.opener import OpenRequest, open_now

    request = OpenRequest(args.dataset,
                          descriptors=(args.descriptors,) if args.descriptors else (),
                          rankings=(args.ranking,) if args.ranking else (),
                          format=args.format, options=read_options(args), k=args.depth,
                          protocol=args.protocol, ap=args.ap, self_match=args.self_match,
                          corrections=args.corrections)
    opened = open_now(request)
    dataset, method = opened.dataset, opened.first
    evaluations = [opened.evaluation(method.name, p, args.ap, args.self_match)
                   for p in opened.protocols]
    source = method_record(method)
    notes = (*dataset.notes, *method.notes)
    if opened.corrections is not None:
        source |= corrections_record(opened.corrections)
        notes += opened.corrections.notes()
    report = build_report(dataset, source, evaluations, notes=notes)
    print(format_table(report, dataset))
    if args.write_results is not None:
        if dataset.format != "hpatches":
            raise InputError("--write-results writes HPatches .results files; this dataset "
                             f"is {dataset.format}")
        from irviewer.formats.hpatches import write_hpatches_results

        write_hpatches_results(args.write_results, dataset, method.ranking)
    if args.export_trec is not None:
        for ev in evaluations:
            stem = f"{args.export_trec}.{ev.protocol.name}"
            for note in write_trec_run(Path(f"{stem}.run"), ev):
                print(f"note: {note}", file=sys.stderr)
            write_qrels(Path(f"{stem}.qrels"), ev)
    if args.json is not None:
        atomic_write_text(args.json, report_json(report))
    if args.per_query is not None:
        write_per_query_csv(args.per_query, report)
    return 0
