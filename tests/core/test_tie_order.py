"""The order of exact ties does not depend on the machine: per-query AP on binarised and
rounded descriptors is the same with one BLAS thread and with all of them, and equals a
rational-arithmetic ranking that orders equal cosines by gallery index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from irviewer.core.dataset import Dataset
from irviewer.core.protocols import Protocol
from tests.core import reference
from tests.core.helpers import exact_cosine_order, random_dataset, tied_vectors

ROOT = Path(__file__).resolve().parents[2]
FINITE = Protocol("t-finite", "test", positive=("positive",), ignored=("junk",), ap="finite",
                  self_match="remove")
TRAPEZOID = replace(FINITE, name="t-trapezoid", ap="trapezoid")
#: (kind of tied vectors, dimension): sign-binarised, rounded to one decimal, scaled signs.
DATA = [("signs", 128), ("decimal", 8), ("scaled signs", 64)]

SCRIPT = """
import json, sys
sys.path.insert(0, {root!r})
from tests.core.test_tie_order import per_query_ap
print(json.dumps(per_query_ap()))
"""


def data(kind: str, dim: int) -> tuple[Dataset, np.ndarray, np.ndarray]:
    """Return a seeded dataset and its query and gallery vectors (values as a file holds)."""
    rng = np.random.default_rng(3)
    ds = random_dataset(rng, 12, 400, max_per_group=40, with_self=True)
    return ds, tied_vectors(rng, kind, 12, dim), tied_vectors(rng, kind, 400, dim)


def per_query_ap() -> dict[str, list[float]]:
    """Return each data kind's and protocol's per-query AP, ranked by irviewer as
    ``irviewer eval`` ranks a descriptor file (its values, aligned by name)."""
    from irviewer.core.descriptors import Descriptors, DescriptorTable, align
    from irviewer.core.evaluation import evaluate
    from irviewer.core.ranking import rank

    out = {}
    for kind, dim in DATA:
        ds, qv, gv = data(kind, dim)
        tables = (DescriptorTable(tuple(q.name for q in ds.queries), qv),
                  DescriptorTable(ds.gallery, gv))
        ranking = rank(align(Descriptors(Path("d.npz"), tables, dim), ds), ds, k=30)
        for protocol in (FINITE, TRAPEZOID):
            out[f"{kind} {protocol.ap}"] = evaluate(ds, ranking, protocol).per_query["AP"].tolist()
    return out


def reference_ap() -> dict[str, list[float]]:
    """Return the same per-query APs from the exact order (rational arithmetic, equal
    cosines by gallery index) and the reference AP formulas."""
    out = {}
    for kind, dim in DATA:
        ds, qv, gv = data(kind, dim)
        orders = exact_cosine_order(qv, gv)
        for protocol, ap in ((FINITE, reference.ap_finite), (TRAPEZOID, reference.ap_trapezoid)):
            values = []
            for query, order in zip(ds.queries, orders, strict=True):
                positive = set(query.group("positive").tolist()) - {query.self_index}
                removed = set(query.group("junk").tolist()) | {query.self_index}
                listed = [int(g) in positive for g in order if int(g) not in removed]
                values.append(ap(listed, len(positive)) if positive else float("nan"))
            out[f"{kind} {protocol.ap}"] = values
    return out


def run(threads: str | None) -> dict[str, list[float]]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    if threads is not None:
        env |= {"OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads,
                "MKL_NUM_THREADS": threads}
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(root=str(ROOT))], env=env,
                          capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout)


def test_per_query_ap_is_the_same_with_one_thread_and_all_and_equals_the_exact_order():
    one, every = run("1"), run(None)
    expected = reference_ap()
    assert one.keys() == every.keys() == expected.keys()
    for key, values in expected.items():
        assert np.array_equal(one[key], every[key], equal_nan=True), key
        np.testing.assert_allclose(every[key], values, rtol=0, atol=1e-12, err_msg=key)


def test_the_data_do_tie_and_float32_does_not_keep_the_ties():
    """What the test above stands on: for every kind of data, the float32 cosines of a
    plain multiply (unit queries times the gallery, times the inverse norms) order the
    exact ties otherwise than by gallery index for some query."""
    from irviewer.core.descriptors import normalise_rows, row_norms

    for kind, dim in DATA:
        _, qv, gv = data(kind, dim)
        scores = (normalise_rows(qv) @ gv.T) * (1 / row_norms(gv))
        stable = [np.argsort(-row, kind="stable") for row in scores]
        exact = exact_cosine_order(qv, gv)
        assert any(not np.array_equal(a, b) for a, b in zip(stable, exact, strict=True)), kind


@pytest.mark.parametrize(("kind", "dim"), DATA)
def test_reference_orders_equal_cosines_by_gallery_index(kind, dim):
    """The reference itself: within a run of equal exact cosines, gallery indices ascend."""
    _, qv, gv = data(kind, dim)
    order = exact_cosine_order(qv[:2], gv)[1]
    cos = gv.astype(np.float64) @ qv[1].astype(np.float64) / np.linalg.norm(
        gv.astype(np.float64), axis=1)
    same = np.isclose(cos[order[1:]], cos[order[:-1]], rtol=0, atol=1e-12)
    assert same.any() and (order[1:][same] > order[:-1][same]).all()
