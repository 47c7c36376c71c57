"""Every convention side by side: each row equals the same ranking evaluated under that
convention alone, on every correctable family (self images, junk, revisited, re-id)."""

from __future__ import annotations

import numpy as np
import pytest

from irviewer.core import metrics
from irviewer.core.ap_rules import average_precision
from irviewer.core.convention_names import AP_RULES
from irviewer.core.conventions import all_conventions
from irviewer.core.evaluation import evaluate
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest
from tests.corrections_cases import FAMILIES, make_case


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return np.allclose(np.asarray(a, float), np.asarray(b, float), equal_nan=True,
                       atol=1e-12, rtol=0)


@pytest.mark.parametrize("family", FAMILIES)
def test_rows_equal_each_convention_alone(family, tmp_path):
    case = make_case(family, tmp_path)
    opened = open_now(OpenRequest(case.dataset, (case.descriptors,), options=case.options))
    for protocol in opened.protocols:
        ev = opened.evaluation(opened.first.name, protocol)
        rows = {r.key: r for r in all_conventions(ev)}
        own = [r for r in rows.values() if r.own and r.metric == "AP"]
        assert [r.key for r in own] == [f"AP {ev.protocol.ap}"]
        for rule in ("finite", "trapezoid"):
            alone = evaluate(ev.dataset, ev.ranking, ev.protocol.override(ap=rule))
            assert same(rows[f"AP {rule}"].values, alone.per_query["AP"])
            assert rows[f"AP {rule}"].mean == pytest.approx(alone.summary["mAP"], abs=1e-12)
        flip = "keep" if ev.protocol.self_match == "remove" else "remove"
        alone = evaluate(ev.dataset, ev.ranking, ev.protocol.override(self_match=flip))
        row = rows[f"AP {ev.protocol.ap} self-match {flip}"]
        assert same(row.values, alone.per_query["AP"])
        assert row.mean == pytest.approx(alone.summary["mAP"], abs=1e-12)
        p = ev.positives
        batch = metrics.ragged(p.ranks, p.offsets, p.n_positives)
        for rule in AP_RULES:
            assert same(rows[f"AP {rule}"].values,
                        average_precision(batch, rule, ev.protocol.ap_positives))
        for k in ev.protocol.ks:
            assert same(rows[f"P@{k} true"].values, ev.per_query[f"P@{k}"])
            assert same(rows[f"P@{k} revisitop"].values,
                        batch.precision_at_k_revisitop(k))
