"""`irviewer eval --conventions`: the all_conventions table, whose row of each AP rule equals
`--ap RULE` run alone (the demo, and Oxford-format and re-id sets)."""

from __future__ import annotations

import json

import pytest

from irviewer.cli import main
from irviewer.core.convention_names import AP_RULES
from tests.corrections_cases import make_case


def run(tmp_path, *args: str, data: tuple[str, ...] = ("--demo",)) -> dict:
    out = tmp_path / f"r{len(list(tmp_path.iterdir()))}.json"
    assert main(["eval", *data, *args, "--json", str(out)]) == 0
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
    for rule in AP_RULES:
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


@pytest.mark.parametrize("family", ["oxford", "reid"])
def test_every_rule_alone_equals_its_row_on_another_family(tmp_path, family):
    """Under the family's own protocol (Oxford: trapezoid, own image kept; re-id: finite-sum,
    own camera removed), each ``--ap RULE`` gives its row's mAP and per-query AP, and names
    the rule in its protocol."""
    case = make_case(family, tmp_path / "data")
    data = (str(case.dataset), "-d", str(case.descriptors), *case.args)
    (ev,) = run(tmp_path, "--conventions", data=data)["evaluations"][:1]
    rows = {r["key"]: r for r in ev["all_conventions"]}
    values = {rows[f"AP {rule}"]["value"] for rule in AP_RULES}
    assert len(values) > 1  # the rules disagree on this ranking
    for rule in AP_RULES:
        (alone,) = run(tmp_path, "--ap", rule, data=data)["evaluations"][:1]
        assert alone["protocol"]["ap"] == rule
        assert rows[f"AP {rule}"]["value"] == pytest.approx(alone["summary"]["mAP"],
                                                            abs=1e-12)
        for mine, theirs in zip(ev["queries"], alone["queries"], strict=True):
            assert mine["all_conventions"][f"AP {rule}"] == pytest.approx(theirs["AP"],
                                                                          abs=1e-12)
