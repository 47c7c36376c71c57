"""The eval report's JSON: per-query columns built at once and written one line per query,
the same document as the per-entry build written by json.dumps(indent=1)."""

from __future__ import annotations

import json
import math

import numpy as np

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import SKIP_REASON, get_protocol
from irviewer.core.ranking import rank
from irviewer.reports.eval_report import ScoredMethod, build_report, report_json
from tests.core.helpers import aligned


def per_entry_queries(dataset, ev) -> list[dict]:  # type: ignore[no-untyped-def]
    """The per-query entries as build_report wrote them one value at a time (before
    the columns): the reference the column build must equal."""
    out = []
    for i, q in enumerate(dataset.queries):
        entry: dict[str, object] = {"name": q.name}
        skipped = ev.positives.n_positives[i] == 0
        for key, values in {**ev.per_query, **ev.ties.per_query}.items():
            value = values[i]
            if key == "first_positive_rank":
                entry[key] = None if value < 0 else int(value) + 1
            elif key == "n_positives":
                entry[key] = int(value)
            elif skipped or (isinstance(value, np.floating) and math.isnan(value)):
                entry[key] = None
            else:
                entry[key] = float(value) if isinstance(value, np.floating) else int(value)
        entry["tied"] = bool(ev.ties.tied[i])
        if skipped:
            entry["skipped"] = SKIP_REASON
        out.append(entry)
    return out


def scored() -> tuple[Dataset, list]:
    rng = np.random.default_rng(3)
    n_g = 40
    queries = [build_query(f"q{i}", f"q{i}", {"positive": rng.choice(n_g, 3, replace=False)})
               for i in range(6)]
    queries.append(build_query("none", "none", {"positive": []}))  # skipped
    queries.append(build_query("ünïcode \"q\"", "u", {"positive": [1, 2]}))
    ds = Dataset(name="t", format="test", path=None, gallery=tuple(f"g{i}" for i in range(n_g)),
                 queries=tuple(queries), groups=("positive",),
                 protocols=("instance", "holidays"))
    r = rank(aligned(rng.standard_normal((len(queries), 8)), rng.standard_normal((n_g, 8))),
             ds, k=10)
    return ds, [evaluate(ds, r, get_protocol(p)) for p in ds.protocols]


def test_columns_equal_the_per_entry_build_and_the_text_parses_back_equal():
    ds, evs = scored()
    report = build_report(ds, [ScoredMethod("d.npz", {"descriptors": {
        "path": "d.npz", "dim": 8, "sha256": "0"}}, evs)])
    for ev, out in zip(evs, report["evaluations"], strict=True):
        assert out["queries"] == per_entry_queries(ds, ev)
    assert report["evaluations"][0]["queries"][6]["skipped"] == SKIP_REASON
    text = report_json(report)
    assert json.loads(text) == json.loads(json.dumps(report, indent=1, allow_nan=False))
    assert text.endswith("}\n") and "NaN" not in text


def test_one_line_per_query_inside_the_indented_document():
    ds, evs = scored()
    report = build_report(ds, [ScoredMethod("d", {"descriptors": None}, evs)])
    lines = report_json(report).splitlines()
    first = next(i for i, line in enumerate(lines) if line.strip() == '"queries": [')
    indent = len(lines[first]) - len(lines[first].lstrip())
    entries = lines[first + 1:first + 1 + ds.n_queries]
    assert all(line.startswith(" " * (indent + 1) + '{"name": ') for line in entries)
    assert lines[first + 1 + ds.n_queries] == " " * indent + "],"
    empty = dict(report, evaluations=[dict(report["evaluations"][0], queries=[])])
    assert json.loads(report_json(empty))["evaluations"][0]["queries"] == []
