"""The ``irviewer eval`` report: the JSON document (a stable schema other tools read), the
table printed for people, and the per-query CSV. Qt-free; the window's exports use it too."""

from __future__ import annotations

import csv
import json
import math
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from irviewer import __version__
from irviewer.io.atomic import atomic_open

if TYPE_CHECKING:
    from irviewer.core.dataset import Dataset
    from irviewer.core.evaluation import Evaluation
    from irviewer.formats.corrections_file import LoadedCorrections
    from irviewer.opening.opener import Method


def json_number(x: object) -> object:
    """Return a JSON-safe number: nan becomes null, numpy scalars become Python numbers."""
    if isinstance(x, (np.integer, int)) and not isinstance(x, bool):
        return int(x)
    if isinstance(x, (np.floating, float)):
        return None if math.isnan(float(x)) else float(x)
    return x


def method_record(method: Method) -> dict:
    """Return how the report identifies a :class:`~irviewer.opening.opener.Method`:
    ``{"descriptors": {path, dim, sha256}}`` or, for a precomputed ranking,
    ``{"ranking": {path, depth, sha256, rule}}``; a re-ranked method ("F + SPEC") also has
    ``"rerank": {spec, chain, steps}``, every step with its paper and every parameter with
    its value and source (:meth:`irviewer.core.rerank.spec.Chain.record`)."""
    if method.kind == "ranking":
        return {"ranking": {"path": str(method.path), "depth": method.ranking.k,
                            "sha256": method.sha256,
                            "rule": "positives beyond a list were never retrieved"}}
    record = {"descriptors": {"path": str(method.path), "dim": method.dim,
                              "sha256": method.sha256}}
    chain = getattr(method, "rerank", None)
    if chain is not None:
        record["rerank"] = chain.record()
    run = getattr(method, "ann", None)
    if run is not None:
        record["ann"] = run.record()
    return record


def corrections_record(loaded: LoadedCorrections) -> dict:
    """Return how the report identifies an applied corrections file
    (:class:`~irviewer.formats.corrections_file.LoadedCorrections`):
    ``{"corrections": {path, sha256, n_applied}}``."""
    from irviewer.core.descriptors import file_sha256

    return {"corrections": {"path": str(loaded.path), "sha256": file_sha256(loaded.path),
                            "n_applied": len(loaded.log)}}


def build_report(dataset: Dataset, source: dict, evaluations: Sequence[Evaluation],
                 notes: Sequence[str] | None = None) -> dict:
    """Return the ``irviewer eval --json`` document (a stable schema other tools read).

    ``source`` is ``{"descriptors": {...}}`` or, for a precomputed ranking,
    ``{"ranking": {...}}`` (then ``descriptors`` is null), as :func:`method_record` gives,
    with ``"corrections": {path, sha256, n_applied}`` when a corrections file was applied;
    ``notes`` are the sentences reported under ``dataset.notes`` (default: the dataset's).
    """
    from irviewer.core.evaluation import SKIP_REASON
    from irviewer.core.protocols import conventions

    out_evals = []
    names = [q.name for q in dataset.queries]
    for ev in evaluations:
        skipped = (np.asarray(ev.positives.n_positives) == 0).tolist()
        columns = {key: _json_column(key, values, skipped)
                   for key, values in ev.per_query.items()}
        queries = []
        for i, name in enumerate(names):
            entry: dict[str, object] = {"name": name}
            for key, column in columns.items():
                entry[key] = column[i]
            if skipped[i]:
                entry["skipped"] = SKIP_REASON
            queries.append(entry)
        out_evals.append({
            "protocol": ev.protocol.describe(),
            "summary": {k: json_number(v) for k, v in ev.summary.items()},
            "conventions": conventions(ev.protocol, ev.summary),
            "queries": queries,
            "removed_queries": [{"name": s.name, "reason": s.reason}
                                for s in dataset.skipped_queries],
        })
    return {
        "irviewer_version": __version__,
        "dataset": {"path": str(dataset.path), "format": dataset.format,
                    "n_queries": dataset.n_queries, "n_gallery": dataset.n_gallery,
                    "notes": list(dataset.notes if notes is None else notes)},
        "descriptors": source.get("descriptors"),
        **({"ranking": source["ranking"]} if "ranking" in source else {}),
        **({"corrections": source["corrections"]} if "corrections" in source else {}),
        **({"rerank": source["rerank"]} if "rerank" in source else {}),
        **({"ann": source["ann"]} if "ann" in source else {}),
        "evaluations": out_evals,
    }


