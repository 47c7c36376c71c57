"""The cores a process may use (affinity and the container's CPU quota, cgroup v1 and v2),
the user's cap (the option wins over the variable) and the libraries held to it."""

from __future__ import annotations

import os

import pytest
from threadpoolctl import threadpool_info

from irviewer.core import parallel, threads
from irviewer.core.errors import InputError


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_cgroup_v2_quota_is_the_smallest_from_the_process_cgroup_up(tmp_path):
    write(tmp_path / "cpu.max", "max 100000\n")
    write(tmp_path / "user.slice" / "cpu.max", "600000 100000\n")  # 6 CPUs
    write(tmp_path / "user.slice" / "job" / "cpu.max", "250000 100000\n")  # 2.5: 3 threads
    assert threads.quota_cores(tmp_path, "0::/user.slice/job\n") == 3
    write(tmp_path / "user.slice" / "job" / "cpu.max", "max 100000\n")
    assert threads.quota_cores(tmp_path, "0::/user.slice/job\n") == 6
    assert threads.quota_cores(tmp_path, "0::/\n") is None  # no quota: "max"


def test_cgroup_v2_in_a_container_reads_its_own_root(tmp_path):
    """A container sees its own cgroup at the mount's root, under a path that is the host's."""
    write(tmp_path / "cpu.max", "400000 100000\n")
    assert threads.quota_cores(tmp_path, "0::/kubepods/pod1/abc\n") == 4


def test_cgroup_v1_quota(tmp_path):
    cpu = tmp_path / "cpu,cpuacct"
    write(cpu / "cpu.cfs_quota_us", "-1\n")
    write(cpu / "cpu.cfs_period_us", "100000\n")
    cgroup = "4:memory:/x\n3:cpu,cpuacct:/docker/abc\n"
    assert threads.quota_cores(tmp_path, cgroup) is None  # -1: no quota
    write(cpu / "docker" / "abc" / "cpu.cfs_quota_us", "150000\n")
    write(cpu / "docker" / "abc" / "cpu.cfs_period_us", "100000\n")
    assert threads.quota_cores(tmp_path, cgroup) == 2
    write(cpu / "docker" / "abc" / "cpu.cfs_quota_us", "50000\n")  # half a CPU: one thread
    assert threads.quota_cores(tmp_path, cgroup) == 1


def test_no_or_unreadable_cgroup_has_no_quota(tmp_path):
    assert threads.quota_cores(tmp_path, "") is None
    write(tmp_path / "cpu.max", "garbage\n")
    assert threads.quota_cores(tmp_path, "0::/\n") is None


def test_usable_cores_are_the_affinity_lowered_by_the_quota(monkeypatch):
    monkeypatch.setattr(threads, "affinity_cores", lambda: 16)
    monkeypatch.setattr(threads, "quota_cores", lambda: 4)
    assert threads.usable_cores() == 4
    monkeypatch.setattr(threads, "quota_cores", lambda: 64)
    assert threads.usable_cores() == 16
    monkeypatch.setattr(threads, "quota_cores", lambda: None)
    assert threads.usable_cores() == 16


def test_affinity_cores_follow_sched_getaffinity():
    assert threads.affinity_cores() == len(os.sched_getaffinity(0))


def test_the_option_wins_over_the_variable():
    assert threads.requested_threads(3, {"IRVIEWER_THREADS": "8"}) == 3
    assert threads.requested_threads(None, {"IRVIEWER_THREADS": " 8 "}) == 8
    assert threads.requested_threads(None, {"IRVIEWER_THREADS": ""}) is None
    assert threads.requested_threads(None, {}) is None
    for bad in ("0", "-2", "1.5", "all"):
        with pytest.raises(InputError, match=f"IRVIEWER_THREADS '{bad}': give a whole number"):
            threads.requested_threads(None, {"IRVIEWER_THREADS": bad})


def test_the_cap_lowers_the_libraries_keeps_a_lower_setting_and_is_put_back(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the user's, lower than the cap: kept
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    before = [lib["num_threads"] for lib in threadpool_info()]
    put_back = threads.cap_libraries(1)
    assert all(lib["num_threads"] == 1 for lib in threadpool_info())
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert os.environ["OMP_NUM_THREADS"] == "1"
    put_back()
    assert [lib["num_threads"] for lib in threadpool_info()] == before
    assert "OPENBLAS_NUM_THREADS" not in os.environ
    assert os.environ["OMP_NUM_THREADS"] == "1"


def test_limited_threads_sets_the_workers_and_the_pool_and_puts_them_back(monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: 6)
    monkeypatch.setattr(threads, "affinity_cores", lambda: 6)
    before = parallel.WORKERS
    with parallel.limited_threads(3) as count:
        assert count == parallel.WORKERS == 3
        assert parallel.row_parts(30, 30, 1) == [(0, 10), (10, 20), (20, 30)]
        starts: list[int] = []
        parallel.run_parts(lambda a, b: starts.append(a), parallel.row_parts(30, 30, 1))
        assert sorted(starts) == [0, 10, 20]
        assert parallel._POOL is not None and parallel._POOL_SIZE == 2
    assert before == parallel.WORKERS
    with parallel.limited_threads(None) as count:
        assert count == 6  # no cap: the cores this process may use
