"""`irviewer eval`: the table, the JSON schema, the per-query CSV and the exit codes."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

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
d1.jpg,d,query
"""


@pytest.fixture
def case(tmp_path):
    """A manifest and descriptors whose rankings are known by construction.

    Query a1 (itself removed) ranks b2 (0.9), a3 (0.5), a2 (0.2): positives at ranks 1, 2.
    Query b1 ranks a2 (0.98), then b2 (0.436): its positive at rank 1.
    d1 has no gallery image of its instance, so the reader removes it.
    """
    (tmp_path / "set.csv").write_text(MANIFEST)
    names = ["a1", "a2", "a3", "b1", "b2", "c1", "d1"]
    vec = {
        "a1": [1, 0, 0], "a2": [0.2, 0.98, 0], "a3": [0.5, 0, 0.866],
        "b1": [0, 1, 0], "b2": [0.9, 0.436, 0], "c1": [-1, 0, 0], "d1": [0, 0, 1],
    }
    features = np.array([vec[n] for n in names], dtype=np.float32)
    np.savez(tmp_path / "d.npz", features=features, names=np.array(names))
    return tmp_path


def test_eval_prints_a_table_with_conventions(case, capsys):
    rc = main(["eval", str(case / "set.csv"), "-d", str(case / "d.npz")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "protocol instance" in out
    assert "ties: stable: equal scores keep gallery order; computed scores nearer than" in out
    assert "finite-sum AP" in out
    assert ("removed = junk, the query's own image, where it is in the gallery\n"
            in out)
    assert "removed by the reader: 1 queries" in out and "d1" in out
    # a1: b2 (0.9) > a3 (0.5) > a2 (0.2): positives a3, a2 at ranks 1, 2 -> (1/2 + 2/3)/2
    # b1: a2 (0.98) > b2 (0.436): positive b2 at rank 1 -> 1/2
    ap_a1, ap_b1 = (1 / 2 + 2 / 3) / 2, 1 / 2
    assert f"{100 * (ap_a1 + ap_b1) / 2:9.2f}" in out


def test_json_schema_and_per_query_csv(case):
    out_json, out_csv = case / "r.json", case / "q.csv"
    rc = main(["eval", str(case / "set.csv"), "-d", str(case / "d.npz"), "--json",
               str(out_json), "--per-query", str(out_csv), "--ap", "trapezoid"])
    assert rc == 0
    report = json.loads(out_json.read_text())
    assert report["irviewer_version"] == __version__
    assert report["dataset"]["format"] == "manifest"
    assert report["dataset"]["n_queries"] == 2 and report["dataset"]["n_gallery"] == 6
    assert report["descriptors"]["dim"] == 3 and len(report["descriptors"]["sha256"]) == 64
    (ev,) = report["evaluations"]
    assert ev["protocol"]["name"] == "instance" and ev["protocol"]["ap"] == "trapezoid"
    assert ev["protocol"]["self_match"] == "remove"
    assert ev["protocol"]["ties"].startswith("stable")
    summary = ev["summary"]
    assert {"mAP", "mP@1", "mP@5", "mP@10", "n_evaluated", "n_skipped"} <= set(summary)
    assert summary["n_evaluated"] == 2 and summary["n_skipped"] == 0
    q = {entry["name"]: entry for entry in ev["queries"]}
    assert q["b1"]["first_positive_rank"] == 2 and q["b1"]["P@1"] == 0.0
    assert q["b1"]["n_positives"] == 1
    # trapezoid for b1: one positive at 0-based rank 1: (0/1 + 1/2) / 2
    assert q["b1"]["AP"] == pytest.approx(0.25)
    assert ev["removed_queries"][0]["name"] == "d1"
    rows = list(csv.DictReader(out_csv.read_text(encoding="utf-8").splitlines()))
    assert [r["name"] for r in rows] == ["a1", "b1"]
    assert float(rows[1]["AP"]) == pytest.approx(0.25)


def test_skipped_queries_are_null_in_json(case):
    out_json = case / "r.json"
    assert main(["eval", str(case / "set.csv"), "-d", str(case / "d.npz"), "--keep-orphans",
                 "--json", str(out_json)]) == 0
    ev = json.loads(out_json.read_text())["evaluations"][0]
    d1 = next(e for e in ev["queries"] if e["name"] == "d1")
    assert d1["AP"] is None and d1["P@1"] is None and d1["first_positive_rank"] is None
    assert d1["skipped"] == "no positive left after the protocol's removals"
    assert ev["summary"]["n_skipped"] == 1


@pytest.mark.parametrize(("args", "message"), [
    (["eval", "{d}/nope.csv", "-d", "{d}/d.npz"], "nope.csv: no such file or folder"),
    (["eval", "{d}/set.csv", "-d", "{d}/d.npz", "--protocol", "nosuch"],
     "unknown protocol 'nosuch'"),
    (["eval", "{d}/set.csv", "-d", "{d}/d.npz", "--protocol", "oxford"],
     "protocol oxford needs relevance group(s) good, ok, but this dataset has positive, junk"),
    (["eval", "{d}/set.csv", "-d", "{d}/d.npz", "--depth", "0"],
     "--depth must be at least 1"),
])
def test_bad_input_exits_2_with_one_line(case, capsys, args, message):
    rc = main([a.format(d=case) for a in args])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("irviewer: error: ") and message in err
    assert len(err.strip().splitlines()) == 1


def test_module_entry_point_and_exit_code_in_a_subprocess(case):
    ok = subprocess.run([sys.executable, "-m", "irviewer", "eval", str(case / "set.csv"),
                         "-d", str(case / "d.npz")], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run([sys.executable, "-m", "irviewer", "eval", str(case / "set.csv"),
                          "-d", str(case / "missing.npz")], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_unwritable_output_is_exit_2_not_a_traceback(case, capsys):
    rc = main(["eval", str(case / "set.csv"), "-d", str(case / "d.npz"), "--per-query",
               str(case / "missing" / "q.csv")])
    assert rc == 2
    assert "does not exist" in capsys.readouterr().err


def test_internal_error_is_exit_1_with_a_report(case, capsys, monkeypatch):
    import irviewer.cli as cli

    def broken(args):
        raise RuntimeError("boom")

    monkeypatch.setattr(cli.command_module("eval"), "run_eval", broken)
    rc = main(["eval", str(case / "set.csv"), "-d", str(case / "d.npz")])
    err = capsys.readouterr().err
    assert rc == 1 and "RuntimeError: boom" in err and "internal error" in err


def test_export_trec_then_score_the_run_as_a_ranking(tmp_path, capsys):
    """The exported run, read back with --ranking, gives the same mAP as the descriptors."""
    (tmp_path / "set.csv").write_text("image,instance,role\na1.jpg,a,both\na2.jpg,a,gallery\n"
                                      "b1.jpg,b,both\nb2.jpg,b,gallery\nc1.jpg,c,gallery\n")
    rng = np.random.default_rng(3)
    np.savez(tmp_path / "d.npz", features=rng.standard_normal((5, 8)).astype(np.float32),
             names=np.array(["a1", "a2", "b1", "b2", "c1"]))
    assert main(["eval", str(tmp_path / "set.csv"), "-d", str(tmp_path / "d.npz"),
                 "--export-trec", str(tmp_path / "out"), "--json",
                 str(tmp_path / "a.json")]) == 0
    assert (tmp_path / "out.instance.qrels").is_file()
    assert main(["eval", str(tmp_path / "set.csv"), "--ranking",
                 str(tmp_path / "out.instance.run"), "--json", str(tmp_path / "b.json")]) == 0
    a = json.loads((tmp_path / "a.json").read_text())
    b = json.loads((tmp_path / "b.json").read_text())
    assert b["descriptors"] is None and b["ranking"]["depth"] >= 1
    assert a["evaluations"][0]["summary"]["mAP"] == pytest.approx(
        b["evaluations"][0]["summary"]["mAP"])
    assert "precomputed lists" in capsys.readouterr().out


def test_export_trec_notes_reach_the_user(case, capsys):
    """A trapezoid protocol's export says that trec_eval will not reproduce its AP."""
    assert main(["eval", str(case / "set.csv"), "-d", str(case / "d.npz"), "--ap",
                 "trapezoid", "--export-trec", str(case / "exp")]) == 0
    err = capsys.readouterr().err
    assert "trapezoid" in err and err.startswith("note: ")


def test_each_number_names_its_convention_in_the_table_and_in_the_json(case, capsys):
    out_json = case / "r.json"
    assert main(["eval", str(case / "set.csv"), "-d", str(case / "d.npz"), "--json",
                 str(out_json)]) == 0
    table = capsys.readouterr().out
    (ev,) = json.loads(out_json.read_text())["evaluations"]
    said = ev["conventions"]
    assert said["mAP"] == ("finite-sum AP, mean of P@rank over positives, as in trec_eval map; "
                           "torchreid and fast-reid eval_market1501; VLFeat vl_pr info.ap")
    assert set(said) == {k for k in ev["summary"] if not k.startswith("n_")} | {
        "ties", "self_match"}
    for key, sentence in said.items():
        if key in ev["summary"] and not key.endswith(("_best", "_worst", "_expected")):
            assert re.search(rf"  {re.escape(key)} +[\d.]+  {re.escape(sentence)}\n", table)
    assert said["mAP_best"].startswith("tied scores ordered positives first")
    # the self-match rule: in the JSON its sentence, in the table the removed clause
    assert said["self_match"].startswith("a query's own image, where it is in the gallery, is "
                                         "removed")
    assert "removed = junk, the query's own image, where it is in the gallery\n" in table


@pytest.mark.parametrize(("argv", "new"), [(["eval", "--demo"], "--depth N"), ([], "--results N")])
def test_the_old_top_k_is_refused_naming_what_it_was_in_this_command(capsys, argv, new):
    """--top-k was eval's --depth but the viewer's --results: it is refused in one line that
    names the command's own option, never read with another meaning."""
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--top-k", "5"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == (
        f"irviewer: error: --top-k is no longer an option; use {new}\n")


def test_depth_sets_the_stored_list_depth(case):
    report = case / "r.json"
    run = case / "x"
    assert main(["eval", str(case / "set.csv"), "-d", str(case / "d.npz"), "--depth", "1",
                 "--export-trec", str(run), "--json", str(report)]) == 0
    lines = (case / "x.instance.run").read_text().splitlines()
    # A depth of 1 keeps one result per query, extended only down to the last positive
    # (a1's positives are 2nd and 3rd: 3 lines; b1's is 2nd: 2 lines); the default depth
    # lists the whole gallery after removals (5 lines each).
    assert [line.split()[0] for line in lines] == ["a1", "a1", "a1", "b1", "b1"]


def test_eval_help_says_depth_and_hides_the_old_name(capsys):
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    text = capsys.readouterr().out
    assert "--depth N" in text and "--top-k" not in text


def test_viewer_results_option_hides_its_old_name():
    from irviewer.cli.viewer import build_viewer_parser

    parser = build_viewer_parser()
    assert parser.parse_args([]).results == 50
    assert parser.parse_args(["--results", "30"]).results == 30
    assert "--top-k" not in parser.format_help() and "--results N" in parser.format_help()



def test_eval_help_points_to_the_metrics_page(capsys):
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "docs/metrics.md" in text
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"
    assert page.is_file()
    from irviewer.core.protocols import PROTOCOLS

    text = page.read_text(encoding="utf-8")
    for name in PROTOCOLS:  # every protocol the tool implements is described
        assert f"`{name}`" in text or f"`{name.rsplit('-', 1)[0]}-" in text, name


def test_the_viewer_takes_every_reader_option_eval_takes_and_builds_the_request(tmp_path):
    pytest.importorskip("PySide6")
    import argparse

    from irviewer.cli.eval import add_arguments
    from irviewer.cli.viewer import build_viewer_parser
    from irviewer.gui.app import request_from_args

    ev = argparse.ArgumentParser()
    add_arguments(ev)
    viewer = build_viewer_parser()
    viewer_flags = {s for a in viewer._actions for s in a.option_strings}
    reader_flags = {"--format", "--images", "--row-names", "--instance-rule", "--distractors",
                    "--ignore-label", "--ignore-labels", "--keep-orphans", "--protocol",
                    "--ap"}
    assert reader_flags <= {s for a in ev._actions for s in a.option_strings}
    assert reader_flags <= viewer_flags
    labels = tmp_path / "ignore.txt"
    labels.write_text("0\n# comment\n7\n")
    args = viewer.parse_args([str(tmp_path / "gt"), "-d", "x.fvecs", "--row-names", "rows.txt",
                              "--distractors", "d.txt", "--ignore-label", "3",
                              "--ignore-labels", str(labels), "--keep-orphans",
                              "--instance-rule", "dash", "--format", "oxford",
                              "--protocol", "oxford", "--images", "jpg", "--ap", "11point"])
    request = request_from_args(args)
    o = request.options
    assert request.format == "oxford" and request.protocol == "oxford"
    assert request.ap == "11point"
    assert request.descriptors == (Path("x.fvecs"),)
    assert o.row_names == Path("rows.txt") and o.distractors == Path("d.txt")
    assert o.ignore_labels == ("3", "0", "7") and o.drop_orphans is False
    assert o.instance_rule == "dash" and o.images == Path("jpg")


def test_scores_member_counts_the_hand_made_pairs(case, capsys):
    # a1 (itself removed): positives a2 0.2, a3 0.5; negatives b1 0, b2 0.9, c1 -1.
    # b1 (itself removed): positive b2 0.436; negatives a1 0, a2 0.98, a3 0, c1 0.
    out = case / "r.json"
    assert main(["eval", str(case / "set.csv"), "-d", str(case / "d.npz"), "--scores",
                 "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "scores: 3 positive and 7 negative pairs" in table
    scores = json.loads(out.read_text())["evaluations"][0]["scores"]
    assert (scores["n_positive"], scores["n_negative"]) == (3, 7)
    # the highest score, 0.98, is a negative: no threshold keeps 1 in 7 within 1 %
    assert [(p["far_target"], p["threshold"], p["tar"], p["far"])
            for p in scores["tar_at_far"]] == [(1e-4, None, 0.0, 0.0), (1e-3, None, 0.0, 0.0),
                                               (1e-2, None, 0.0, 0.0)]
    h = scores["histogram"]
    assert sum(h["positives"]) == 3 and sum(h["negatives"]) == 7
    assert len(h["edges"]) == len(h["positives"]) + 1 and h["edges"][0] == -1.0
    # c1 at -1 is in the first bin, a2's 0.98 in the bin [0.976..., 0.984...)
    assert h["negatives"][0] == 1 and h["edges"][-2] <= 0.98 < h["edges"][-1]


def test_without_scores_the_member_is_absent(case):
    out = case / "r.json"
    assert main(["eval", str(case / "set.csv"), "-d", str(case / "d.npz"), "--json",
                 str(out)]) == 0
    assert "scores" not in json.loads(out.read_text())["evaluations"][0]


def test_scores_of_a_ranking_file_exit_2_with_one_line(tmp_path, capsys):
    (tmp_path / "set.csv").write_text(MANIFEST)
    (tmp_path / "run.txt").write_text("a1 Q0 a2 1 0.9 r\nb1 Q0 b2 1 0.9 r\n")
    rc = main(["eval", str(tmp_path / "set.csv"), "--ranking", str(tmp_path / "run.txt"),
               "--scores"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "run.txt: score distributions need the score of every" in err


def test_export_csv_writes_each_protocols_ranked_lists(case, capsys):
    assert main(["eval", str(case / "set.csv"), "-d", str(case / "d.npz"), "--export-csv",
                 str(case / "lists")]) == 0
    rows = list(csv.reader((case / "lists.instance.csv").read_text().splitlines()))
    # a1 (itself removed) ranks b2 0.9, a3 0.5, a2 0.2, b1 0, c1 -1 (down to its last positive,
    # the whole list here); b1 ranks a2 0.98, then its positive b2
    assert rows[0] == ["query", "rank", "image", "score", "relevance"]
    a1 = [(r, g, rel) for q, r, g, _, rel in rows[1:] if q == "a1"]
    assert a1[:3] == [("1", "b2", "negative"), ("2", "a3", "positive"),
                      ("3", "a2", "positive")]
    assert [(g, rel) for q, _, g, _, rel in rows[1:] if q == "b1"][:2] == [
        ("a2", "negative"), ("b2", "positive")]
