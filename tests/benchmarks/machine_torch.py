"""The GPU's floor, for bench_machine.py: what the device takes for the products and
selections an exact ranking is made of, in absolute times (torch; run only where it is
installed).

Every case runs on ``device`` ("cuda" on a machine with a GPU; "cpu" checks the same code
where there is none, its times then being the CPU's). Float32 products are full float32:
TF32 is switched off (``torch.backends.cuda.matmul.allow_tf32 = False``, float32 matmul
precision "highest") whatever the user set, as a reported number requires. Times are
wall-clock seconds of warm runs (one run first, then the best of ``repeats``), the device
synchronised before each clock is read.

Cases (sizes from :class:`TorchSizes`):

* ``multiply``: the query x gallery product of unit float32 vectors (Market-1501:
  3,368 x 19,732 x 2048);
* ``top200``: the product and the 200 highest scores of every row (``torch.topk``);
* ``full_sort``: the product and every row sorted (stable, descending);
* ``to_device``: both matrices copied from numpy arrays in the host's memory to the device;
* ``f16_top100``: 70 queries x 1,000,000 x 2048 float16 gallery, product and top 100;
* ``all_pairs_top21``: MSMT17's every image against every other (93,820 x 93,820 x 2048,
  float32), in blocks of rows, each row's 21 highest scores: the floor of an exact
  k-reciprocal re-ranking.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class TorchSizes:
    """The sizes of the torch cases (the benchmarks' by default)."""

    queries: int = 3368
    gallery: int = 19732
    dim: int = 2048
    map_queries: int = 70
    map_gallery: int = 1_000_000
    all_pairs: int = 93_820
    block_bytes: int = 2 << 30


def full_float32(torch: Any) -> None:
    """Make every float32 product full float32 (no TF32), whatever was set before."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def best_time(torch: Any, device: str, work: Callable[[], object], repeats: int) -> float:
    """Return the best wall seconds of ``work()`` over ``repeats`` runs after one warm-up,
    the device synchronised before and after each."""
    def sync() -> None:
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    work()
    sync()
    best = float("inf")
    for _ in range(repeats):
        sync()
        t = time.perf_counter()
        work()
        sync()
        best = min(best, time.perf_counter() - t)
    return best


def unit_rows(torch: Any, n: int, dim: int, device: str, generator: Any,
              dtype: Any = None) -> Any:
    """Return ``n`` random unit rows of ``dim`` on ``device`` (float32 unless ``dtype``)."""
    x = torch.randn(n, dim, device=device, generator=generator)
    x /= x.norm(dim=1, keepdim=True)
    return x if dtype is None else x.to(dtype)


def market_cases(torch: Any, device: str, sizes: TorchSizes, repeats: int) -> dict[str, float]:
    """Return the seconds of ``multiply``, ``top200``, ``full_sort`` and ``to_device``."""
    gen = torch.Generator(device=device).manual_seed(0)
    q = unit_rows(torch, sizes.queries, sizes.dim, device, gen)
    g = unit_rows(torch, sizes.gallery, sizes.dim, device, gen)
    k = min(200, sizes.gallery)
    out = {"multiply": best_time(torch, device, lambda: q @ g.T, repeats),
           "top200": best_time(torch, device, lambda: torch.topk(q @ g.T, k, dim=1),
                               repeats),
           "full_sort": best_time(torch, device, lambda: torch.sort(
               q @ g.T, dim=1, descending=True, stable=True), repeats)}
    host_q, host_g = q.cpu().numpy(), g.cpu().numpy()
    out["to_device"] = best_time(torch, device, lambda: (
        torch.from_numpy(host_q).to(device, copy=True),
        torch.from_numpy(host_g).to(device, copy=True)), repeats)
    return out


def map_case(torch: Any, device: str, sizes: TorchSizes, repeats: int) -> float:
    """Return the seconds of the float16 product of 70 queries with a million gallery rows
    and its top 100 per query (the gallery already on the device)."""
    gen = torch.Generator(device=device).manual_seed(1)
    q = unit_rows(torch, sizes.map_queries, sizes.dim, device, gen, torch.float16)
    g = torch.empty(sizes.map_gallery, sizes.dim, dtype=torch.float16, device=device)
    step = 100_000
    for a in range(0, sizes.map_gallery, step):  # filled in parts: no float32 copy of it all
        b = min(sizes.map_gallery, a + step)
        g[a:b] = unit_rows(torch, b - a, sizes.dim, device, gen, torch.float16)
    k = min(100, sizes.map_gallery)
    return best_time(torch, device, lambda: torch.topk(q @ g.T, k, dim=1), repeats)


def all_pairs_case(torch: Any, device: str, sizes: TorchSizes) -> float:
    """Return the seconds of every row's 21 highest scores against every row (the rows'
    product in blocks of at most ``block_bytes``), float32: one run after one warm-up
    block."""
    gen = torch.Generator(device=device).manual_seed(2)
    x = unit_rows(torch, sizes.all_pairs, sizes.dim, device, gen)
    rows = max(1, min(sizes.all_pairs, sizes.block_bytes // (4 * sizes.all_pairs)))
    k = min(21, sizes.all_pairs)

    def every_block() -> None:
        for a in range(0, sizes.all_pairs, rows):
            torch.topk(x[a:a + rows] @ x.T, k, dim=1)

    torch.topk(x[:rows] @ x.T, k, dim=1)  # warm: the kernels chosen, the memory reserved
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    t = time.perf_counter()
    every_block()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - t


def agree_with_numpy(torch: Any, device: str) -> bool:
    """Return True when the device's float32 product and top-5 agree with numpy's on a
    small case (the same values to 1e-5; the same indices where the scores are apart), so
    a device that computes wrong (or in TF32) is seen before its times are believed."""
    rng = np.random.default_rng(3)
    q = rng.standard_normal((20, 256), dtype=np.float32)
    g = rng.standard_normal((500, 256), dtype=np.float32)
    mine = (torch.from_numpy(q).to(device) @ torch.from_numpy(g).to(device).T).cpu().numpy()
    ref = q @ g.T
    top = torch.topk(torch.from_numpy(mine), 5, dim=1).indices.numpy()
    ref_top = np.argsort(-ref, axis=1, kind="stable")[:, :5]
    return bool(np.allclose(mine, ref, atol=1e-4, rtol=1e-5) and (top == ref_top).all())


_START_UP = """
import sys, time
t = time.perf_counter()
import torch
imported = time.perf_counter()
torch.zeros(1, device=sys.argv[1]).sum().item()
print(imported - t, time.perf_counter() - imported)
"""


def start_up(device: str) -> tuple[float, float]:
    """Return the seconds a fresh process takes to import torch and then to run its first
    operation on ``device`` (for a GPU: creating the CUDA context), measured in a child
    process so that nothing is already loaded."""
    done = subprocess.run([sys.executable, "-c", _START_UP, device], capture_output=True,
                          text=True, check=True)
    imported, first = (float(x) for x in done.stdout.split())
    return imported, first


def torch_cases(device: str, sizes: TorchSizes, repeats: int = 5) -> dict[str, object]:
    """Return every case's seconds on ``device``, with ``import_s`` (importing torch) and
    ``context_s`` (the first operation on the device: the CUDA context) of a fresh process
    (:func:`start_up`), ``agrees`` (:func:`agree_with_numpy`) and the ``sizes``."""
    import torch

    import_s, context_s = start_up(device)
    out: dict[str, object] = {"device": device, "import_s": import_s, "context_s": context_s,
                              "sizes": sizes}
    torch.zeros(1, device=device).sum().item()
    if device.startswith("cuda"):
        out["name"] = torch.cuda.get_device_name(0)
    full_float32(torch)
    out["agrees"] = agree_with_numpy(torch, device)
    out |= market_cases(torch, device, sizes, repeats)
    _release(torch, device)
    out["f16_top100"] = map_case(torch, device, sizes, repeats)
    _release(torch, device)
    out["all_pairs_top21"] = all_pairs_case(torch, device, sizes)
    _release(torch, device)
    return out


def _release(torch: Any, device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
