"""`irviewer eval --conventions`: the all_conventions table of the demo, whose finite-sum
and trapezoid rows equal `--ap finite` and `--ap trapezoid` run alone."""

from __future__ import annotations

import json

import pytest

from irviewer.cli import main


def run(tmp_path, *args: str) -> dict:
    out = tmp_path / f"r{len(list(tmp_path.iterdir()))}.json"
    assert main(["eval", "--demo", *args, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_demo_conventions_rows_equal_each_rule_alone(tmp_path, capsys):
    (ev,) = run(tmp_path, "--conventions")["evaluations"]
    text = capsys.readouterr().out
    assert "every convention on this ranking (* the protocol's own):" in text
    rows = {r["key"]: r for r in ev["all_conventions"]}
    assert {"AP finite", "AP trapezoid", "AP interpolated", "AP 11point",
            "AP finite retrieved", "P@10 true", "P@10 revisitop"} <= set(rows)
    assert any(k.startswith("AP finite self-match ") for k in rows)
    assert [k for k, r in rows.items() if r["protocol_own"] and r["metric"] == "AP"] == [
        "AP finite"]
    for rule in ("finite", "trapezoid"):
        (alone,) = run(tmp_path, "--ap", rule)["evaluations"]
        assert rows[f"AP {rule}"]["value"] == pytest.approx(alone["summary"]["mAP"],
                                                            abs=1e-12)
        for mine, theirs in zip(ev["queries"], alone["queries"], strict=True):
            assert mine["all_conventions"][f"AP {rule}"] == pytest.approx(theirs["AP"],
                                                                          abs=1e-12)
        assert f"{100 * alone['summary']['mAP']:9.2f}" in text


def test_without_the_flag_the_report_has_no_table(tmp_path):
    (ev,) = run(tmp_path)["evaluations"]
    assert "all_conventions" not in ev and "all_conventions" not in ev["queries"][0]
