"""What machine a benchmark ran on, for bench_machine.py: the cores this process may use (as
irviewer counts them, :mod:`irviewer.core.threads`), the memory, the load, the BLAS and its
threads (through threadpoolctl when it is installed), the library versions and the GPU
(through torch when it is installed). Imports nothing that irviewer's source run lacks."""

from __future__ import annotations

import importlib.util
import os
import platform
import sys
from pathlib import Path


def memory_gb() -> float:
    """Return the machine's memory in GB (MemTotal, Linux), 0 when it cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024**2
    except (OSError, ValueError):
        pass
    return 0.0


def load_average() -> str:
    """Return the 1, 5 and 15 minute load averages as text ("n/a" where there are none)."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def cpu_model() -> str:
    """Return the processor's model name (Linux), else the platform's description."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cores() -> dict[str, int | None]:
    """Return the cores as irviewer counts them: ``usable`` (what its threads follow), the
    ``affinity``'s, the container's CPU ``quota`` (None: none set) and ``os_count``, the
    machine's."""
    from irviewer.core import threads

    return {"usable": threads.usable_cores(), "affinity": threads.affinity_cores(),
            "quota": threads.quota_cores(), "os_count": os.cpu_count()}


def blas() -> list[dict[str, object]]:
    """Return the thread pools loaded in this process (BLAS, OpenMP) as threadpoolctl
    describes them (library, version, threads, architecture), [] without threadpoolctl."""
    import numpy  # noqa: F401  (its BLAS is what is described)

    if importlib.util.find_spec("threadpoolctl") is None:
        return []
    from threadpoolctl import threadpool_info

    return [{key: info.get(key) for key in ("internal_api", "version", "num_threads",
                                            "architecture", "prefix")}
            for info in threadpool_info()]


def gpu() -> dict[str, object]:
    """Return torch's view of the GPU: ``torch`` (its version, None when it is not
    installed), ``cuda`` (whether a CUDA device is visible), ``name`` and ``memory_gb`` of
    device 0 when one is."""
    if importlib.util.find_spec("torch") is None:
        return {"torch": None, "cuda": False}
    import torch

    out: dict[str, object] = {"torch": torch.__version__, "cuda": torch.cuda.is_available()}
    if out["cuda"]:
        props = torch.cuda.get_device_properties(0)
        out |= {"name": props.name, "memory_gb": round(props.total_memory / 1024**3, 1),
                "cuda_version": torch.version.cuda}
    return out


def describe() -> dict[str, object]:
    """Return everything above, with the Python and library versions."""
    import numpy
    import scipy

    return {"cpu": cpu_model(), "cores": cores(), "memory_gb": round(memory_gb(), 1),
            "load_average": load_average(), "python": platform.python_version(),
            "numpy": numpy.__version__, "scipy": scipy.__version__, "blas": blas(),
            "gpu": gpu(), "executable": sys.executable}


def lines(info: dict) -> list[str]:
    """Return the machine's description as printed lines."""
    c = info["cores"]
    quota = "none" if c["quota"] is None else f"{c['quota']} CPUs"
    out = [f"machine: {info['cpu']}; {c['usable']} cores usable (affinity {c['affinity']}, "
           f"CPU quota {quota}, the machine's {c['os_count']}), {info['memory_gb']:.1f} GB; "
           f"load average {info['load_average']}",
           f"python {info['python']}, numpy {info['numpy']}, scipy {info['scipy']}"]
    if info["blas"]:
        out += [f"thread pool: {b['internal_api']} {b['version']} ({b['prefix']}), "
                f"{b['num_threads']} threads, architecture {b['architecture']}"
                for b in info["blas"]]
    else:
        out.append("thread pools: not described (threadpoolctl is not installed)")
    g = info["gpu"]
    if g["torch"] is None:
        out.append("GPU: not looked for (torch is not installed)")
    elif not g["cuda"]:
        out.append(f"GPU: none visible to torch {g['torch']} (torch.cuda.is_available() is "
                   "False)")
    else:
        out.append(f"GPU: {g['name']}, {g['memory_gb']} GB (torch {g['torch']}, CUDA "
                   f"{g['cuda_version']})")
    return out
