"""`irviewer compare`: hand-computed numbers in the JSON, the table naming each test, the
per-query CSV, Holm with three methods and the bad-input sentences (that it loads no Qt:
tests/test_architecture.py)."""

from __future__ import annotations

import csv
import json
import math
import re

import numpy as np
import pytest

from irviewer import __version__
from irviewer.cli import main

MANIFEST = """image,instance,role
a1.jpg,a,both
a2.jpg,a,gallery
a3.jpg,a,gallery
b1.jpg,b,both
b2.jpg,b,gallery
c1.jpg,c,gallery
"""
NAMES = ["a1", "a2", "a3", "b1", "b2", "c1"]
#: base.npz: a1 ranks b2 (0.9), a3 (0.5), a2 (0.2): AP (1/2 + 2/3) / 2 = 7/12;
#:           b1 ranks a2 (0.98), b2 (0.436): AP 1/2.
BASE = {"a1": [1, 0, 0], "a2": [0.2, 0.98, 0], "a3": [0.5, 0, 0.866], "b1": [0, 1, 0],
        "b2": [0.9, 0.436, 0], "c1": [-1, 0, 0]}
#: better.npz: a1 ranks a2 (0.9), a3 (0.5): AP 1; b1 ranks b2 (0.98) first: AP 1.
BETTER = {**BASE, "a2": [0.9, 0.436, 0], "b2": [0.2, 0.98, 0]}


@pytest.fixture
def case(tmp_path):
    (tmp_path / "set.csv").write_text(MANIFEST)
    for stem, vec in (("base", BASE), ("better", BETTER)):
        np.savez(tmp_path / f"{stem}.npz", names=np.array(NAMES),
                 features=np.array([vec[n] for n in NAMES], dtype=np.float32))
    return tmp_path


def run(case, *extra: str) -> int:
    return main(["compare", str(case / "set.csv"), "-d", str(case / "base.npz"),
                 "-d", str(case / "better.npz"), *extra])


def test_compare_json_by_hand(case, capsys):
    assert run(case, "--json", str(case / "c.json")) == 0
    report = json.loads((case / "c.json").read_text())
    assert report["irviewer_version"] == __version__
    assert [m["name"] for m in report["methods"]] == ["base.npz", "better.npz"]
    assert all(len(m["sha256"]) == 64 and m["path"].endswith(".npz")
               for m in report["methods"])
    [c] = report["comparisons"]
    assert {k: c[k] for k in ("protocol", "baseline", "method", "metric", "n_queries",
                              "wins", "losses", "ties")} == {
        "protocol": "instance", "baseline": "base.npz", "method": "better.npz",
        "metric": "AP", "n_queries": 2, "wins": 2, "losses": 0, "ties": 0}
    # deltas 5/12 (a1) and 1/2 (b1)
    assert c["mean_baseline"] == pytest.approx((7 / 12 + 1 / 2) / 2)
    assert c["mean_method"] == pytest.approx(1.0)
    assert c["mean_delta"] == pytest.approx((5 / 12 + 1 / 2) / 2)
    # t = mean / (s / sqrt 2) with s = (1/2 - 5/12) / sqrt 2: t = 11; 1 df: p = 1 - 2/pi atan t
    t = c["tests"]["paired_t"]
    assert t["statistic"] == pytest.approx(11.0, rel=1e-5)
    assert t["p_value"] == pytest.approx(1 - 2 / math.pi * math.atan(t["statistic"]),
                                         rel=1e-12)
    # +-5/12 +-1/2: |sum| is 11/12 twice and 1/12 twice: p = 2/4, exact, no seed
    assert c["tests"]["randomization"] == {"p_value": 0.5, "permutations": "exact",
                                           "seed": None}
    assert "holm_p_value" not in c["tests"]
    assert c["convention"].startswith("finite-sum AP")
    lo, hi = c["ci95"]
    assert 5 / 12 - 1e-6 <= lo <= hi <= 1 / 2 + 1e-6
    assert [(q["name"], q["delta"]) for q in c["queries"]] == [  # every paired query
        ("a1", pytest.approx(5 / 12)), ("b1", pytest.approx(0.5))]
    assert set(c["queries"][0]) == {"name", "baseline", "method", "delta"}


def test_json_lists_every_paired_query_and_the_table_the_largest_changes(tmp_path, capsys):
    out = tmp_path / "c.json"
    assert main(["compare", "--demo", "--permutations", "200", "--list", "2",
                 "--json", str(out)]) == 0
    table = capsys.readouterr().out
    [c] = json.loads(out.read_text())["comparisons"]
    assert len(c["queries"]) == c["n_queries"] == 22
    assert len({q["name"] for q in c["queries"]}) == 22
    # largest first; equal deltas in query order (sorted() is stable)
    losses = [q["name"] for q in sorted(c["queries"], key=lambda q: q["delta"])
              if q["delta"] < 0][:2]
    gains = [q["name"] for q in sorted(c["queries"], key=lambda q: -q["delta"])
             if q["delta"] > 0][:2]
    listed = re.findall(r"^ +[+-]\d+\.\d\d  (\S+) \(", table, re.M)
    assert listed == gains + losses