def _json_column(key: str, values: np.ndarray, skipped: list[bool]) -> list[object]:
    """Return one per-query array as JSON values: ``first_positive_rank`` 1-based (null when
    none), ``n_positives`` as it is, any other value null for a skipped query or nan (what
    :func:`json_number` gives, for a whole column at once)."""
    listed = np.asarray(values).tolist()
    if key == "first_positive_rank":
        return [None if v < 0 else int(v) + 1 for v in listed]
    if key == "n_positives":
        return [int(v) for v in listed]
    return [None if gone else json_number(v) for v, gone in zip(listed, skipped, strict=True)]


def report_json(report: dict) -> str:
    """Return the report as JSON text (a trailing newline; nan never appears): indented
    one space per level like ``json.dumps(report, indent=1)``, except that each per-query
    entry is written on one line.

    The content is the same document (``json.loads`` gives equal objects); one line per
    query keeps the file readable and lets the C encoder write 3,368 Market-1501 queries
    in a few milliseconds instead of half a second.
    """
    marks = {}
    skeleton = dict(report)
    skeleton["evaluations"] = []
    token = uuid.uuid4().hex  # a placeholder no report text contains
    for i, ev in enumerate(report["evaluations"]):
        mark = f"\u0000queries {i} {token}\u0000"
        marks[json.dumps(mark)] = ev["queries"]
        skeleton["evaluations"].append({**ev, "queries": mark})
    text = json.dumps(skeleton, indent=1, allow_nan=False)
    for quoted, entries in marks.items():
        at = text.index(quoted)
        indent = " " * (at - text.rindex("\n", 0, at) - 1 - len('"queries": '))
        inner = ",\n".join(f"{indent} {json.dumps(e, allow_nan=False)}" for e in entries)
        listing = f"[\n{inner}\n{indent}]" if entries else "[]"
        text = text.replace(quoted, listing, 1)
    return text + "\n"


def format_table(report: dict) -> str:
    """Return the human-readable table ``irviewer eval`` prints (values in percent)."""
    from irviewer.core.protocols import TIES, removals

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
    rerank = report.get("rerank")
    if rerank is not None:
        lines.append(f"re-ranking   {rerank['chain']} (of the ranking above; the "
                     "protocol's removals come after it)")
        for step in rerank["steps"]:
            said = "; ".join(f"{k}={v['value']} ({v['source']})"
                             for k, v in step["params"].items())
            lines.append(f"             {step['method']}: {step['paper']}; {said}")
    if report.get("ann") is not None:
        a = report["ann"]
        lines.append(f"approximate  {a['setting']} ({a['source']}, {a['index']}; inner product "
                     f"on L2-normalised vectors): the top {a['depth']} of each query scored as "
                     "a result list (a positive not returned was never retrieved)")
    corr = report.get("corrections")
    if corr is not None:
        lines.append(f"corrections  {corr['path']} (sha256 {corr['sha256'][:12]}): "
                     f"{corr['n_applied']} applied; these numbers score the corrected ground "
                     "truth, not the published one")
    lines += [f"note         {n}" for n in d["notes"]]
    for ev in report["evaluations"]:
        p, s, said = ev["protocol"], ev["summary"], ev["conventions"]
        lines += ["", f"protocol {p['name']}: positive = {', '.join(p['positive'])}; "
                  f"removed = {removals(p['ignored'], p['self_match'])}",
                  f"  source: {p['source']}",
                  f"  {'metric':<18}{'value %':>9}  convention"]
        for key, value in s.items():
            if key in ("n_evaluated", "n_skipped"):
                continue
            shown = "    n/a" if value is None else f"{100 * value:9.2f}"
            lines.append(f"  {key:<18}{shown}  {said.get(key, '')}")
        lines.append(f"  queries: {s['n_evaluated']} evaluated, {s['n_skipped']} skipped "
                     "(no positive left)")
        if "ann" in ev:
            from irviewer.reports.ann_report import format_ann

            lines += format_ann(ev["ann"])
        for entry in ev["queries"]:
            if "skipped" in entry:
                lines.append(f"    skipped {entry['name']}: {entry['skipped']}")
        if "scores" in ev:
            from irviewer.reports.score_report import score_lines

            lines += score_lines(ev["scores"])
        if ev["removed_queries"]:
            lines.append(f"  removed by the reader: {len(ev['removed_queries'])} queries")
            lines += [f"    {r['name']}: {r['reason']}" for r in ev["removed_queries"][:10]]
            if len(ev["removed_queries"]) > 10:
                lines.append(f"    ... and {len(ev['removed_queries']) - 10} more")
    if "sweep" in report:
        from irviewer.reports.ann_report import format_sweep

        lines += format_sweep(report["sweep"])
    return "\n".join(lines)


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
