"""``irviewer audit`` end to end: the table, the JSON schema, the corrections CSV (read back and
applied, the suspects it fixes are gone) and bad input as one sentence (that it loads no
Qt: tests/test_architecture.py)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from irviewer.cli import main
from irviewer.core.file_digests import file_sha256
from irviewer.formats.corrections_file import ACCEPT, COLUMNS
from tests.core.audit_synth import write_synth_set


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    """A small instance set with 4 relabelled images and two descriptor files."""
    return write_synth_set(tmp_path_factory.mktemp("synth"), n_labels=25, per_label=6,
                           n_injected=4, n_decoys=3, dim=64, noise=0.8, seed=3)


def run_audit(synth, *extra: str) -> int:  # type: ignore[no-untyped-def]
    a, b = synth.descriptors
    return main(["audit", str(synth.manifest), "-d", str(a), "-d", str(b), *extra])


def test_table_json_schema_and_ranks(synth, tmp_path, capsys):
    out = tmp_path / "audit.json"
    assert run_audit(synth, "--json", str(out), "--top", "10") == 0
    table = capsys.readouterr().out
    assert "protocol instance, 2 method(s): A.npz, B.npz" in table
    doc = json.loads(out.read_text())
    assert set(doc) == {"irviewer_version", "dataset", "methods", "suspects"}
    assert doc["methods"] == [{"path": str(p), "sha256": file_sha256(p)}
                              for p in synth.descriptors]
    assert doc["dataset"]["format"] == "manifest" and doc["dataset"]["n_queries"] == 50
    suspects = doc["suspects"]
    assert 4 <= len(suspects) <= 10
    for i, s in enumerate(suspects, 1):
        assert set(s) == {"rank", "kind", "query", "queries", "item", "labelled", "suggested",
                          "corrections", "score", "log_odds", "evidence", "methods_agreeing"}
        assert s["query"] is None or s["query"] in s["queries"]
        for row in s["corrections"]:  # every correction, as (queries, item, label) rows
            assert set(row) == {"queries", "item", "label"} and row["item"] == s["item"]
            assert set(row["queries"]) <= set(s["queries"])
        assert s["rank"] == i and 0 <= s["score"] <= 1 and s["methods_agreeing"] in (1, 2)
        assert s["item"] in table
    assert [s["log_odds"] for s in suspects] == sorted((s["log_odds"] for s in suspects),
                                                       reverse=True)
    assert [s["score"] for s in suspects] == sorted((s["score"] for s in suspects),
                                                    reverse=True)
    top = {s["item"]: s for s in suspects[:4]}
    assert set(top) == set(synth.injected)  # the four relabelled images come first
    for item, (written, true) in synth.injected.items():
        assert (top[item]["query"], top[item]["labelled"], top[item]["suggested"]) == (
            None, written, true)
        assert top[item]["corrections"] == [{"queries": [], "item": item, "label": true}]


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == (*COLUMNS, ACCEPT)
        return list(reader)


def test_csv_is_a_corrections_file_that_fixes_what_it_lists(synth, tmp_path):
    out = tmp_path / "review.csv"
    assert run_audit(synth, "--csv", str(out), "--top", "4") == 0
    rows = read_rows(out)
    assert {r["item"] for r in rows} == set(synth.injected)
    for r in rows:
        assert r["query"] == ""  # image-level relabels
        assert r["label"] == synth.injected[r["item"]][1]
        assert r["author"] == "irviewer audit" and r["time"].endswith("Z")
        assert r["note"].startswith("label_disagreement (") and r["accept"] == ""
    from irviewer.formats.corrections_file import read_corrections
    from irviewer.formats.registry import read_dataset

    dataset = read_dataset(synth.manifest, None)
    assert read_corrections(out, dataset) == ()  # nothing reviewed yet: nothing applies
    # The reviewer takes three of the four suggestions; the file is a corrections file whose
    # accepted rows apply, and auditing the corrected labels leaves only the fourth.
    text = out.read_text().splitlines()
    text = [text[0]] + [line + ("yes" if i < 3 else "no") for i, line in
                        enumerate(text[1:])]
    out.write_text("\n".join(text) + "\n")
    taken = [r["item"] for r in read_rows(out)[:3]]
    assert [(c.query, c.item, c.label) for c in read_corrections(out, dataset)] == [
        ("", item, synth.injected[item][1]) for item in taken]
    again = tmp_path / "again.json"
    assert run_audit(synth, "--corrections", str(out), "--json", str(again)) == 0
    still = {s["item"] for s in json.loads(again.read_text())["suspects"]}
    assert still & set(synth.injected) == set(synth.injected) - set(taken)


def test_csv_leaves_out_suspects_without_a_single_fix(synth, tmp_path):
    out = tmp_path / "all.csv"
    js = tmp_path / "all.json"
    assert run_audit(synth, "--csv", str(out), "--json", str(js), "--top", "0",
                     "--min-score", "0.3") == 0
    suspects = json.loads(js.read_text())["suspects"]
    with_fix = [s for s in suspects if s["suggested"] is not None]
    assert len(read_rows(out)) == len(with_fix)


@pytest.mark.parametrize(("extra", "message"), [
    (["--top", "-1"], "--top must be 0 (all) or more, not -1"),
    (["--min-score", "3"], "the minimum score must be in [0, 1], not 3.0"),
    (["--protocol", "nosuch"], "unknown protocol 'nosuch'"),
    (["--protocol", "oxford"], "protocol oxford needs relevance group(s) good, ok"),
    (["--json", "/nonexistent/dir/out.json"], "/nonexistent/dir/out.json: the folder"),
])
def test_bad_input_is_exit_2_with_one_line(synth, capsys, extra, message):
    assert run_audit(synth, *extra) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err


def test_missing_files_are_one_sentence(synth, tmp_path, capsys):
    a, _ = synth.descriptors
    assert main(["audit", str(tmp_path / "nope.csv"), "-d", str(a)]) == 2
    assert "nope.csv" in capsys.readouterr().err
    assert main(["audit", str(synth.manifest), "-d", str(tmp_path / "missing.npz")]) == 2
    assert "missing.npz" in capsys.readouterr().err


def test_no_method_is_a_usage_error(synth, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["audit", str(synth.manifest)])
    assert exc.value.code == 2
    assert "give at least one -d FILE or --ranking FILE" in capsys.readouterr().err
