"""`irviewer eval` on tie-heavy (binary) descriptors: AP_best / AP_worst / AP_expected per
query and their means in the JSON summary, and one line in the table saying how far the
order of tied scores moves the mAP."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from irviewer.cli import main
from irviewer.opening.request import demo_request
from tests.core.helpers import binary_descriptors


def binary(path: Path) -> None:
    """Write the demo's strong descriptors cut to 12 signs: few distinct cosines."""
    binary_descriptors(demo_request().descriptors[0], path)


def test_binary_descriptors_report_their_tie_bounds(tmp_path, capsys):
    binary(tmp_path / "bin.npz")
    out = tmp_path / "r.json"
    assert main(["eval", "--demo", "-d", str(tmp_path / "bin.npz"), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    (ev,) = json.loads(out.read_text())["evaluations"]
    s, queries = ev["summary"], [q for q in ev["queries"] if "skipped" not in q]
    for q in queries:
        assert q["AP_worst"] - 1e-12 <= q["AP"] <= q["AP_best"] + 1e-12
        assert q["AP_worst"] - 1e-12 <= q["AP_expected"] <= q["AP_best"] + 1e-12
        assert q["tied"] == (q["AP_best"] - q["AP_worst"] > 1e-12)
    for key in ("AP_best", "AP_worst", "AP_expected", "P@1_best", "P@1_worst"):
        assert s[f"m{key}"] == pytest.approx(np.mean([q[key] for q in queries]), abs=1e-12)
    assert s["n_tied"] == sum(q["tied"] for q in queries) > 0
    line = (f"  ties: mAP {100 * s['mAP_worst']:.2f} to {100 * s['mAP_best']:.2f} by the "
            "order of tied scores")
    assert line in text
    assert ev["conventions"]["mAP_expected"].startswith("mean over every order")


def test_continuous_descriptors_print_no_tie_line(capsys):
    assert main(["eval", "--demo"]) == 0
    assert "ties: mAP" not in capsys.readouterr().out
