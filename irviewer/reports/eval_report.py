"""The ``irviewer eval`` report: the JSON document (a stable schema other tools read), the
table printed for people, and the per-query CSV. Qt-free; the window's exports use it too."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from irviewer.io.atomic import atomic_open
from irviewer.io.csv_table import csv_writer
from irviewer.version import __version__

if TYPE_CHECKING:
    from irviewer.core.dataset import Dataset
    from irviewer.core.evaluation import Evaluation
    from irviewer.formats.corrections_file import LoadedCorrections
    from irviewer.methods.method import Method


def json_number(x: object) -> object:
    """Return a JSON-safe number: nan becomes null, numpy scalars become Python numbers."""
    if isinstance(x, (np.integer, int)) and not isinstance(x, bool):
        return int(x)
    if isinstance(x, (np.floating, float)):
        return None if math.isnan(float(x)) else float(x)
    return x


def method_record(method: Method) -> dict:
    """Return how the report identifies a :class:`~irviewer.methods.method.Method`:
    ``{"descriptors": {path, dim, sha256}}`` or, for a precomputed ranking,
    ``{"ranking": {path, depth, sha256, rule}}``, or, for a score matrix given from Python,
    ``{"scores": {path, shape, order, sha256}}`` (the path of data given from Python is
    null, its sha256 that of the arrays' bytes); a re-ranked method ("F + SPEC") also has
    ``"rerank": {spec, chain, steps}``, every step with its paper and every parameter with
    its value and source (:meth:`irviewer.core.rerank.spec.Chain.record`), an approximate
    one ``"ann"`` (:meth:`irviewer.core.ann.results.AnnRun.record`); every method its
    ``kind`` (descriptors, ranking, reranked, approximate, engine), the ``base`` it is
    derived from and compared with (null for a plain method), its ``depth`` (results kept
    per query) and its ``ties`` rule."""
    spec = method.made
    what = {"kind": spec.kind, "base": spec.base, "depth": method.ranking.k,
            "ties": spec.tie_rule}
    held = spec.source.held
    path = None if held is not None else str(method.path)  # data given from Python
    if method.kind == "ranking":
        return {"ranking": {"path": path, "depth": method.ranking.k,
                            "sha256": method.sha256,
                            "rule": "positives beyond a list were never retrieved"}, **what}
    if held is not None and method.kind == "scores":
        return {"scores": {"path": None, "shape": list(held.scores.shape),
                           "order": held.order, "sha256": method.sha256}, **what}
    record = {"descriptors": {"path": path, "dim": method.dim,
                              "sha256": method.sha256}, **what}
    pairs = getattr(method.ranking, "pairs", None)
    if pairs is not None:  # a pair-scored benchmark's pairs made from the vectors (DISC21)
        record["pairs"] = {"rule": method.ranking.source, "n": len(pairs)}
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
    from irviewer.core.file_digests import file_sha256

    return {"corrections": {"path": str(loaded.path), "sha256": file_sha256(loaded.path),
                            "n_applied": len(loaded.log)}}


@dataclass(frozen=True)
class ScoredMethod:
    """One method of an eval report: its name, how the report identifies it
    (:func:`method_record`, with ``corrections`` when a corrections file was applied) and
    its evaluations, one per protocol."""

    name: str
    source: dict
    evaluations: Sequence[Evaluation]


def build_report(dataset: Dataset, methods: Sequence[ScoredMethod],
                 notes: Sequence[str] | None = None, every_convention: bool = False) -> dict:
    """Return the ``irviewer eval --json`` document (a stable schema other tools read).

    One entry of ``evaluations`` per (method, protocol), methods in the order given and
    protocols in report order within each; each entry names its ``method``. The top-level
    ``descriptors`` (null for a precomputed ranking), ``ranking``, ``rerank`` and
    ``corrections`` identify the *first* method, as they did when eval scored one method
    only, so a reader of one-method reports reads the first method of any report
    unchanged; ``methods`` lists every method's name and identity in order. ``notes`` are
    the sentences reported under ``dataset.notes`` (default: the dataset's).

    With ``every_convention`` each entry has ``all_conventions``, the rows of
    :func:`irviewer.core.conventions.all_conventions` (key, metric, convention, source,
    value, protocol_own), and each query entry its value under each row's key.
    """
    from irviewer.core.conventions import all_conventions
    from irviewer.core.protocols import conventions
    from irviewer.core.ties import tie_conventions

    out_evals = []
    names = [q.name for q in dataset.queries]
    for method in methods:
        for ev in method.evaluations:
            skipped = (np.asarray(ev.positives.n_positives) == 0).tolist()
            columns = {key: _json_column(key, values, skipped)
                       for key, values in ev.per_query.items()}
            ties = ev.ties
            tie_columns = {key: _json_column(key, values, skipped)
                           for key, values in ties.per_query.items()}
            tied = ties.tied.tolist()
            rows = all_conventions(ev) if every_convention else []
            row_columns = {row.key: _json_column(row.key, row.values, skipped)
                           for row in rows}
            queries = []
            for i, name in enumerate(names):
                entry: dict[str, object] = {"name": name}
                for key, column in columns.items():
                    entry[key] = column[i]
                for key, column in tie_columns.items():
                    entry[key] = column[i]
                entry["tied"] = tied[i]
                if rows:
                    entry["all_conventions"] = {k: c[i] for k, c in row_columns.items()}
                if skipped[i]:
                    entry["skipped"] = ev.protocol.skip_reason
                queries.append(entry)
            extra: dict[str, object] = ({"all_conventions": [row.record() for row in rows]}
                                        if rows else {})
            out_evals.append({
                "method": method.name,
                "protocol": ev.protocol.describe(),
                "summary": {**{k: json_number(v) for k, v in ev.summary.items()},
                            **{k: json_number(v) for k, v in ties.summary.items()},
                            "n_tied": ties.n_tied},
                "conventions": {**conventions(ev.protocol, ev.summary),
                                **tie_conventions(list(ties.summary))},
                **extra,
                "queries": queries,
                "removed_queries": [{"name": s.name, "reason": s.reason}
                                    for s in dataset.skipped_queries],
            })
    source = methods[0].source if methods else {"descriptors": None}
    return {
        "irviewer_version": __version__,
        "dataset": {"path": None if dataset.path is None else str(dataset.path),
                    "format": dataset.format,
                    "n_queries": dataset.n_queries, "n_gallery": dataset.n_gallery,
                    "notes": list(dataset.notes if notes is None else notes)},
        "descriptors": source.get("descriptors"),
        **({"ranking": source["ranking"]} if "ranking" in source else {}),
        **({"scores": source["scores"]} if "scores" in source else {}),
        **({"corrections": source["corrections"]} if "corrections" in source else {}),
        **({"rerank": source["rerank"]} if "rerank" in source else {}),
        **({"ann": source["ann"]} if "ann" in source else {}),
        "methods": [{"name": m.name, **m.source} for m in methods],
        "evaluations": out_evals,
    }


def _json_column(key: str, values: np.ndarray, skipped: list[bool]) -> list[object]:
    """Return one per-query array as JSON values: ``first_positive_rank`` 1-based (null when
    none), ``n_positives`` as it is, the values every query has (a query's answers:
    :data:`~irviewer.core.protocols.EVERY_QUERY_KEYS`) null only where nan, any other value
    null for a skipped query or nan (what :func:`json_number` gives, for a whole column at
    once)."""
    from irviewer.core.protocols import EVERY_QUERY_KEYS

    array = np.asarray(values)
    if key == "first_positive_rank":
        return [None if v < 0 else int(v) + 1 for v in array.tolist()]
    if key == "n_positives":
        return [int(v) for v in array.tolist()]
    return json_numbers(array, None if key in EVERY_QUERY_KEYS else skipped)


def json_numbers(values: np.ndarray, skipped: list[bool] | None = None) -> list[object]:
    """Return ``[json_number(v) for v in values]``, null also where ``skipped`` says, from
    the whole array at once: a float or integer array's ``tolist`` gives Python numbers, and
    only its nan (and skipped) places are set to null (Market-1501's report holds 90,000
    numbers); any other array goes value by value."""
    if values.dtype.kind not in "fiu":
        listed = [json_number(v) for v in values.tolist()]
    else:
        listed = values.tolist()
    null = np.isnan(values) if values.dtype.kind == "f" else np.zeros(len(listed), bool)
    if skipped is not None:
        null |= np.asarray(skipped, dtype=bool)
    for i in np.flatnonzero(null).tolist():
        listed[i] = None
    return listed


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
    """Return the human-readable table ``irviewer eval`` prints (values in percent): one
    method's metrics one per line with their conventions, or, for several methods, one
    row per method and one column per metric under each protocol."""
    d = report["dataset"]
    methods = report.get("methods") or [{"name": "", **{k: report[k] for k in
                                                        ("descriptors", "ranking", "scores",
                                                         "rerank")
                                                        if report.get(k) is not None}}]
    lines = [f"irviewer {report['irviewer_version']}",
             f"dataset      {d['path'] or 'in memory'} ({d['format']}): {d['n_queries']} "
             "queries, "
             f"{d['n_gallery']} gallery images"]
    several = len(methods) > 1
    for i, m in enumerate(methods):
        if several:
            lines.append(f"method {i + 1}     {m['name']}")
        lines += _method_lines(m)
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
    if several:
        lines += _methods_table(report["evaluations"], [m["name"] for m in methods])
        return "\n".join(lines + _sweep_lines(report))
    for ev in report["evaluations"]:
        lines += _protocol_lines(ev)
        s, said = ev["summary"], ev["conventions"]
        lines.append(f"  {'metric':<18}{'value %':>9}  convention")
        for key in _shown_keys(s):
            lines.append(f"  {key:<18}{_value(key, s[key])}  {said.get(key, '')}")
            lines += _bounds_line(s, key)
        lines += _tie_line(s)
        lines += _conventions_lines(ev)
        lines += _query_lines(ev)
    return "\n".join(lines + _sweep_lines(report))


def _sweep_lines(report: dict) -> list[str]:
    """Return the table of each approximate index's parameter sweep (nothing without
    one)."""
    sweeps = report.get("sweeps") or ([report["sweep"]] if "sweep" in report else [])
    from irviewer.reports.ann_report import format_sweep

    return [line for record in sweeps for line in format_sweep(record)]


def _conventions_lines(ev: dict) -> list[str]:
    """Return the table of every convention (``eval --conventions``), the protocol's own
    rows marked with *; nothing when the report has none."""
    rows = ev.get("all_conventions")
    if not rows:
        return []
    width = max(len(f"{r['metric']}  {r['convention']}") for r in rows)
    lines = ["  every convention on this ranking (* the protocol's own):"]
    for r in rows:
        label = f"{r['metric']}  {r['convention']}"
        mark = "*" if r["protocol_own"] else " "
        lines.append(f"    {label:<{width}}{_percent(r['value'])} {mark}  {r['source']}")
    return lines


#: Summary keys that count queries (or pairs) rather than measure them.
COUNTS = ("n_evaluated", "n_skipped", "n_tied", "n_predictions", "n_ground_truth_pairs",
          "n_outside_queries")
#: Skipped queries listed by name at most (the rest are counted).
LISTED_SKIPPED = 10
#: Summary keys of the tie bounds, said in one line (:func:`_tie_line`), not one each.
TIE_SUFFIXES = ("_best", "_worst", "_expected")


def _shown_keys(summary: dict) -> list[str]:
    """Return the summary keys the table shows one per line or column."""
    return [k for k in summary if k not in COUNTS and not k.endswith(TIE_SUFFIXES)]


def _tie_line(summary: dict, indent: str = "  ") -> list[str]:
    """Return the line saying how far the order of tied scores moves the mAP (nothing
    when it does not move it)."""
    best, worst = summary.get("mAP_best"), summary.get("mAP_worst")
    if best is None or worst is None or best - worst <= 1e-12:
        return []
    expected = summary.get("mAP_expected")
    said = "" if expected is None else f", {100 * expected:.2f} expected over all orders"
    n = summary.get("n_tied", 0)
    return [f"{indent}ties: mAP {100 * worst:.2f} to {100 * best:.2f} by the order of tied "
            f"scores (positives last / first{said}); {n} quer{'y' if n == 1 else 'ies'}' AP "
            "depends on it"]


def _bounds_line(summary: dict, key: str) -> list[str]:
    """Return the line under a Recall@K saying how far the order of tied scores moves it
    (nothing when it does not)."""
    best, worst = summary.get(f"{key}_best"), summary.get(f"{key}_worst")
    if not key.startswith("Recall@") or best is None or worst is None or best - worst <= 1e-12:
        return []
    return [f"  {'':<18}{'':>9}  ties: {100 * worst:.2f} to {100 * best:.2f} by the order of "
            "tied scores (positives last / first)"]


def _percent(value: float | None) -> str:
    return "      n/a" if value is None else f"{100 * value:9.2f}"


def _value(key: str, value: float | None) -> str:
    """Return a summary value as the table prints it: in percent, except the values that
    are not fractions (positions, a score threshold:
    :data:`~irviewer.core.protocols.UNIT_FREE_KEYS`), printed as they are."""
    from irviewer.core.protocols import UNIT_FREE_KEYS

    if key not in UNIT_FREE_KEYS:
        return _percent(value)
    if value is None:
        return "      n/a"
    return f"{value:9.2f}" if key.endswith("position") else f"{value:9.6g}"


def _method_lines(m: dict) -> list[str]:
    """Return the lines that identify one method (its file, or its ranking file, and a
    re-ranking chain)."""
    from irviewer.core.protocols import TIES

    desc, scores = m.get("descriptors"), m.get("scores")
    if desc is not None:
        lines = [f"descriptors  {_where(desc['path'], m)} (dim {desc['dim']}, sha256 "
                 f"{desc['sha256'][:12]})"]
        pairs = m.get("pairs")
        lines.append(f"pairs        {pairs['n']:,} made by the {pairs['rule']}" if pairs else
                     f"ranking      cosine similarity of L2-normalised float32 vectors; "
                     f"ties: {TIES}")
    elif scores is not None:
        lines = [f"scores       {_where(None, m)} ({scores['shape'][0]:,} x "
                 f"{scores['shape'][1]:,}, {scores['order']}, sha256 "
                 f"{scores['sha256'][:12]})",
                 f"ranking      the matrix's rows in float32; ties: {TIES}"]
    else:
        r = m["ranking"]
        lines = [f"ranking      precomputed lists {r['path']} (depth {r['depth']}, sha256 "
                 f"{r['sha256'][:12]}); {r['rule']}"]
    rerank = m.get("rerank")
    if rerank is not None:
        lines.append(f"re-ranking   {rerank['chain']} (of the ranking above; the "
                     "protocol's removals come after it)")
        for step in rerank["steps"]:
            said = "; ".join(f"{k}={v['value']} ({v['source']})"
                             for k, v in step["params"].items())
            lines.append(f"             {step['method']}: {step['paper']}; {said}")
    return lines


def _where(path: str | None, method: dict) -> str:
    """Return how the table names a method's data: its file, or, for data given from
    Python (no path), its name and where it was held."""
    if path is not None:
        return path
    return f"{method.get('base') or method.get('name') or 'arrays'} (in memory)"


def _protocol_lines(ev: dict) -> list[str]:
    from irviewer.core.protocols import removals

    p = ev["protocol"]
    return ["", f"protocol {p['name']}: positive = {', '.join(p['positive'])}; "
            f"removed = {removals(p['ignored'], p['self_match'])}",
            f"  source: {p['source']}"]


def _query_lines(ev: dict, with_ann: bool = True) -> list[str]:
    """Return the lines on the queries evaluated, skipped (the first
    :data:`LISTED_SKIPPED` by name) and removed by the reader."""
    s = ev["summary"]
    why = ev["protocol"].get("family_note") or "no positive left"
    lines = [f"  queries: {s['n_evaluated']} evaluated, {s['n_skipped']} skipped ({why})"]
    if "n_predictions" in s:
        lines.append(f"  pairs: {s['n_predictions']:,} predicted, "
                     f"{s['n_ground_truth_pairs']:,} in the ground truth"
                     + (f", {s['n_outside_queries']:,} predicted for queries it does not "
                        "list" if s.get("n_outside_queries") else ""))
    if "ann" in ev and with_ann:
        from irviewer.reports.ann_report import format_ann

        lines += format_ann(ev["ann"])
    skipped = [entry for entry in ev["queries"] if "skipped" in entry]
    for entry in skipped[:LISTED_SKIPPED]:
        lines.append(f"    skipped {entry['name']}: {entry['skipped']}")
    if len(skipped) > LISTED_SKIPPED:
        lines.append(f"    ... and {len(skipped) - LISTED_SKIPPED} more")
    if "scores" in ev:
        from irviewer.reports.score_report import score_lines

        lines += score_lines(ev["scores"])
    if ev["removed_queries"]:
        lines.append(f"  removed by the reader: {len(ev['removed_queries'])} queries")
        lines += [f"    {r['name']}: {r['reason']}" for r in ev["removed_queries"][:10]]
        if len(ev["removed_queries"]) > 10:
            lines.append(f"    ... and {len(ev['removed_queries']) - 10} more")
    return lines


def _methods_table(evaluations: list[dict], names: list[str]) -> list[str]:
    """Return, per protocol, one row per method (in ``names``' order) and one column per
    summary metric (values in percent), then each metric's convention."""
    lines: list[str] = []
    protocols = list(dict.fromkeys(ev["protocol"]["name"] for ev in evaluations))
    width = max(len("method"), *(len(n) for n in names))
    for protocol in protocols:
        rows = [ev for ev in evaluations if ev["protocol"]["name"] == protocol]
        first = rows[0]
        keys = _shown_keys(first["summary"])
        lines += _protocol_lines(first)
        lines.append(f"  {'method':<{width}}" + "".join(f"{k:>{max(9, len(k) + 1)}}"
                                                       for k in keys) + "  queries")
        for ev in rows:
            s = ev["summary"]
            cells = "".join(f"{_value(k, s.get(k)).strip():>{max(9, len(k) + 1)}}"
                            for k in keys)
            lines.append(f"  {ev['method']:<{width}}{cells}  {s['n_evaluated']} evaluated")
            lines += _tie_line(s, f"  {'':<{width}}")
        lines.append("  values in %; conventions:")
        lines += [f"    {k}: {first['conventions'][k]}" for k in keys
                  if first["conventions"].get(k)]
        for ev in rows:
            said = _conventions_lines(ev)
            if said:
                lines += [f"  {ev['method']}:", *said[1:]] if len(rows) > 1 else said
        lines += _query_lines(first, with_ann=False)[1:]
        for ev in rows:
            if "ann" in ev:
                from irviewer.reports.ann_report import format_ann

                lines += [f"  {ev['method']}:", *format_ann(ev["ann"])]
    return lines


def write_per_query_csv(path: Path, report: dict) -> None:
    """Write one row per (protocol, query) with every per-query value (empty = skipped);
    for a report of several methods, one row per (method, protocol, query); with a sweep,
    a ``setting`` column (the swept setting of an approximate method, empty for a method
    that is not swept)."""
    rows: list[dict[str, object]] = []
    keys: list[str] = ["protocol", "name"]
    several = len(report.get("methods", ())) > 1
    swept = "sweeps" in report or "sweep" in report
    if swept:
        keys.insert(0, "setting")
    if several:
        keys.insert(0, "method")
    for ev in report["evaluations"]:
        for q in ev["queries"]:
            row = {**({"method": ev["method"]} if several else {}),
                   **({"setting": ev.get("setting")} if swept else {}),
                   "protocol": ev["protocol"]["name"], **q}
            rows.append(row)
            keys += [k for k in row if k not in keys]
    with atomic_open(path, newline="") as stream:
        writer = csv_writer(stream, lineterminator="\r\n")
        writer.writerow(keys)
        for row in rows:
            writer.writerow(["" if row.get(k) is None else row.get(k) for k in keys])
