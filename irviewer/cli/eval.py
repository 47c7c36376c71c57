"""``irviewer eval``: score a dataset headless and print citable numbers, each with the
name of its convention."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from irviewer.core.errors import InputError
from irviewer.core.rerank.spec import help_text as spec_help
from irviewer.io.atomic import atomic_write_text
from irviewer.opening.options import (
    CONVENTIONS,
    METHODS,
    READER,
    add_dataset,
    add_options,
    at_most_one,
    dataset_problem,
    refuse_old_name,
    request_from_args,
    window_corrections_note,
)
from irviewer.reports.eval_document import eval_document
from irviewer.reports.eval_report import format_table, report_json, write_per_query_csv

NAME = "eval"
HELP = "score a dataset with a descriptor file, headless"
DESCRIPTION = ("Rank the gallery for every query by cosine similarity and print the "
               "benchmark's metrics with their conventions.")
EPILOG = ("Every protocol and convention -- its formula, its source (paper and reference "
          "code), its default and when to switch it -- is described in docs/metrics.md in "
          "irviewer's source tree, beside the README.")


def add_arguments(ev: argparse.ArgumentParser) -> None:
    """Add ``irviewer eval``'s arguments to ``ev``."""
    add_dataset(ev)
    add_options(ev, "demo", *METHODS, *READER, *CONVENTIONS, "corrections", "rerank", "ann",
                "ann_names", "engine", "collection", "engine_names", "depth", "threads", help={
        "demo": "evaluate the built-in museum demo (with its strong descriptors unless -d or "
        "--ranking names another method)",
        "descriptors": "the descriptor file: .npz, .npy, .fvecs, .mat or .h5, or an "
        "hpatches-benchmark descriptors/<name> folder of <sequence>/<type>.csv; several "
        "-d (and --ranking) score several methods, one row each (irviewer compare tests "
        "their differences)",
        "ranking": "precomputed result lists instead of descriptors: a TREC run (qid Q0 "
        "docid rank score tag), an .npz with indices (and scores) or an HPatches .results; "
        "scored after the -d methods",
        "protocol": "protocol to use instead of the dataset's default(s)",
        "depth": "how many results per query are kept (the lists --export-trec and "
        "--write-results write); the ranks of positives are exact at any depth",
        "rerank": "score each descriptor file's ranking re-ranked by SPEC instead of the plain "
        "one (several SPECs: one method each); the report names every parameter and its "
        "source, docs/rerank.md defines each method. " + spec_help(),
        "ann": "score each descriptor file's ranking by an approximate index instead of the "
        "exact one, compared with the exact ranking query by query at the index's depth: "
        "a FAISS index factory "
        "string built from the gallery rows (IVF256,Flat, IVF1024,PQ32, HNSW32) or a FAISS "
        "index file built over them in the file's order, search parameters after a colon "
        "(:nprobe=8, :efSearch=64); a comma list of values sweeps them (:nprobe=1,2,4,8) "
        "and the report gives each setting's mAP, recall and time. Needs irviewer[ann]; "
        "docs/ann.md",
    })
    refuse_old_name(ev, "--top-k", "--depth N")
    ev.add_argument("--json", type=Path, metavar="OUT", help="write results as JSON")
    ev.add_argument("--conventions", action="store_true",
                    help="also score the ranking under every convention irviewer knows "
                    "(finite-sum, trapezoid, all-point and 11-point interpolated AP, AP over "
                    "the positives within the list, the query's own image kept or removed, "
                    "true P@k and revisitop's mP@k), each with its source, the protocol's "
                    "own marked; in the JSON as all_conventions")
    ev.add_argument("--scores", action="store_true",
                    help="also count the score of every (query, gallery image) pair the "
                    "protocol does not ignore: the positive and negative pairs' histograms "
                    "and TAR at FAR = 1e-4, 1e-3, 1e-2 with their thresholds (in the table "
                    "and as each evaluation's 'scores' member of --json). It multiplies "
                    "every query with the gallery again, about as long as the ranking "
                    "itself (docs/metrics.md); a ranking read from a file cannot")
    ev.add_argument("--per-query", type=Path, metavar="OUT.csv",
                    help="write one CSV row per query")
    ev.add_argument("--write-results", type=Path, metavar="OUT.results",
                    help="HPatches: write the ranking as a .results submission file")
    ev.add_argument("--export-trec", type=Path, metavar="PREFIX",
                    help="write PREFIX.<protocol>.run and PREFIX.<protocol>.qrels, with which "
                    "trec_eval or ranx reproduce the finite-sum mAP")
    ev.add_argument("--export-csv", type=Path, metavar="PREFIX",
                    help="write PREFIX.<protocol>.csv: every evaluated query's ranked list "
                    "as the TREC run lists it, one row per result: query, rank, image, "
                    "score, relevance")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Check ``args`` and evaluate; return the exit code."""
    problem = dataset_problem(args)
    if problem:
        parser.error(problem)
    at_most_one(args, ("protocol",), "protocol")
    return run_eval(args)


def run_eval(args: argparse.Namespace) -> int:
    """Evaluate as ``irviewer eval`` asks, through the one opening path
    (:mod:`irviewer.opening.opener`); return the exit code. The methods scored are
    :meth:`Opened.reported`'s: every derived method (one per file and derivation, a sweep's
    every setting) when ``--rerank``, ``--ann`` or ``--engine`` asks for them, else every
    file's plain method. The document is :func:`irviewer.reports.eval_document.
    eval_document`'s, as :func:`irviewer.evaluate` gives it."""
    from irviewer.formats.collection import NAME as COLLECTION
    from irviewer.formats.collection import artworks_with_views, nothing_to_score
    from irviewer.formats.trec import write_qrels, write_trec_run
    from irviewer.opening.opener import open_now

    request = request_from_args(args, demo_methods=1)
    opened = open_now(request)
    note = window_corrections_note(request, "scores")
    if note:
        print(f"note: {note}", file=sys.stderr)
    dataset = opened.dataset
    if dataset.format == COLLECTION and not artworks_with_views(dataset):
        print(nothing_to_score(dataset))  # a curator's collection, not an error: exit 0
        return 0
    methods = opened.reported()
    if len(methods) > 1:
        for flag, given in (("--write-results", args.write_results),
                            ("--export-trec", args.export_trec),
                            ("--export-csv", args.export_csv)):
            if given is not None:
                raise InputError(f"{flag} writes one method's results; {len(methods)} "
                                 f"methods were scored ({', '.join(m.name for m in methods)}); "
                                 "give one -d or --ranking, and one setting")
    document = eval_document(opened, args.ap, args.self_match,
                             every_convention=args.conventions, pair_scores=args.scores)
    report, methods = document.report, document.methods
    print(format_table(report))
    method, evaluations = methods[0], document.scored[0].evaluations
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
    if args.export_csv is not None:
        from irviewer.formats.ranked_csv import write_ranked_csv

        for ev in evaluations:
            write_ranked_csv(Path(f"{args.export_csv}.{ev.protocol.name}.csv"), ev)
    if args.json is not None:
        atomic_write_text(args.json, report_json(report))
    if args.per_query is not None:
        write_per_query_csv(args.per_query, report)
    return 0

