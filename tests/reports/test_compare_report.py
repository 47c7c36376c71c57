"""The compare report on deltas that are the same to within float rounding: the JSON and the
table say in a sentence why the paired t-test's t is infinite."""

from __future__ import annotations

import numpy as np
import pytest

from irviewer.core.paired import PairedComparison
from irviewer.opening.opener import Opened, open_now
from irviewer.opening.request import OpenRequest
from irviewer.reports.compare_report import (
    ProtocolComparison,
    build_compare_report,
    format_compare_table,
)
from tests.cli.test_compare import BASE, BETTER, MANIFEST, NAMES


@pytest.fixture
def opened(tmp_path) -> Opened:
    """Two methods on a two-query instance set (the report names them; the comparisons
    below are given)."""
    (tmp_path / "set.csv").write_text(MANIFEST)
    for stem, vec in (("base", BASE), ("new", BETTER)):
        np.savez(tmp_path / f"{stem}.npz", names=np.array(NAMES),
                 features=np.array([vec[n] for n in NAMES], dtype=np.float32))
    return open_now(OpenRequest(tmp_path / "set.csv",
                                (tmp_path / "base.npz", tmp_path / "new.npz")))


def test_nearly_constant_deltas_are_said_so_in_the_json_and_the_table(opened):
    # The draw that made scipy warn of precision loss: deltas 1 and 1 - 2.22e-16.
    base, method = np.array([(0.0, 1.0), (2.22e-16, 1.0)]).T
    c = PairedComparison("base.npz", "new.npz", "AP", ("q0", "q1"), base, method)
    report = build_compare_report(opened, [ProtocolComparison("instance", c)])
    [row] = report["comparisons"]
    t = row["tests"]["paired_t"]
    assert (t["statistic"], t["p_value"]) == (None, 0.0)
    assert t["note"].startswith("every paired query changes by the same delta (to within "
                                "float rounding)")
    table = format_compare_table(report).splitlines()
    assert f"    paired t: {t['note']}" in table
    assert any(line.startswith("  new.npz") and "t ±inf p=0.0e+00" in line for line in table)


def test_varying_deltas_have_no_note(opened):
    c = PairedComparison("base.npz", "new.npz", "AP", ("q0", "q1", "q2"),
                         np.array([0.1, 0.5, 0.2]), np.array([0.3, 0.4, 0.9]))
    report = build_compare_report(opened, [ProtocolComparison("instance", c)])
    assert "note" not in report["comparisons"][0]["tests"]["paired_t"]
    assert "paired t:" not in format_compare_table(report)
