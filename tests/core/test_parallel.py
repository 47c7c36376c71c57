"""Row parts shared between threads: every row once, in order; errors are raised."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from irviewer.core import parallel
from irviewer.core.descriptors import row_norms


@pytest.mark.parametrize(("n_rows", "n_values", "min_values", "workers", "expected"), [
    (70, 350_000, 100_000, 2, [(0, 35), (35, 70)]),
    (70, 350_000, 100_000, 4, [(0, 23), (23, 47), (47, 70)]),  # 3 parts of >= 100k values
    (70, 50_000, 100_000, 4, [(0, 70)]),                       # too small to split
    (3, 10**9, 1, 4, [(0, 1), (1, 2), (2, 3)]),                # never more parts than rows
    (0, 0, 1, 4, [(0, 0)]),
])
def test_row_parts(monkeypatch, n_rows, n_values, min_values, workers, expected):
    monkeypatch.setattr(parallel, "WORKERS", workers)
    assert parallel.row_parts(n_rows, n_values, min_values) == expected


def test_run_parts_runs_every_part_on_several_threads(monkeypatch):
    monkeypatch.setattr(parallel, "WORKERS", 3)
    seen: list[tuple[int, int, str]] = []
    barrier = threading.Barrier(2, timeout=10)  # two parts must be running at once

    def work(a: int, b: int) -> None:
        if a in (0, 10):
            barrier.wait()
        seen.append((a, b, threading.current_thread().name))

    parallel.run_parts(work, [(0, 10), (10, 20), (20, 30)])
    assert sorted((a, b) for a, b, _ in seen) == [(0, 10), (10, 20), (20, 30)]
    assert len({name for *_, name in seen}) >= 2


def test_run_parts_raises_a_part_error_after_all_parts_ended(monkeypatch):
    monkeypatch.setattr(parallel, "WORKERS", 2)
    done = []

    def work(a: int, b: int) -> None:
        if a == 5:
            raise ValueError("part 5")
        done.append(a)

    with pytest.raises(ValueError, match="part 5"):
        parallel.run_parts(work, [(0, 5), (5, 10)])
    assert done == [0]


def test_run_each_returns_every_result_in_order_from_several_threads(monkeypatch):
    monkeypatch.setattr(parallel, "WORKERS", 2)
    barrier = threading.Barrier(2, timeout=10)  # both items must be running at once
    names: set[str] = set()

    def work(x: int) -> int:
        barrier.wait()
        names.add(threading.current_thread().name)
        return x * 10

    assert parallel.run_each(work, [1, 2]) == [10, 20]
    assert len(names) == 2
    assert parallel.run_each(work, []) == []


def test_run_each_raises_an_items_error(monkeypatch):
    monkeypatch.setattr(parallel, "WORKERS", 2)

    def work(x: int) -> int:
        if x == 2:
            raise ValueError("item 2")
        return x

    with pytest.raises(ValueError, match="item 2"):
        parallel.run_each(work, [1, 2, 3])


def test_row_norms_are_the_same_split_between_threads(monkeypatch):
    m = np.random.default_rng(3).standard_normal((1000, 64)).astype(np.float32)
    m[17] = 1e25  # summed again in float64, in whichever thread
    one = row_norms(m, chunk_rows=7)
    monkeypatch.setattr(parallel, "WORKERS", 4)
    monkeypatch.setattr("irviewer.core.descriptors._PARALLEL_VALUES", 1)
    np.testing.assert_array_equal(row_norms(m, chunk_rows=7), one)
    rows = np.arange(999, -1, -1)
    np.testing.assert_array_equal(row_norms(m, rows, chunk_rows=7), one[::-1])
    np.testing.assert_allclose(one, np.linalg.norm(m.astype(np.float64), axis=1), rtol=1e-6)
