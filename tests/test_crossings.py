"""Where features meet: every kind of method through every consumer that shows its numbers,
under two protocols (finite-sum and trapezoid AP). Each consumer's per-query AP and mAP of
one method must equal eval's JSON exactly: eval's table, compare's JSON (the method's side,
against an exact baseline), the figure's rows, the exported ranked lists (AP recomputed
from their rows, every row with its score) and the window's query table and summary.

A method kind is one line of :data:`KINDS` (the command-line words that give it, and the
method's name); a consumer is one function of :data:`CONSUMERS`. A new kind or consumer
enters the matrix by one line.
"""

from __future__ import annotations

import contextlib
import csv
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from irviewer.cli import build_parser, main
from tests.ann_cases import clustered_set, milvus_collection, unit

PROTOCOLS = ("instance", "holidays")  # finite-sum AP, trapezoid AP


@dataclass(frozen=True)
class Case:
    """A small instance set in the formats irviewer reads, with every kind of method file:
    ``npz`` its descriptors, ``other`` another descriptor file (compare's baseline), ``run``
    a precomputed ranking of ``npz``, ``index`` a FAISS index file over its gallery rows,
    ``db`` a Milvus Lite file holding its gallery."""

    manifest: Path
    npz: Path
    other: Path
    run: Path
    index: Path
    db: Path


def _case(root: Path) -> Case:
    manifest, npz = clustered_set(root, n_instances=10, per=6, dim=16, spread=0.9)
    z = np.load(npz)
    names, rows = [str(n) for n in z["names"]], z["features"]
    n_g = sum(1 for n in names if "_q" not in n)
    other = root / "other.npz"
    rng = np.random.default_rng(7)
    np.savez(other, names=np.array(names),
             features=(rows + rng.normal(scale=0.8, size=rows.shape)).astype(np.float32))
    gallery, queries = unit(rows[:n_g]), unit(rows[n_g:])
    sims = queries @ gallery.T
    order = np.argsort(-sims, axis=1, kind="stable")[:, :25]  # a run of depth 25
    run = root / "run.npz"
    np.savez(run, indices=order, scores=np.take_along_axis(sims, order, axis=1),
             query_names=np.array(names[n_g:]), gallery_names=np.array(names[:n_g]))
    index = root / "gallery.faiss"
    db = root / "gallery.db"
    try:
        import faiss

        built = faiss.IndexFlatIP(gallery.shape[1])
        built.add(gallery)
        faiss.write_index(built, str(index))
    except ImportError:
        pass
    with contextlib.suppress(ImportError):
        milvus_collection(str(db), "gallery", names[:n_g], gallery)
    return Case(manifest, npz, other, run, index, db)


@pytest.fixture(scope="module")
def case(tmp_path_factory) -> Case:
    return _case(tmp_path_factory.mktemp("crossings"))


#: Every kind of method: (the words after DATASET that give it, its name, the module it
#: needs). The name is the plan's (:meth:`OpenRequest.plan`).
KINDS: dict[str, tuple[Callable[[Case], list[str]], str, str | None]] = {
    "descriptors": (lambda c: ["-d", str(c.npz)], "desc.npz", None),
    "ranking file": (lambda c: ["--ranking", str(c.run)], "run.npz", None),
    "re-ranked": (lambda c: ["-d", str(c.npz), "--rerank", "aqe"], "desc.npz + aqe", None),
    "faiss factory": (lambda c: ["-d", str(c.npz), "--ann", "IVF4,Flat:nprobe=1"],
                      "desc.npz + IVF4,Flat:nprobe=1", "faiss"),
    "faiss file": (lambda c: ["-d", str(c.npz), "--ann", str(c.index)],
                   "desc.npz + gallery.faiss", "faiss"),
    "milvus lite": (lambda c: ["-d", str(c.npz), "--engine", str(c.db), "--collection",
                               "gallery"], "desc.npz + milvus:gallery", "milvus_lite"),
}

#: What a consumer shows of one method: per query name its AP (None: left out), and mAP.
Shown = tuple[dict[str, float | None], float | None]


