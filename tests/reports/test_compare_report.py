"""The compare report on deltas that are the same to within float rounding: the JSON and the
table say in a sentence why the paired t-test's t is infinite."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np

from irviewer.core.paired import PairedComparison
from irviewer.reports.compare_report import (
    ProtocolComparison,
    build_compare_report,
    format_compare_table,
)


def opened_stub() -> SimpleNamespace:
    """What the report reads of an opened dataset and its two methods."""
    dataset = SimpleNamespace(path=Path("set.csv"), format="instance", n_queries=2,
                              n_gallery=4)
    methods = {name: SimpleNamespace(name=name, path=Path(name), sha256="0" * 64, rerank=None)
               for name in ("base.npz", "new.npz")}
    return SimpleNamespace(dataset=dataset, methods=methods)


def test_nearly_constant_deltas_are_said_so_in_the_json_and_the_table():
    # The draw that made scipy warn of precision loss: deltas 1 and 1 - 2.22e-16.
    base, method = np.array([(0.0, 1.0), (2.22e-16, 1.0)]).T
    c = PairedComparison("base.npz", "new.npz", "AP", ("q0", "q1"), base, method)
    report = build_compare_report(opened_stub(), [ProtocolComparison("instance", c)])
    [row] = report["comparisons"]
    t = row["tests"]["paired_t"]
    assert (t["statistic"], t["p_value"]) == (None, 0.0)
    assert t["note"].startswith("every paired query changes by the same delta (to within "
                                "float rounding)")
    table = format_compare_table(report).splitlines()
    assert f"    paired t: {t['note']}" in table
    assert any(line.startswith("  new.npz") and "t ±inf p=0.0e+00" in line for line in table)


def test_varying_deltas_have_no_note():
    c = PairedComparison("base.npz", "new.npz", "AP", ("q0", "q1", "q2"),
                         np.array([0.1, 0.5, 0.2]), np.array([0.3, 0.4, 0.9]))
    report = build_compare_report(opened_stub(), [ProtocolComparison("instance", c)])
    assert "note" not in report["comparisons"][0]["tests"]["paired_t"]
    assert "paired t:" not in format_compare_table(report)
