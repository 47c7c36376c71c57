"""`irviewer eval` with several methods: one row per method in the table, one `evaluations`
entry per method in the JSON, in the order given, each equal to the method scored alone."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from irviewer.cli import main
from tests.cli.test_eval import case  # noqa: F401  (the fixture)


@pytest.fixture
def two(case):  # noqa: F811
    """``case`` with a second descriptor file (every vector permuted) and a TREC run."""
    with np.load(case / "d.npz") as f:
        features, names = f["features"], f["names"]
    np.savez(case / "e.npz", features=features[:, ::-1].copy(), names=names)
    (case / "run.txt").write_text("a1 Q0 a2 1 3.0 t\na1 Q0 a3 2 2.0 t\nb1 Q0 b2 1 1.0 t\n")
    return case


def alone(case, *method: str) -> dict:  # noqa: F811
    out = case / "alone.json"
    assert main(["eval", str(case / "set.csv"), *method, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_several_methods_one_entry_each_in_order_equal_to_each_alone(two, capsys):
    out = two / "r.json"
    assert main(["eval", str(two / "set.csv"), "-d", str(two / "e.npz"), "-d",
                 str(two / "d.npz"), "--ranking", str(two / "run.txt"), "--json",
                 str(out), "--per-query", str(two / "q.csv")]) == 0
    text = capsys.readouterr().out
    report = json.loads(out.read_text())
    assert [e["method"] for e in report["evaluations"]] == ["e.npz", "d.npz", "run.txt"]
    assert [m["name"] for m in report["methods"]] == ["e.npz", "d.npz", "run.txt"]
    # The first method keeps the top-level identity a one-method reader looks at.
    assert report["descriptors"]["path"].endswith("e.npz")
    assert report["methods"][2]["ranking"]["path"].endswith("run.txt")
    for entry, method in zip(report["evaluations"], (["-d", str(two / "e.npz")],
                                                     ["-d", str(two / "d.npz")],
                                                     ["--ranking", str(two / "run.txt")]),
                             strict=True):
        (single,) = alone(two, *method)["evaluations"]
        assert entry["summary"] == single["summary"]
        assert entry["queries"] == single["queries"]
    rows = [line.split() for line in text.splitlines()
            if line.strip().split(" ")[0] in ("e.npz", "d.npz", "run.txt")]
    assert [r[0] for r in rows] == ["e.npz", "d.npz", "run.txt"]
    header = next(line.split() for line in text.splitlines()
                  if line.strip().startswith("method ") and "mAP" in line)
    for row, entry in zip(rows, report["evaluations"], strict=True):
        map_cell = row[header.index("mAP")]
        assert map_cell == f"{100 * entry['summary']['mAP']:.2f}"
    with (two / "q.csv").open() as f:
        csv_rows = list(csv.DictReader(f))
    assert [r["method"] for r in csv_rows][::2] == ["e.npz", "d.npz", "run.txt"]


def test_one_method_report_keeps_its_shape(case):  # noqa: F811
    report = alone(case, "-d", str(case / "d.npz"))
    (entry,) = report["evaluations"]
    assert entry["method"] == "d.npz" and report["methods"][0]["name"] == "d.npz"
    assert report["descriptors"] == {k: v for k, v in report["methods"][0].items()
                                     if k != "name"}["descriptors"]


def test_writing_one_method_s_files_refuses_several(two, capsys):
    rc = main(["eval", str(two / "set.csv"), "-d", str(two / "e.npz"), "-d",
               str(two / "d.npz"), "--export-trec", str(two / "x")])
    err = capsys.readouterr().err
    assert rc == 2 and "--export-trec writes one method's results; 2 methods" in err


def test_several_methods_each_get_their_conventions_table(two, capsys):
    assert main(["eval", str(two / "set.csv"), "-d", str(two / "e.npz"), "-d",
                 str(two / "d.npz"), "--conventions"]) == 0
    text = capsys.readouterr().out
    assert "  e.npz:\n    AP  finite-sum" in text and "  d.npz:\n    AP  finite-sum" in text
