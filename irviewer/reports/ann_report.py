"""What the reports say about an approximate search: the ``ann`` member of a method's
evaluation in ``irviewer eval --json`` (the run, the mean recalls, every query's recalls,
ΔAP, ΔP@1 and lost positives against its base), the sweep's member and table (mAP, recall
and search time per setting, every setting's per-query values, and per query the first
setting that reaches its base's AP), and the lines ``eval`` prints. Qt-free; the values are
:mod:`irviewer.opening.base_comparison`'s, which the window's sweep dialog shows too."""

from __future__ import annotations

import numpy as np

from irviewer.core.ann.recall import RECALL_KS, RULES
from irviewer.opening.base_comparison import BaseComparison, Sweep

#: The recall the tables show (ann-benchmarks' rule at k = 10).
SHOWN_RECALL = "recall@10"
#: Queries a table names as broken, at most.
LISTED_BROKEN = 5
#: What the reports say of a search with no exact ranking beside it (the descriptor file
#: holds the queries only; the gallery lives in the engine).
NO_EXACT = ("no exact ranking to compare with: the descriptor file holds the queries only, "
            "the gallery lives in the engine, so recall and ΔAP are not computed")


def _number(x: float | None) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def compared_at(depth: int | None) -> str:
    """Return how a comparison's depth is said: "the first K results of both" or "both
    whole rankings"."""
    return ("both whole rankings" if depth is None else
            f"the first {depth} results of both (a positive past {depth} missed)")


def ann_member(c: BaseComparison, queries: list[str], gallery: tuple[str, ...]) -> dict:
    """Return the ``ann`` member of an evaluation in the eval report: the run
    (:meth:`AnnRun.record`), the mean recalls (``recall@k`` by ann-benchmarks' rule, the
    one the table shows; ``recall@k(tie-aware)`` by big-ann-benchmarks'), ``mAP_exact`` (the
    base's exact ranking at the depth compared, ``depth_compared``), ``mAP_exact_full`` (the
    base's whole ranking, for reference) and one entry per query: its recalls, exact AP,
    ΔAP, ΔP@1 and the positives the index lost with their exact ranks (1-based)."""
    assert c.run is not None
    out = c.run.record()
    out["shown_rule"] = RULES[0]
    out["method"] = c.method
    out["base"] = c.base
    if c.base is None:
        for k in RECALL_KS:
            out[f"recall@{k}"] = out[f"recall@{k}(tie-aware)"] = None
        out["mAP_exact"] = out["mAP_exact_full"] = None
        out["exact"] = NO_EXACT
        return out
    out["mAP_exact"] = _number(c.map_base)
    out["mAP_exact_full"] = _number(c.map_base_full)
    out["depth_compared"] = c.depth
    out["mAP"] = _number(c.map)
    out["queries"] = _query_entries(c, queries, gallery)
    return out


def _query_entries(c: BaseComparison, queries: list[str],
                   gallery: tuple[str, ...] | None) -> list[dict]:
    """Return one entry per query: its recalls, AP, exact AP at the depth compared, ΔAP,
    ΔP@1 and (with ``gallery``) the lost positives."""
    out = []
    recall = c.run.recall if c.run is not None else {}
    for q, name in enumerate(queries):
        entry: dict[str, object] = {"name": name}
        for key, values in recall.items():
            entry[key] = _number(float(values[q]))
        counted = bool(c.evaluated[q])
        entry["AP"] = _number(c.ap[q]) if counted else None
        entry["AP_exact"] = _number(c.ap_base[q]) if counted else None
        entry["delta_AP"] = _number(c.delta_ap[q]) if counted else None
        entry["delta_P@1"] = _number(c.delta_p1[q]) if counted else None
        if gallery is not None:
            entry["lost_positives"] = [{"name": gallery[p.gallery],
                                        "exact_rank": p.exact_rank + 1} for p in c.lost[q]]
        out.append(entry)
    return out


def sweep_record(sweep: Sweep) -> dict:
    """Return the ``sweep`` member of the eval report: per setting its mAP, mean recalls,
    search time, queries broken and every query's AP, ΔAP and recalls (``queries``), and per
    query the first setting that reaches its base's AP (null: none)."""
    settings = []
    for s in sweep.settings:
        c = s.compared
        settings.append({
            "setting": s.setting, "method": s.method, "mAP": _number(c.map),
            **{f"recall@{k}": s.mean_recall(k) for k in RECALL_KS},
            "search_s": s.run.search_s, "ms_per_query": s.run.ms_per_query,
            "build_s": s.run.build_s, "queries_broken": int(c.broken.size),
            "queries": _query_entries(c, list(sweep.queries), None)})
    return {
        "protocol": sweep.protocol,
        "base": sweep.base,
        "depth_compared": sweep.depth,
        "mAP_exact": _number(sweep.map_base),
        "mAP_exact_full": _number(sweep.map_base_full),
        "settings": settings,
        "first_reaching_exact": [
            {"name": name, "setting": sweep.settings[int(i)].setting if i >= 0 else None}
            for name, i, ok in zip(sweep.queries, sweep.first_reaching, sweep.evaluated,
                                   strict=True) if ok],
    }


def format_sweep(record: dict) -> list[str]:
    """Return the sweep's table as lines (values in percent, times in ms per query)."""
    depth = record.get("depth_compared")
    exact = (f"{record['base']} at this depth {_pct(record['mAP_exact'])} %, whole ranking "
             f"{_pct(record.get('mAP_exact_full'))} %" if depth is not None else
             f"{record['base']} {_pct(record['mAP_exact'])} %")
    lines = ["", f"sweep under {record['protocol']} of {record['base']} (recall@k by "
             f"ann-benchmarks' rule; exact mAP: {exact})",
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
    lines.append(f"  of {len(record['first_reaching_exact'])} evaluated, queries reaching "
                 f"their exact AP first: {said or 'none'}"
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
    lines += [f"  note: {n}" for n in member.get("notes", ())]
    if "exact" in member:
        return [*lines, f"  {member['exact']}"]
    if "queries" not in member:
        return lines
    lines.append(f"  mAP {_pct(member['mAP'])} % against {member['base']}'s "
                 f"{_pct(member['mAP_exact'])} %, {compared_at(member['depth_compared'])}; "
                 f"{member['base']}'s whole ranking: {_pct(member['mAP_exact_full'])} %")
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


__all__ = ["NO_EXACT", "SHOWN_RECALL", "ann_member", "compared_at", "format_ann",
           "format_sweep", "sweep_record"]
