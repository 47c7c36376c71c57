"""``irviewer audit``: list the labels the rankings say look wrong, most suspicious first, as a
table, a JSON document and a corrections file to review (see ``docs/audit.md``)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from irviewer.core.ranking import DEFAULT_DEPTH
from irviewer.opening.options import (
    METHODS,
    READER,
    add_dataset,
    add_options,
    at_most_one,
    request_from_args,
    window_corrections_note,
)

if TYPE_CHECKING:
    from irviewer.core.audit import AuditResult, Suspect
    from irviewer.core.dataset import Dataset

NAME = "audit"
HELP = "find labels that look wrong, using every method's ranking as evidence"
DESCRIPTION = ("Rank the gallery with every descriptor file (or read precomputed rankings) and "
               "list the (query, image) pairs and images whose labels every method disagrees "
               "with: negatives that look positive, positives that look negative, images whose "
               "neighbours carry another label, near-duplicates with different labels, queries "
               "with suspicious ground truth, and hubs.")
def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``irviewer audit``'s arguments to ``p``."""
    add_dataset(p, "dataset file or folder", optional=False)
    add_options(p, *METHODS, *READER, "protocol", help={
        "descriptors": "descriptor files, one method each",
        "ranking": "precomputed result lists, one method each",
        "protocol": "judge labels under this protocol (default: the dataset's, revisited "
        "Medium for rOxford/rParis)"})
    p.add_argument("--top", type=int, default=0, metavar="N",
                   help="list only the N most suspicious (default 0: every suspect scoring at "
                   "least --min-score)")
    add_options(p, "depth", "corrections", "threads", help={
        "depth": "length of the stored result lists a negative must be in to count as "
        f"ranked among the positives (default {DEFAULT_DEPTH}; positives' ranks are exact at any "
        "depth)",
        "corrections": "audit the ground truth with this corrections file applied (a "
        "reviewed audit CSV applies the rows whose accept column says yes)"})
    p.add_argument("--min-score", type=float, default=0.5,
                   help="report suspects scoring at least this (0..1; default 0.5)")
    p.add_argument("--json", type=Path, metavar="OUT", help="write the suspects as JSON")
    p.add_argument("--csv", type=Path, metavar="OUT",
                   help="write the suggested fixes as a corrections file with an accept column")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Check ``args``, audit, print and write; return the exit code."""
    from irviewer.core.audit import AuditOptions, audit
    from irviewer.core.errors import InputError
    from irviewer.opening.opener import open_now

    if not args.descriptors and not args.ranking:
        parser.error("give at least one -d FILE or --ranking FILE")
    if args.top < 0:
        raise InputError(f"--top must be 0 (all) or more, not {args.top}")
    at_most_one(args, ("protocol",), "protocol")
    options = AuditOptions(min_score=args.min_score)
    request = request_from_args(args)
    opened = open_now(request)
    note = window_corrections_note(request, "audits")
    if note:
        print(f"note: {note}", file=sys.stderr)
    result = audit(opened.dataset, {n: m.ranking for n, m in opened.methods.items()},
                   args.protocol[0] if args.protocol else None, options)
    shown = result.suspects if args.top == 0 else result.suspects[:args.top]
    methods = [{"path": str(m.path), "sha256": m.sha256}
               for m in opened.methods.values()]
    print(format_table(opened.dataset, result, shown))
    for note in opened.corrections.notes() if opened.corrections is not None else ():
        print(f"note: {note}", file=sys.stderr)
    if args.json is not None:
        from irviewer.io.atomic import atomic_write_text

        atomic_write_text(args.json, json.dumps(
            build_audit_report(opened.dataset, result, methods, shown), indent=1) + "\n")
    if args.csv is not None:
        write_audit_csv(args.csv, shown)
    return 0


def build_audit_report(dataset: Dataset, result: AuditResult, methods: list[dict[str, str]],
                       shown: Sequence[Suspect]) -> dict[str, object]:
    """Return the ``irviewer audit --json`` document."""
    from irviewer.version import __version__

    return {
        "irviewer_version": __version__,
        "dataset": {"path": str(dataset.path), "format": dataset.format,
                    "n_queries": dataset.n_queries, "n_gallery": dataset.n_gallery,
                    "protocol": result.protocol, "notes": list(result.notes)},
        "methods": methods,
        "suspects": [{"rank": i, "kind": s.kind, "query": s.query,
                      "queries": list(s.queries or ((s.query,) if s.query else ())),
                      "item": s.item, "labelled": s.labelled, "suggested": s.suggested,
                      "corrections": [{"queries": list(queries), "item": s.item,
                                       "label": label} for label, queries in s.moves()],
                      "score": s.score, "log_odds": round(s.order(), 4),
                      "evidence": s.evidence, "methods_agreeing": s.methods_agreeing}
                     for i, s in enumerate(shown, 1)],
    }


def format_table(dataset: Dataset, result: AuditResult, shown: Sequence[Suspect]) -> str:
    """Return the table printed for people: one line per suspect, its evidence under it
    (``hertford_1 +4``: the suspect is about 5 queries of one list; ``all_souls_2 +9``: an
    image in the wrong list, about both lists' queries)."""
    from irviewer.core.audit import score_words

    lines = [f"irviewer audit: {dataset.label()} ({dataset.format}), protocol "
             f"{result.protocol}, {len(result.methods)} method(s): "
             f"{', '.join(result.methods)}",
             f"{len(result.suspects)} suspect(s)"
             + (f", the first {len(shown)} shown" if len(shown) < len(result.suspects) else "")]
    lines += [f"note: {n}" for n in result.notes]
    if shown:
        lines.append(f"{'#':>4}  {'score':>11}  {'kind':<24} {'query':<20} {'item':<24} fix")
    for i, s in enumerate(shown, 1):
        fix = fix_text(s, "->")
        query = s.query or "-"
        if len(s.queries) > 1:
            query = f"{query} +{len(s.queries) - 1}"
        lines.append(f"{i:>4}  {score_words(s):>11}  {s.kind:<24} {query:<20} "
                     f"{s.item:<24} {fix}")
        lines.append(f"{'':>13}{s.evidence}")
    return "\n".join(lines)


def fix_text(s: Suspect, arrow: str) -> str:
    """Return the suggested fix in a line: ``negative -> good``; for an image in the wrong
    list the two lists, ``good: cornmarket_1–5 -> all_souls_1–5``; ``(review)`` without a
    single fix."""
    from irviewer.core.audit import WRONG_LIST, span

    if s.suggested is None:
        return "(review)"
    if s.kind == WRONG_LIST:
        moves = dict(s.moves())
        into = span(list(moves.get(s.suggested, ())))
        out = span([q for label, qs in s.moves() if label != s.suggested for q in qs])
        return f"{s.labelled}: {out} {arrow} {into}"
    return f"{s.labelled} {arrow} {s.suggested}"


def write_audit_csv(path: Path, shown: Sequence[Suspect]) -> int:
    """Write the suspects' suggested corrections as a corrections file with an ``accept``
    column left empty for the reviewer (only rows marked yes are applied when it is read):
    one row per query a suspect fixes; suspects with no single fix (hubs, queries) are left
    out. Return the rows written."""
    from dataclasses import replace

    from irviewer.core.audit import AUTHOR, score_words
    from irviewer.core.corrections import utc_now
    from irviewer.formats.corrections_file import write_corrections

    now = utc_now()
    rows = [replace(c, author=AUTHOR, time=now,
                    note=f"{s.kind} ({score_words(s)}): {s.evidence}")
            for s in shown for c in s.fixes()]
    write_corrections(path, rows, accept=[""] * len(rows))
    return len(rows)
