"""The ``irviewer compare`` report: paired comparisons of every method with the first one
(the baseline), per protocol, as the JSON document, the table printed for people and the
per-query CSV. Qt-free; the window's compare mode can show the same numbers.

The statistics are :mod:`irviewer.core.paired`'s; this module only gathers them over
methods and protocols and adds Holm's adjustment over the methods compared with one
baseline under one protocol (when there are at least two of them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from irviewer import __version__
from irviewer.core.paired import (
    BOOTSTRAP_RESAMPLES,
    PERMUTATIONS,
    SOURCES,
    PairedComparison,
    compare_evaluations,
    holm_adjust,
    largest_changes,
)
from irviewer.io.atomic import atomic_open
from irviewer.io.csv_table import csv_writer
from irviewer.reports.eval_report import json_number

if TYPE_CHECKING:
    from irviewer.core.evaluation import Evaluation
    from irviewer.core.protocols import Protocol
    from irviewer.opening.opener import Opened

#: How many of the largest gains and of the largest losses the table lists by default (the
#: JSON document and the per-query CSV have every paired query).
LISTED_CHANGES = 5


@dataclass(frozen=True)
class ProtocolComparison:
    """One method against the baseline under one protocol: the paired comparison, with more
    than one method against the baseline the Holm-adjusted randomization p-value, the
    sentence naming the metric's convention under the protocol as scored, and the depth
    both were scored at (:meth:`~irviewer.opening.opener.Opened.paired`: None, both whole;
    K, both on their first K results, when either stops at its lists) with the baseline's
    mean on its whole ranking beside it (None when compared whole)."""

    protocol: str
    comparison: PairedComparison
    holm_p_value: float | None = None
    convention: str = ""
    depth: int | None = None
    mean_baseline_whole: float | None = None


def check_method_count(n: int) -> None:
    """Raise InputError unless there are at least two methods to compare."""
    from irviewer.core.errors import InputError

    if n < 2:
        raise InputError("compare needs at least two methods (-d A B, or --ranking); the "
                         "first is the baseline")


def compare_opened(opened: Opened, metric: str = "AP", protocols: list[str] | None = None,
                   ap: str | None = None, self_match: str | None = None,
                   permutations: int = PERMUTATIONS, seed: int = 0,
                   resamples: int = BOOTSTRAP_RESAMPLES) -> list[ProtocolComparison]:
    """Return every method of ``opened`` (an :class:`irviewer.opening.opener.Opened`) compared
    with its first method, under each of ``protocols`` (None: the dataset's), with the
    statistics computed. Holm's adjustment runs over the methods of one protocol.

    InputError with fewer than two methods, for an unknown metric or protocol, or when a
    pair has no evaluated query in common.
    """
    names = list(opened.methods)
    check_method_count(len(names))
    baseline, others = names[0], names[1:]
    out: list[ProtocolComparison] = []
    for protocol in protocols or list(opened.protocols):
        pairs = [opened.paired(baseline, m, protocol, ap=ap, self_match=self_match)
                 for m in others]
        rows = [compare_evaluations(baseline, p.base, m, p.other, metric,
                                    permutations=permutations, seed=seed,
                                    resamples=resamples)
                for m, p in zip(others, pairs, strict=True)]
        adjusted = (holm_adjust([c.randomization.p_value for c in rows]) if len(rows) > 1
                    else [None] * len(rows))
        said = metric_convention(pairs[0].base.protocol, metric)
        out += [ProtocolComparison(protocol, c, None if h is None else float(h), said,
                                   p.depth, None if p.depth is None else
                                   _mean_of(p.base_own, metric))
                for c, h, p in zip(rows, adjusted, pairs, strict=True)]
    return out


def _mean_of(ev: Evaluation, metric: str) -> float | None:
    """Return the mean of ``metric`` over ``ev``'s evaluated queries (None: none)."""
    values = np.asarray(ev.per_query[metric], dtype=np.float64)[ev.evaluated]
    return float(np.mean(values)) if values.size else None


def build_compare_report(opened: Opened, comparisons: list[ProtocolComparison]) -> dict:
    """Return the ``irviewer compare --json`` document.

    Per comparison, ``queries`` lists every paired query (evaluated by both methods) in
    the baseline's query order, with both values and the delta. A t statistic that is not a
    finite number (no variance) is written as null, and the t-test's ``note`` says why.
    """
    ds = opened.dataset
    out = []
    for row in comparisons:
        c = row.comparison
        t, r = c.paired_t, c.randomization
        paired_t: dict[str, object] = {"statistic": _finite(t.statistic),
                                       "p_value": json_number(t.p_value)}
        if t.note:
            paired_t["note"] = t.note
        tests: dict[str, object] = {
            "paired_t": paired_t,
            "randomization": {"p_value": json_number(r.p_value),
                              "permutations": r.permutations, "seed": r.seed},
        }
        if row.holm_p_value is not None:
            tests["holm_p_value"] = json_number(row.holm_p_value)
        out.append({
            "protocol": row.protocol, "baseline": c.baseline, "method": c.method,
            "metric": c.metric, "convention": row.convention, "n_queries": c.n,
            "mean_baseline": c.mean_baseline, "mean_method": c.mean_method,
            "mean_delta": c.mean_delta, "ci95": [c.ci95[0], c.ci95[1]],
            "wins": c.wins, "losses": c.losses, "ties": c.ties, "tests": tests,
            "depth_compared": row.depth, "mean_baseline_whole": row.mean_baseline_whole,
            "queries": [{"name": c.queries[i], "baseline": float(c.baseline_values[i]),
                         "method": float(c.method_values[i]), "delta": float(c.deltas[i])}
                        for i in range(c.n)],
        })
    return {
        "irviewer_version": __version__,
        "dataset": {"path": str(ds.path), "format": ds.format, "n_queries": ds.n_queries,
                    "n_gallery": ds.n_gallery},
        "methods": [{"name": m.name, "path": str(m.path), "sha256": m.sha256,
                     "kind": m.made.kind, "base": m.base,
                     **({"rerank": m.rerank.record()} if m.rerank is not None else {}),
                     **({"ann": m.ann.record()} if m.ann is not None else {})}
                    for m in opened.methods.values()],
        "comparisons": out,
    }


def _reranked(method: dict) -> str:
    """Return ", re-ranked by CHAIN" for a re-ranked method's entry, else ""."""
    rerank = method.get("rerank")
    return f", re-ranked by {rerank['chain']} (docs/rerank.md)" if rerank else ""


def format_compare_table(report: dict, listed: int = LISTED_CHANGES) -> str:
    """Return the table ``irviewer compare`` prints: per protocol, each method's mean, the
    mean delta with its interval, wins / losses / ties and each test's p-value by name
    (values in percent points), then the ``listed`` largest gains and losses
    (:func:`irviewer.core.paired.largest_changes`) and what each test is."""
    d = report["dataset"]
    methods = report["methods"]
    lines = [f"irviewer {report['irviewer_version']} — paired comparison",
             f"dataset   {d['path']} ({d['format']}): {d['n_queries']} queries",
             f"baseline  {methods[0]['name']}  ({methods[0]['path']}, sha256 "
             f"{methods[0]['sha256'][:12]}{_reranked(methods[0])})"]
    lines += [f"method    {m['name']}  ({m['path']}, sha256 {m['sha256'][:12]}{_reranked(m)})"
              for m in methods[1:]]
    width = max(len(m["name"]) for m in methods) + len(" (baseline)") + 2
    protocol = None
    for c in report["comparisons"]:
        if c["protocol"] != protocol:
            protocol = c["protocol"]
            lines += ["", f"protocol {protocol}, metric {c['metric']}"
                      + (f" ({c['convention']})" if c.get("convention") else "")
                      + "; values in percent, delta = method − baseline",
                      (f"  {'method':<{width}}{'n':>6}{'mean':>8}{'delta':>8}  {'95% CI':<18}"
                       f"{'W/L/T':<12}{'paired t':<22}{'randomization':<22}"
                       + ("Holm" if "holm_p_value" in c["tests"] else "")).rstrip(),
                      f"  {c['baseline'] + ' (baseline)':<{width}}{c['n_queries']:>6}"
                      f"{100 * c['mean_baseline']:8.2f}"]
        t, r = c["tests"]["paired_t"], c["tests"]["randomization"]
        lo, hi = c["ci95"]
        ci = f"[{100 * lo:+.2f}, {100 * hi:+.2f}]"
        stat = ("t undefined" if t["statistic"] is None and t["p_value"] is None else
                "t ±inf" if t["statistic"] is None else f"t={t['statistic']:+.2f}")
        how = "exact" if r["permutations"] == "exact" else "MC"
        wlt = f"{c['wins']}/{c['losses']}/{c['ties']}"
        line = (f"  {c['method']:<{width}}{c['n_queries']:>6}{100 * c['mean_method']:8.2f}"
                f"{100 * c['mean_delta']:+8.2f}  {ci:<18}{wlt:<12}"
                f"{stat + ' p=' + _p(t['p_value']):<22}"
                f"{'p=' + _p(r['p_value']) + ' (' + how + ')':<22}")
        if "holm_p_value" in c["tests"]:
            line += f"p={_p(c['tests']['holm_p_value'])}"
        lines.append(line.rstrip())
        if c.get("depth_compared") is not None:
            whole = c.get("mean_baseline_whole")
            lines.append(f"    both scored on their first {c['depth_compared']} results (a "
                         f"positive past {c['depth_compared']} missed); {c['baseline']} on "
                         "its whole ranking: "
                         + ("n/a" if whole is None else f"{100 * whole:.2f}"))
        if t.get("note"):
            lines.append(f"    paired t: {t['note']}")
        gains, losses = largest_changes(np.array([q["delta"] for q in c["queries"]]), listed)
        for label, chosen in (("gains", gains), ("losses", losses)):
            items = [c["queries"][i] for i in chosen]
            if items:
                lines.append(f"    largest {label} of {c['method']}:")
                lines += [f"      {100 * q['delta']:+7.2f}  {q['name']} "
                          f"({100 * q['baseline']:.2f} → {100 * q['method']:.2f})"
                          for q in items]
    if report["comparisons"]:
        mc = [c["tests"]["randomization"] for c in report["comparisons"]
              if c["tests"]["randomization"]["permutations"] != "exact"]
        rule = ("exact: all 2^n sign assignments (n <= 16 queries)" if not mc else
                f"exact over all 2^n sign assignments for n <= 16 queries, otherwise (MC) "
                f"{mc[0]['permutations']:,} random ones, seed {mc[0]['seed']}, "
                "p = (b + 1) / (N + 1)")
        lines += ["", "tests:",
                  f"  95% CI         {SOURCES['bootstrap']}",
                  f"  paired t       {SOURCES['paired_t']}",
                  f"  randomization  {SOURCES['randomization']}; {rule}"]
        if any("holm_p_value" in c["tests"] for c in report["comparisons"]):
            lines.append(f"  Holm           {SOURCES['holm']}")
        lines.append("  W/L/T          queries the method improves / worsens / leaves "
                     "unchanged (delta exactly 0)")
    return "\n".join(lines)


def write_compare_csv(path: Path, comparisons: list[ProtocolComparison]) -> None:
    """Write one CSV row per (protocol, method, paired query): both values and the delta."""
    with atomic_open(path, newline="") as stream:
        writer = csv_writer(stream, lineterminator="\r\n")
        writer.writerow(["protocol", "metric", "query", "baseline", "method",
                         "baseline_value", "method_value", "delta"])
        for row in comparisons:
            c = row.comparison
            for i, q in enumerate(c.queries):
                writer.writerow([row.protocol, c.metric, q, c.baseline, c.method,
                                 repr(float(c.baseline_values[i])),
                                 repr(float(c.method_values[i])), repr(float(c.deltas[i]))])


def metric_convention(protocol: Protocol, metric: str) -> str:
    """Return the sentence naming the convention of a per-query ``metric`` under
    ``protocol`` (a :class:`~irviewer.core.protocols.Protocol`, overrides applied; the one
    source of these sentences is :func:`irviewer.core.protocols.conventions`), "" when it
    has none."""
    from irviewer.core.protocols import conventions, mean_key

    key = mean_key(metric)
    return conventions(protocol, [key]).get(key, "")


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _p(p: float | None) -> str:
    if p is None:
        return "n/a"
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"
