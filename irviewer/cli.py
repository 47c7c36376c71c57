"""Command line: ``irviewer eval`` scores a dataset headless and prints citable numbers.

Exit codes: 0 success; 2 bad input (one line on stderr, a sentence the user can act on);
1 an internal error (a bug: the traceback is printed so it can be reported).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import traceback
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from irviewer import __version__
from irviewer.core.atomic import atomic_open, atomic_write_text
from irviewer.core.errors import InputError

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``irviewer`` command."""
    parser = argparse.ArgumentParser(
        prog="irviewer",
        description="Inspect and score image retrieval with each benchmark's own conventions.")
    parser.add_argument("--version", action="version", version=f"irviewer {__version__}")
    sub = parser.add_subparsers(dest="command")
    ev = sub.add_parser("eval", help="score a dataset with a descriptor file, headless",
                        description="Rank the gallery for every query by cosine similarity "
                        "and print the benchmark's metrics with their conventions.")
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
    ev.add_argument("--format", help="dataset reader to use instead of detecting it")
    ev.add_argument("--protocol", help="protocol to use instead of the dataset's default(s)")
    ev.add_argument("--ap", choices=("finite", "trapezoid"),
                    help="AP integration rule (default: the protocol's)")
    ev.add_argument("--self-match", choices=("keep", "remove"),
                    help="keep the query's own image in the ranking or remove it "
                    "(default: the protocol's)")
    ev.add_argument("--images", type=Path, help="folder with the image files")
    ev.add_argument("--row-names", type=Path, metavar="FILE",
                    help="text file naming the descriptor rows, one image per line, for "
                    ".fvecs/.npy files that carry no names; ground truth that does not list "
                    "its gallery (Oxford5k gt_files) takes these names as the gallery")
    ev.add_argument("--instance-rule", metavar="RULE",
                    help="instance sets named by file: dash (text before the first -), "
                    "underscore2 (first two _ fields) or a regular expression whose first "
                    "group is the instance label")
    ev.add_argument("--distractors", type=Path, metavar="FILE",
                    help="text file of extra gallery names (the revisited 1M distractors)")
    ev.add_argument("--ignore-label", action="append", default=[], metavar="LABEL",
                    help="instance label whose images take no part (repeatable)")
    ev.add_argument("--ignore-labels", type=Path, metavar="FILE",
                    help="file with one instance label to ignore per line")
    ev.add_argument("--keep-orphans", action="store_true",
                    help="keep queries whose instance has no gallery image (reported as "
                    "skipped) instead of removing them")
    ev.add_argument("--top-k", type=int, default=200, help="depth of stored result lists")
    ev.add_argument("--json", type=Path, metavar="OUT", help="write results as JSON")
    ev.add_argument("--per-query", type=Path, metavar="OUT.csv",
                    help="write one CSV row per query")
    ev.add_argument("--write-results", type=Path, metavar="OUT.results",
                    help="HPatches: write the ranking as a .results submission file")
    ev.add_argument("--export-trec", type=Path, metavar="PREFIX",
                    help="write PREFIX.<protocol>.run and PREFIX.<protocol>.qrels, with which "
                    "trec_eval or ranx reproduce the finite-sum mAP")
    return parser