def test_compare_table_names_each_test(case, capsys):
    assert run(case) == 0
    out = capsys.readouterr().out
    assert "base.npz (baseline)" in out and "better.npz" in out
    assert "paired t" in out and "scipy.stats.ttest_1samp" in out
    assert "randomization" in out and "Smucker, Allan & Carterette" in out
    assert "percentile bootstrap" in out and "Efron & Tibshirani" in out
    assert "2/0/0" in out and f"{100 * (7 / 12 + 1 / 2) / 2:8.2f}" in out
    assert "p=0.5000 (exact)" in out
    assert "Holm" not in out


def test_three_methods_get_holm(case):
    extra = ("-d", str(case / "base.npz"), "--json", str(case / "c.json"),
             "--per-query", str(case / "q.csv"))
    assert run(case, *extra) == 0
    report = json.loads((case / "c.json").read_text())
    first, second = report["comparisons"]
    assert second["mean_delta"] == 0.0 and second["ties"] == 2
    assert second["tests"]["randomization"]["p_value"] == 1.0
    assert second["tests"]["paired_t"] == {
        "statistic": None, "p_value": None,
        "note": "every paired query has the same value under both methods: the paired t-test "
                "is undefined"}
    # Holm over p = 0.5 and 1: sorted 2 x 0.5 = 1, then max(1, 1 x 1) = 1
    assert first["tests"]["holm_p_value"] == 1.0
    assert second["tests"]["holm_p_value"] == 1.0
    with (case / "q.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4
    assert rows[0]["protocol"] == "instance" and rows[0]["metric"] == "AP"
    assert {r["query"] for r in rows} == {"a1", "b1"}
    a1 = next(r for r in rows if r["query"] == "a1" and r["method"] == "better.npz")
    assert float(a1["baseline_value"]) == pytest.approx(7 / 12)
    assert float(a1["delta"]) == pytest.approx(5 / 12)


def test_the_convention_as_scored_is_named(case, capsys):
    assert run(case, "--ap", "trapezoid", "--json", str(case / "c.json")) == 0
    [c] = json.loads((case / "c.json").read_text())["comparisons"]
    assert c["convention"].startswith("trapezoid AP")
    assert "metric AP (trapezoid AP" in capsys.readouterr().out
    # the trapezoid rule scores the same ranks lower than the finite sum's 7/12 and 1/2
    assert c["mean_baseline"] < (7 / 12 + 1 / 2) / 2 - 0.01


def test_metric_p_at_1(case, capsys):
    assert run(case, "--metric", "P@1", "--json", str(case / "c.json")) == 0
    [c] = json.loads((case / "c.json").read_text())["comparisons"]
    # P@1: a1 0 -> 1, b1 0 -> 1
    assert (c["metric"], c["mean_baseline"], c["mean_method"]) == ("P@1", 0.0, 1.0)
    assert c["tests"]["paired_t"]["statistic"] is None  # constant deltas: +inf
    assert c["tests"]["paired_t"]["p_value"] == 0.0
    # ... and the report says why, in the JSON and in the table
    note = c["tests"]["paired_t"]["note"]
    assert note.startswith("every paired query changes by the same delta: the deltas have "
                           "no variance, so the paired t-test gives t = +inf and p = 0")
    assert f"    paired t: {note}" in capsys.readouterr().out.splitlines()


def test_monte_carlo_options_reach_the_json(tmp_path):
    rng = np.random.default_rng(0)
    n = 20
    lines = ["image,instance,role"] + [f"q{i}.jpg,i{i},both" for i in range(n)] + [
        f"g{i}.jpg,i{i},gallery" for i in range(n)]
    (tmp_path / "set.csv").write_text("\n".join(lines) + "\n")
    names = [f"q{i}" for i in range(n)] + [f"g{i}" for i in range(n)]
    for stem in ("a", "b"):
        np.savez(tmp_path / f"{stem}.npz", names=np.array(names),
                 features=rng.normal(size=(2 * n, 8)).astype(np.float32))
    rc = main(["compare", str(tmp_path / "set.csv"), "-d", str(tmp_path / "a.npz"), "-d",
               str(tmp_path / "b.npz"), "--permutations", "999", "--seed", "5",
               "--json", str(tmp_path / "c.json")])
    assert rc == 0
    [c] = json.loads((tmp_path / "c.json").read_text())["comparisons"]
    r = c["tests"]["randomization"]
    assert (r["permutations"], r["seed"], c["n_queries"]) == (999, 5, 20)
    assert round(r["p_value"] * 1000) == pytest.approx(r["p_value"] * 1000)


@pytest.mark.parametrize(("extra", "message"), [
    (("--metric", "P@7"), "no metric 'P@7' under protocol instance; choose one of AP"),
    (("--protocol", "nope"), "unknown protocol 'nope'; known protocols:"),
    (("--permutations", "0"), "--permutations must be at least 1, not 0"),
])
def test_bad_input_is_one_sentence(case, capsys, extra, message):
    assert run(case, *extra) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"irviewer: error: {message}")
    assert err.count("\n") == 1


def test_one_method_is_refused(case, capsys):
    rc = main(["compare", str(case / "set.csv"), "-d", str(case / "base.npz")])
    assert rc == 2
    assert capsys.readouterr().err == ("irviewer: error: compare needs at least two methods "
                                       "(-d A B, or --ranking); the first is the baseline\n")


def test_demo_compares_strong_with_weak(capsys):
    assert main(["compare", "--demo", "--permutations", "200"]) == 0
    out = capsys.readouterr().out
    assert "strong.npz (baseline)" in out and "weak.npz" in out
