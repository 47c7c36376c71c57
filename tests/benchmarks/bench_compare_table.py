"""Benchmark: compare mode's query table at 20,000 queries (a script, not a test).

    python tests/benchmarks/bench_compare_table.py

Prints, each the median of 5 in this run, the ms to show the compared columns
(``set_compared``: ΔAP and the other AP as numpy columns, ``dataChanged``, no reset), to
sort by ΔAP, and to apply "got worse", each over the ms to sort the same table by AP (the
baseline the window's sort budget of 100 ms is set against).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.descriptors import AlignedDescriptors, normalise_rows
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import rank
from irviewer.gui.results.query_list import QueryListPanel
from irviewer.view.compare_view import compare_shown, paired_columns


def evaluations(n_q: int = 20_000, n_g: int = 300):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(1)
    queries = tuple(build_query(f"q{i:05d}", f"q{i:05d}",
                                {"positive": rng.choice(n_g, 3, replace=False)})
                    for i in range(n_q))
    ds = Dataset(name="big", format="bench", path=None,
                 gallery=tuple(f"g{i}" for i in range(n_g)), queries=queries,
                 groups=("positive",), protocols=("instance",))
    q = normalise_rows(rng.standard_normal((n_q, 16)))
    out = []
    for _ in range(2):
        g = rng.standard_normal((n_g, 16)).astype(np.float32)
        out.append(evaluate(ds, rank(AlignedDescriptors(q, g, None, 16), ds, k=20),
                            get_protocol("instance")))
    return out


def median_ms(action, app, repeats: int = 5) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        action()
        app.processEvents()
        times.append(1000 * (time.perf_counter() - t))
    return statistics.median(times)


def main() -> int:
    app = QApplication.instance() or QApplication([])
    a, b = evaluations()
    c = compare_shown("a", a, "b", b)
    other, delta = paired_columns(c, a.dataset)
    panel = QueryListPanel()
    panel.set_evaluation(a)
    panel.show()
    order = iter([Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder] * 10)
    base = median_ms(lambda: panel.proxy.sort(1, next(order)), app)
    show = median_ms(lambda: panel.set_compared("b", other, delta), app)
    sort = median_ms(lambda: panel.proxy.sort(7, next(order)), app)
    worse = median_ms(lambda: (panel.worse.setChecked(True), panel.worse.setChecked(False)),
                      app)
    print(f"20,000 queries: sort by AP {base:.1f} ms (baseline)")
    for name, ms in (("set_compared", show), ("sort by ΔAP", sort),
                     ("got worse on + off", worse)):
        print(f"  {name}: {ms:.1f} ms, ratio {ms / base:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