def build_gui_parser() -> argparse.ArgumentParser:
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
    parser.add_argument("--format", help="dataset reader to use instead of detecting it")
    parser.add_argument("--images", type=Path, help="folder with the image files")
    parser.add_argument("--instance-rule", metavar="RULE",
                        help="instance sets named by file: dash, underscore2 or a regex")
    parser.add_argument("--screenshot", type=Path, metavar="PATH",
                        help="render the window offscreen to a PNG and exit")
    parser.add_argument("--select", metavar="QUERY", help="query to show (with --screenshot)")
    parser.add_argument("--top-k", type=int, default=50, help="results shown per query")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] != ["eval"]:
        gui_args = build_gui_parser().parse_args(argv)
        if gui_args.screenshot is not None:
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        try:
            from irviewer.gui.app import run
        except ImportError as e:
            print(f"irviewer: error: the viewer needs Qt ({e}); irviewer eval works without",
                  file=sys.stderr)
            return EXIT_INPUT
        try:
            return run(gui_args)
        except InputError as e:
            print(f"irviewer: error: {e}", file=sys.stderr)
            return EXIT_INPUT
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.demo:
        from irviewer.paths import resources_dir

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
    try:
        return run_eval(args)
    except InputError as e:
        print(f"irviewer: error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("irviewer: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader closed the pipe (| head): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception:  # a bug: show everything needed to report it
        traceback.print_exc()
        print(f"irviewer {__version__}: internal error (a bug, not your input); please report "
              "it with the traceback above", file=sys.stderr)
        return EXIT_INTERNAL


def run_eval(args: argparse.Namespace) -> int:
    """Evaluate as ``irviewer eval`` asks; return the exit code."""
    from irviewer.core.descriptors import align, file_sha256
    from irviewer.core.evaluation import evaluate
    from irviewer.core.protocols import get_protocol
    from irviewer.core.ranking import rank
    from irviewer.formats.base import ReadOptions
    from irviewer.formats.descriptor_files import descriptor_names, read_descriptors
    from irviewer.formats.hpatches_tasks import NAME as TASKS
    from irviewer.formats.hpatches_tasks import iter_rank_tasks
    from irviewer.formats.rankings import read_ranking
    from irviewer.formats.registry import read_dataset
    from irviewer.formats.trec import write_qrels, write_trec_run

    ignore = list(args.ignore_label)
    if args.ignore_labels is not None:
        ignore += _read_label_list(args.ignore_labels)
    row_names = _read_label_list(args.row_names) if args.row_names else None
    gallery_names = tuple(row_names) if row_names else (
        descriptor_names(args.descriptors) if args.descriptors else None)
    options = ReadOptions(images=args.images, ignore_labels=tuple(ignore),
                          drop_orphans=not args.keep_orphans, distractors=args.distractors,
                          instance_rule=args.instance_rule,
                          gallery_names=gallery_names)
    dataset = read_dataset(args.dataset, args.format, options)
    if args.ranking is not None:
        ranking, notes = read_ranking(args.ranking, dataset)
        dataset = replace(dataset, notes=dataset.notes + notes)
        source = {"ranking": {"path": str(args.ranking), "depth": ranking.k,
                              "sha256": file_sha256(args.ranking),
                              "rule": "positives beyond a list were never retrieved"}}
    else:
        descriptors = read_descriptors(args.descriptors, gallery_names=dataset.gallery,
                                       query_names=tuple(q.name for q in dataset.queries),
                                       row_names=row_names)
        if dataset.format == TASKS:  # each query ranks its own pool (HPatches tasks)
            *_, (_, _, ranking) = iter_rank_tasks(dataset, descriptors, args.top_k)
        else:
            ranking = rank(align(descriptors, dataset), dataset, k=args.top_k)
        source = {"descriptors": {"path": str(descriptors.path), "dim": int(descriptors.dim),
                                  "sha256": descriptors.sha256}}
    names = [args.protocol] if args.protocol else list(dataset.protocols)
    evaluations = []
    for name in names:
        protocol = get_protocol(name).override(ap=args.ap, self_match=args.self_match)
        evaluations.append(evaluate(dataset, ranking, protocol))
    report = build_report(dataset, source, evaluations)
    print(format_table(report, dataset))
    if args.write_results is not None:
        if dataset.format != "hpatches":
            raise InputError("--write-results writes HPatches .results files; this dataset "
                             f"is {dataset.format}")
        from irviewer.formats.hpatches import write_hpatches_results

        write_hpatches_results(args.write_results, dataset, ranking)
    if args.export_trec is not None:
        for ev in evaluations:
            stem = f"{args.export_trec}.{ev.protocol.name}"
            for note in write_trec_run(Path(f"{stem}.run"), ev):
                print(f"note: {note}", file=sys.stderr)
            write_qrels(Path(f"{stem}.qrels"), ev)
    if args.json is not None:
        atomic_write_text(args.json, json.dumps(report, indent=1, allow_nan=False) + "\n")
    if args.per_query is not None:
        write_per_query_csv(args.per_query, report)
    return EXIT_OK


def _read_label_list(path: Path) -> list[str]:
    """Return the non-empty, non-comment lines of a text list (labels or image names)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: cannot read the list ({e.strerror})") from None
    return [line.strip() for line in text.splitlines() if line.strip()
            and not line.startswith("#")]


def _num(x: object) -> object:
    """Return a JSON-safe number: nan becomes null, numpy scalars become Python numbers."""
    if isinstance(x, (np.integer, int)) and not isinstance(x, bool):
        return int(x)
    if isinstance(x, (np.floating, float)):
        return None if math.isnan(float(x)) else float(x)
    return x


def build_report(dataset, source: dict, evaluations) -> dict:  # type: ignore[no-untyped-def]
    """Return the ``irviewer eval --json`` document (a stable schema other tools read).

    ``source`` is ``{"descriptors": {...}}`` or, for a precomputed ranking,
    ``{"ranking": {...}}`` (then ``descriptors`` is null).
    """
    from irviewer.core.evaluation import SKIP_REASON

    out_evals = []
    for ev in evaluations:
        queries = []
        for i, q in enumerate(dataset.queries):
            entry: dict[str, object] = {"name": q.name}
            skipped = ev.positives.n_positives[i] == 0
            for key, values in ev.per_query.items():
                value = values[i]
                if key == "first_positive_rank":
                    entry[key] = None if value < 0 else int(value) + 1
                elif key == "n_positives":
                    entry[key] = int(value)
                else:
                    entry[key] = None if skipped else _num(value)
            if skipped:
                entry["skipped"] = SKIP_REASON
            queries.append(entry)
        out_evals.append({
            "protocol": ev.protocol.describe(),
            "summary": {k: _num(v) for k, v in ev.summary.items()},
            "queries": queries,
            "removed_queries": [{"name": s.name, "reason": s.reason}
                                for s in dataset.skipped_queries],
        })
    return {
        "irviewer_version": __version__,
        "dataset": {"path": str(dataset.path), "format": dataset.format,
                    "n_queries": dataset.n_queries, "n_gallery": dataset.n_gallery,
                    "notes": list(dataset.notes)},
        "descriptors": source.get("descriptors"),
        **({"ranking": source["ranking"]} if "ranking" in source else {}),
        "evaluations": out_evals,
    }


def format_table(report: dict, dataset) -> str:  # type: ignore[no-untyped-def]
    """Return the human-readable table ``irviewer eval`` prints (values in percent)."""
    from irviewer.core.protocols import AP_SOURCES, TIES

    d, desc = report["dataset"], report["descriptors"]
    lines = [f"irviewer {report['irviewer_version']}",
             f"dataset      {d['path']} ({d['format']}): {d['n_queries']} queries, "
             f"{d['n_gallery']} gallery images"]
    if desc is not None:
        lines += [f"descriptors  {desc['path']} (dim {desc['dim']}, sha256 "
                  f"{desc['sha256'][:12]})",
                  f"ranking      cosine similarity of L2-normalised float32 vectors; "
                  f"ties: {TIES}"]
    else:
        r = report["ranking"]
        lines.append(f"ranking      precomputed lists {r['path']} (depth {r['depth']}, sha256 "
                     f"{r['sha256'][:12]}); {r['rule']}")
    lines += [f"note         {n}" for n in d["notes"]]
    for ev in report["evaluations"]:
        p, s = ev["protocol"], ev["summary"]
        self_rule = ("a query's own image, where it is in the gallery, is removed from its "
                     "ranking" if p["self_match"] == "remove" else
                     "a query's own image, where it is in the gallery, stays in the ranking")
        lines += ["", f"protocol {p['name']}: positive = {', '.join(p['positive'])}; "
                  f"removed = {', '.join(p['ignored']) or 'nothing'}; {self_rule}",
                  f"  source: {p['source']}",
                  f"  {'metric':<18}{'value %':>9}  convention"]
        for key, value in s.items():
            if key in ("n_evaluated", "n_skipped"):
                continue
            shown = "    n/a" if value is None else f"{100 * value:9.2f}"
            lines.append(f"  {key:<18}{shown}  {_convention(key, p, AP_SOURCES)}")
        lines.append(f"  queries: {s['n_evaluated']} evaluated, {s['n_skipped']} skipped "
                     "(no positive left)")
        for entry in ev["queries"]:
            if "skipped" in entry:
                lines.append(f"    skipped {entry['name']}: {entry['skipped']}")
        if ev["removed_queries"]:
            lines.append(f"  removed by the reader: {len(ev['removed_queries'])} queries")
            lines += [f"    {r['name']}: {r['reason']}" for r in ev["removed_queries"][:10]]
            if len(ev["removed_queries"]) > 10:
                lines.append(f"    ... and {len(ev['removed_queries']) - 10} more")
    return "\n".join(lines)


def _convention(key: str, p: dict, ap_sources: dict) -> str:
    if key == "mAP":
        return ap_sources[p["ap"]]
    if key.endswith("(revisitop)"):
        return "revisitop: divided by min(k, rank of the last positive)"
    if key.startswith("mP@"):
        return "true P@k: positives in the top k divided by k"
    if key.startswith("CMC@"):
        if p["cmc"] == "cuhk03":
            return (f"CUHK03 single-gallery-shot, {p['cmc_repeats']} repeats, "
                    f"seed {p['seed']}")
        return "Market-1501: a positive within the top k (first match)"
    if key == "mINP":
        return "inverse negative penalty (Ye et al. TPAMI 2021)"
    if key == "mR-precision":
        return "precision at R = number of positives"
    return ""


def write_per_query_csv(path: Path, report: dict) -> None:
    """Write one row per (protocol, query) with every per-query value (empty = skipped)."""
    rows: list[dict[str, object]] = []
    keys: list[str] = ["protocol", "name"]
    for ev in report["evaluations"]:
        for q in ev["queries"]:
            row = {"protocol": ev["protocol"]["name"], **q}
            rows.append(row)
            keys += [k for k in row if k not in keys]
    with atomic_open(path, newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=keys)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if row.get(k) is None else row.get(k) for k in keys})
