"""What the reports say about an approximate search: the ``ann`` member of a method's
evaluation in ``irviewer eval --json`` (the run, the mean recalls, every query's recalls,
ΔAP, ΔP@1 and lost positives), the sweep's table (mAP, recall and search time per setting,
and per query the first setting that reaches its exact AP), and the lines ``eval`` prints.
Qt-free; the window's sweep dialog shows the same rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from irviewer.core.ann.compare import compare_with_exact, first_reaching
from irviewer.core.ann.recall import RECALL_KS, RULES
from irviewer.core.evaluation import Evaluation, evaluate

if TYPE_CHECKING:
    from irviewer.core.ann.results import AnnRun

#: The recall the tables show (ann-benchmarks' rule at k = 10).
SHOWN_RECALL = "recall@10"
#: Queries a table names as broken, at most.
LISTED_BROKEN = 5
#: What the reports say of a search with no exact ranking beside it (the descriptor file
#: holds the queries only; the gallery lives in the engine).
NO_EXACT = ("no exact ranking to compare with: the descriptor file holds the queries only, "
            "the gallery lives in the engine, so recall and ΔAP are not computed")


def exact_evaluation(run: AnnRun, approx: Evaluation) -> Evaluation:
    """Return the exact ranking's top K scored by the rule for result lists under
    ``approx``'s protocol: what the approximate search is compared with."""
    assert run.exact_lists is not None
    return evaluate(approx.dataset, run.exact_lists, approx.protocol)


