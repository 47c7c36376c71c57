"""How many threads this process may use, and the cap that holds every library to it.

The cores a process may use are fewer than the machine's when its affinity says so
(``taskset``, a batch scheduler's CPU set) or when its container has a CPU quota (cgroup v2
``cpu.max``, v1 ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``: a quota of 4 CPUs on a
64-core host lets 4 cores' worth of time through, however many threads ask). The user caps
them further with ``--threads N`` on any command or :data:`ENV` in the environment (the
option wins). A cap holds irviewer's own threads (:mod:`irviewer.core.parallel`), the BLAS
that runs the matrix multiply, OpenMP and OpenCV: the libraries already loaded through
threadpoolctl (OpenBLAS, MKL, BLIS, OpenMP) and OpenCV's ``setNumThreads``, those loaded
later through their environment variables. A cap only lowers: a library set to fewer
threads by the user keeps its setting. No number depends on the count (the ranking's tie
rule is exact whatever the threads, ``tests/cli/test_eval_threads.py``).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path

from irviewer.core.errors import InputError

#: The environment variable that caps every command's threads (``--threads`` wins).
ENV = "IRVIEWER_THREADS"
#: What libraries loaded after the cap read their thread count from.
LIBRARY_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                     "BLIS_NUM_THREADS", "OPENCV_FOR_THREADS_NUM")

CGROUP_ROOT = Path("/sys/fs/cgroup")


def affinity_cores() -> int:
    """Return how many cores this process's affinity lets it run on (all of the machine's
    where the system has no affinity)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def quota_cores(root: Path = CGROUP_ROOT, self_cgroup: str | None = None) -> int | None:
    """Return the CPUs' worth of time this process's cgroups let through (the smallest
    quota of its cgroup and those above it, divided by the period, rounded up), or None
    when no quota is set or none can be read. ``self_cgroup`` is ``/proc/self/cgroup``'s
    text (read when None); ``root`` where the cgroup file systems are mounted."""
    if self_cgroup is None:
        try:
            self_cgroup = Path("/proc/self/cgroup").read_text()
        except OSError:
            return None
    quotas = []
    for line in self_cgroup.splitlines():
        number, controllers, path = [*line.split(":", 2), "", ""][:3]
        if number == "0" and controllers == "":  # cgroup v2, the unified hierarchy
            quotas += _quotas(root, path, _v2_quota)
        elif "cpu" in controllers.split(","):
            for mount in (root / controllers, root / "cpu", root / "cpu,cpuacct"):
                if mount.is_dir():
                    quotas += _quotas(mount, path, _v1_quota)
                    break
    return max(1, math.ceil(min(quotas))) if quotas else None


def _quotas(mount: Path, path: str, read: Callable[[Path], float | None]) -> list[float]:
    """Return the quotas (in CPUs) set on ``mount``/``path`` and every folder above it up to
    ``mount``. In a container the mount's root is the container's own cgroup, so a path
    that is not found under it is read at the root only."""
    folder = mount / path.strip("/")
    if not folder.is_dir():
        folder = mount
    found = []
    while True:
        quota = read(folder)
        if quota is not None:
            found.append(quota)
        if folder == mount or mount not in folder.parents:
            return found
        folder = folder.parent


def _v2_quota(folder: Path) -> float | None:
    try:
        quota, period = (folder / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError, ZeroDivisionError):
        return None


def _v1_quota(folder: Path) -> float | None:
    try:
        quota = int((folder / "cpu.cfs_quota_us").read_text())
        period = int((folder / "cpu.cfs_period_us").read_text())
        return None if quota <= 0 or period <= 0 else quota / period
    except (OSError, ValueError):
        return None


def usable_cores() -> int:
    """Return how many cores this process may use: its affinity's, fewer when its
    container's CPU quota lets less through (at least 1)."""
    quota = quota_cores()
    return min(affinity_cores(), quota) if quota is not None else affinity_cores()


def parse_threads(text: str, source: str) -> int:
    """Return the thread count ``text`` gives (a whole number, at least 1); InputError
    naming ``source`` (``--threads``, the variable) otherwise."""
    try:
        value = int(text.strip())
    except ValueError:
        value = 0
    if value < 1:
        raise InputError(f"{source} {text.strip()!r}: give a whole number of threads, at "
                         "least 1")
    return value


def requested_threads(option: int | None, environ: Mapping[str, str] = os.environ
                      ) -> int | None:
    """Return the thread cap the user asked for: ``option`` (``--threads``) when given,
    else :data:`ENV`'s value, else None; InputError for a variable that is not a count."""
    if option is not None:
        return option
    text = environ.get(ENV, "").strip()
    return parse_threads(text, ENV) if text else None


def environment_threads() -> int | None:
    """Return :data:`ENV`'s cap when it holds a valid count, else None (a library import
    never fails on it; the command line refuses a bad value with one sentence)."""
    try:
        return requested_threads(None)
    except InputError:
        return None


def cap_libraries(threads: int) -> Callable[[], None]:
    """Hold the thread pools of BLAS, OpenMP and OpenCV to at most ``threads``: those loaded
    now through threadpoolctl (lowered only) and OpenCV's ``setNumThreads``, those loaded
    later through their environment variables. Return the function that puts back what it
    changed (the environment and the loaded libraries' counts)."""
    undo: list[Callable[[], None]] = []
    for name in LIBRARY_VARIABLES:
        before = os.environ.get(name)
        try:
            current = int(before or "")
        except ValueError:
            current = 0
        if current < 1 or current > threads:
            os.environ[name] = str(threads)
            undo.append(partial(_set_variable, name, before))
    if "numpy" in sys.modules or "scipy" in sys.modules:
        from threadpoolctl import ThreadpoolController

        for library in ThreadpoolController().lib_controllers:
            count = library.num_threads
            if count > threads:
                library.set_num_threads(threads)
                undo.append(partial(library.set_num_threads, count))
    cv2 = sys.modules.get("cv2")
    if cv2 is not None and cv2.getNumThreads() > threads:
        undo.append(partial(cv2.setNumThreads, cv2.getNumThreads()))
        cv2.setNumThreads(threads)

    def put_back() -> None:
        for step in reversed(undo):
            step()

    return put_back


def _set_variable(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