def _eval_json(args: list[str], out: Path) -> dict:
    assert main(["eval", *args, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def _entry(report: dict, method: str) -> dict:
    (entry,) = [e for e in report["evaluations"] if e["method"] == method]
    return entry


def eval_json(case: Case, args: list[str], name: str, tmp: Path) -> Shown:
    entry = _entry(_eval_json(args, tmp / "eval.json"), name)
    return {q["name"]: q["AP"] for q in entry["queries"]}, entry["summary"]["mAP"]


def eval_table(case: Case, args: list[str], name: str, tmp: Path,
               capsys: pytest.CaptureFixture[str]) -> Shown:
    """The table eval prints: the mAP line (two decimals) of the method."""
    capsys.readouterr()
    assert main(["eval", *args]) == 0
    text = capsys.readouterr().out
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("mAP "))
    return {}, float(line.split()[1]) / 100


def compare_json(case: Case, args: list[str], name: str, tmp: Path) -> Shown:
    """compare's JSON, the method against an exact baseline (another descriptor file):
    the method's side of every paired query."""
    out = tmp / "compare.json"
    assert main(["compare", str(case.manifest), "-d", str(case.other), *args[1:],
                 "--json", str(out), "--permutations", "10"]) == 0
    rows = [c for c in json.loads(out.read_text())["comparisons"] if c["method"] == name]
    (row,) = rows
    return {q["name"]: q["method"] for q in row["queries"]}, row["mean_method"]


def figure_rows(case: Case, args: list[str], name: str, tmp: Path,
                monkeypatch: pytest.MonkeyPatch) -> Shown:
    """The figure's rows (every evaluated query, ``--worst`` all of them)."""
    pytest.importorskip("PySide6")
    from irviewer.gui import figure_painter

    caught = []
    monkeypatch.setattr(figure_painter, "export_figure",
                        lambda layout, path: caught.append(layout))
    assert main(["figure", *args, "--worst", "1000", "--out", str(tmp / "f.png")]) == 0
    rows = [r for r in caught[0].rows if r.method == name]
    return {r.query_name: r.ap for r in rows}, None


def exported_lists(case: Case, args: list[str], name: str, tmp: Path) -> Shown:
    """The exported ranked lists: AP recomputed from each query's rows (finite sum or
    trapezoid, as the protocol says), every positive in the denominator; every row has a
    score."""
    report = _eval_json([*args, "--export-csv", str(tmp / "lists")], tmp / "e.json")
    entry = _entry(report, name)
    protocol = entry["protocol"]["name"]
    with open(tmp / f"lists.{protocol}.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(r["score"] != "" for r in rows), "an exported row has no score"
    trapezoid = "trapezoid" in entry["conventions"]["mAP"]
    out: dict[str, float | None] = {}
    for q in entry["queries"]:
        mine = [r for r in rows if r["query"] == q["name"]]
        if q["AP"] is None:
            out[q["name"]] = None
            continue
        ranks = [int(r["rank"]) for r in mine if r["relevance"] == "positive"]
        out[q["name"]] = _ap(ranks, q["n_positives"], trapezoid)
    return out, entry["summary"]["mAP"]


def _ap(ranks: list[int], n_pos: int, trapezoid: bool) -> float:
    """AP of positives at 1-based ``ranks`` (sorted) among ``n_pos``: the finite sum of
    precision at each positive, or the trapezoid rule of Oxford's compute_ap."""
    total = 0.0
    for i, r in enumerate(sorted(ranks)):
        if trapezoid:
            old = i / (r - 1) if r > 1 else 1.0
            total += (old + (i + 1) / r) / 2
        else:
            total += (i + 1) / r
    return total / n_pos


def window_table(case: Case, args: list[str], name: str, tmp: Path, qtbot: object) -> Shown:
    """The window's query table (AP column, by query) and the summary's mAP (two
    decimals)."""
    from irviewer.gui.main_window import MainWindow
    from irviewer.opening.options import request_from_args

    parsed = build_parser("eval").parse_args(["eval", *args])
    w = MainWindow()
    qtbot.addWidget(w)  # type: ignore[attr-defined]
    w.open_request(request_from_args(parsed), sync=True)
    _method, protocol, ap, self_match = w.bar.choice()
    w.bar.set_choice(name, protocol, ap, self_match)
    assert w.evaluation is not None and w.bar.choice()[0] == name
    values = w.queries.model.column_values(1)
    names = [q.name for q in w.evaluation.dataset.queries]
    evaluated = w.evaluation.evaluated
    text = w.bar.summary.text()
    shown = float(re.search(r"mAP</b> ([0-9.]+)", text).group(1)) / 100  # type: ignore[union-attr]
    return ({n: (float(v) if ok else None) for n, v, ok in
             zip(names, values, evaluated, strict=True)}, shown)


CONSUMERS = ("eval table", "compare json", "figure", "exported lists", "window")


#: Methods whose ranking stops at its lists: exported lists hold all they rank.
LISTS_ONLY = ("ranking file", "faiss factory", "faiss file", "milvus lite")


@pytest.mark.parametrize("depth", [200, 12])  # every gallery image listed, or the first 12
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("kind", list(KINDS))
def test_every_consumer_shows_the_methods_own_numbers(kind, protocol, depth, case, tmp_path,
                                                      capsys, monkeypatch, qtbot):
    words, name, needs = KINDS[kind]
    if needs:
        pytest.importorskip(needs)
    args = [str(case.manifest), *words(case), "--protocol", protocol, "--depth", str(depth)]
    truth, mean = eval_json(case, args, name, tmp_path)
    assert any(v is not None for v in truth.values())
    shown = {
        "eval table": eval_table(case, args, name, tmp_path, capsys),
        "compare json": compare_json(case, args, name, tmp_path),
        "figure": figure_rows(case, args, name, tmp_path, monkeypatch),
        "exported lists": (exported_lists(case, args, name, tmp_path)
                           if depth >= 70 or kind in LISTS_ONLY else ({}, None)),
        "window": window_table(case, args, name, tmp_path, qtbot),
    }
    assert set(shown) == set(CONSUMERS)
    for consumer, (per_query, m) in shown.items():
        for q, ap in per_query.items():
            expected = truth[q]
            if consumer == "exported lists" or consumer == "window":
                assert (ap is None) == (expected is None), (consumer, q)
                if ap is not None:  # recomputed from rows / shown as float32 percent
                    assert ap == pytest.approx(expected, abs=1e-9 if consumer != "window"
                                               else 1e-6), (consumer, q)
            else:
                assert ap == expected, (consumer, q)
        if m is None:
            continue
        if consumer in ("eval table", "window"):  # printed with two decimals
            assert m == pytest.approx(round(mean * 100, 2) / 100, abs=1e-12), consumer
        else:
            assert m == mean, consumer