def _number(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def ann_member(run: AnnRun, approx: Evaluation) -> dict:
    """Return the ``ann`` member of an evaluation in the eval report: the run
    (:meth:`AnnRun.record`), the mean recalls (``recall@k`` by ann-benchmarks' rule, the
    one the table shows; ``recall@k(tie-aware)`` by big-ann-benchmarks'), ``mAP_exact`` (the
    exact top K under the same rule) and one entry per query: its recalls, exact AP, ΔAP,
    ΔP@1 and the positives the index lost with their exact ranks (1-based)."""
    out = run.record()
    out["shown_rule"] = RULES[0]
    if run.exact_lists is None:
        for k in RECALL_KS:
            out[f"recall@{k}"] = out[f"recall@{k}(tie-aware)"] = None
        out["mAP_exact"] = None
        out["exact"] = NO_EXACT
        return out
    exact = exact_evaluation(run, approx)
    cmp = compare_with_exact(exact, approx)
    gallery = approx.dataset.gallery
    evaluated = approx.evaluated
    ap_e = np.asarray(exact.per_query["AP"], dtype=np.float64)
    out["mAP_exact"] = _number(float(np.mean(ap_e[evaluated]))) if evaluated.any() else None
    out["mAP"] = _number(float(np.mean(np.asarray(approx.per_query["AP"])[evaluated]))) \
        if evaluated.any() else None
    queries = []
    for q, query in enumerate(approx.dataset.queries):
        entry: dict[str, object] = {"name": query.name}
        for key, values in run.recall.items():
            entry[key] = _number(float(values[q]))
        counted = bool(evaluated[q])
        entry["AP_exact"] = _number(ap_e[q]) if counted else None
        entry["delta_AP"] = _number(cmp.delta_ap[q]) if counted else None
        entry["delta_P@1"] = _number(cmp.delta_p1[q]) if counted else None
        entry["lost_positives"] = [{"name": gallery[p.gallery], "exact_rank": p.exact_rank + 1}
                                   for p in cmp.lost[q]]
        queries.append(entry)
    out["queries"] = queries
    return out


@dataclass(frozen=True)
class SweepRow:
    """One setting of a sweep under one protocol: its method name, the run, the mAP
    (``mean_ap``) and how many queries' AP it lowered."""

    method: str
    run: AnnRun
    mean_ap: float
    broken: int


def sweep_rows(methods: Sequence[tuple[str, AnnRun, Evaluation]]) -> list[SweepRow]:
    """Return a sweep's rows (``methods``: name, run and evaluation per setting, in order)."""
    rows = []
    for name, run, ev in methods:
        ap = np.asarray(ev.per_query["AP"], dtype=np.float64)[ev.evaluated]
        cmp = compare_with_exact(exact_evaluation(run, ev), ev) if run.exact_lists else None
        rows.append(SweepRow(name, run, float(np.mean(ap)) if ap.size else float("nan"),
                             0 if cmp is None else int(cmp.broken.size)))
    return rows


def sweep_record(methods: Sequence[tuple[str, AnnRun, Evaluation]]) -> dict:
    """Return the ``sweep`` member of the eval report: per setting its mAP, mean recalls and
    search time, and per query the first setting that reaches its exact AP (null: none)."""
    rows = sweep_rows(methods)
    first_ev = methods[0][2]
    exact = exact_evaluation(methods[0][1], first_ev)
    reach = first_reaching(exact, [ev for _, _, ev in methods])
    settings = [row.run.setting for row in rows]
    return {
        "protocol": first_ev.protocol.name,
        "mAP_exact": _number(float(np.mean(np.asarray(exact.per_query["AP"])[
            exact.evaluated]))) if exact.evaluated.any() else None,
        "settings": [{"setting": row.run.setting, "method": row.method, "mAP": _number(row.mean_ap),
                      **{f"recall@{k}": row.run.mean_recall(f"recall@{k}") for k in RECALL_KS},
                      "search_s": row.run.search_s, "ms_per_query": row.run.ms_per_query,
                      "build_s": row.run.build_s, "queries_broken": row.broken}
                     for row in rows],
        "first_reaching_exact": [
            {"name": q.name, "setting": settings[int(i)] if i >= 0 else None}
            for q, i, ok in zip(first_ev.dataset.queries, reach, first_ev.evaluated,
                                strict=True) if ok],
    }


def format_sweep(record: dict) -> list[str]:
    """Return the sweep's table as lines (values in percent, times in ms per query)."""
    lines = ["", f"sweep under {record['protocol']} (recall@k by ann-benchmarks' rule; "
             f"exact mAP at this depth {_pct(record['mAP_exact'])} %)",
             f"  {'setting':<36}{'mAP %':>8}{'R@1':>8}{'R@10':>8}{'R@100':>8}"
             f"{'ms/query':>10}{'broken':>8}"]
    for s in record["settings"]:
        lines.append(f"  {s['setting']:<36}{_pct(s['mAP']):>8}{_pct(s['recall@1']):>8}"
                     f"{_pct(s['recall@10']):>8}{_pct(s['recall@100']):>8}"
                     f"{s['ms_per_query']:>10.3f}{s['queries_broken']:>8}")
    counts: dict[str | None, int] = {}
    for entry in record["first_reaching_exact"]:
        counts[entry["setting"]] = counts.get(entry["setting"], 0) + 1
    said = ", ".join(f"{counts[s['setting']]} at {s['setting']}" for s in record["settings"]
                     if s["setting"] in counts)
    never = counts.get(None, 0)
    lines.append(f"  queries reaching their exact AP first: {said or 'none'}"
                 + (f"; {never} never" if never else ""))
    return lines


def format_ann(member: dict) -> list[str]:
    """Return the lines ``irviewer eval`` prints for one evaluation's ``ann`` member."""
    lines = [f"  approximate search {member['setting']} ({member['source']}, "
             f"{member['index']}): built in {member['build_s']:.2f} s, searched in "
             f"{member['ms_per_query']:.3f} ms per query",
             "  recall (ann-benchmarks' rule, shown; big-ann-benchmarks' tie-aware in "
             "brackets): " + ", ".join(
                 f"@{k} {_pct(member.get(f'recall@{k}'))} "
                 f"[{_pct(member.get(f'recall@{k}(tie-aware)'))}]" for k in RECALL_KS)]
    lines += [f"  note: {note}" for note in (member.get("id_order"), member.get("beam_note"))
              if note]
    lines += [f"  note: FAISS warned while building the index: {w}"
              for w in member.get("warnings", ())]
    if "exact" in member:
        return [*lines, f"  {member['exact']}"]
    if "queries" not in member:
        return lines
    lines.append(f"  mAP {_pct(member['mAP'])} % against the exact top {member['depth']}'s "
                 f"{_pct(member['mAP_exact'])} % (both by the rule for result lists)")
    hurt = sorted((q for q in member["queries"] if (q["delta_AP"] or 0) < 0),
                  key=lambda q: q["delta_AP"])
    lines.append(f"  queries the index broke (AP lowered): {len(hurt)}")
    for q in hurt[:LISTED_BROKEN]:
        lost = ", ".join(f"{p['name']} (exact rank {p['exact_rank']})"
                         for p in q["lost_positives"][:3])
        more = len(q["lost_positives"]) - 3
        lost += f" and {more} more" if more > 0 else ""
        lines.append(f"    {q['name']}: ΔAP {100 * q['delta_AP']:+.2f}"
                     + (f"; lost {lost}" if lost else ""))
    return lines


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * float(x):.2f}"


__all__ = ["NO_EXACT", "SHOWN_RECALL", "SweepRow", "ann_member", "exact_evaluation",
           "format_ann", "format_sweep", "sweep_record", "sweep_rows"]
