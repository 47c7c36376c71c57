"""Arrays from the caller: numpy as it is, and any array that speaks DLPack (torch, cupy,
jax) read in place on the CPU; a GPU array is copied to the host, and the result says so.

Nothing is copied that need not be: a numpy array (a memory map included) and a CPU
tensor are used through a read-only view of their own memory (``numpy.from_dlpack``), so
ranking reads the caller's vectors where they are. A GPU array cannot be ranked there yet
(ranking runs on the CPU), so it is copied to the host once, and the note says from which
device. Anything else array-like (a list, a pandas frame) goes through ``numpy.asarray``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from irviewer.api.errors import ArgumentError
from irviewer.core.errors import counted

#: DLPack device types (``__dlpack_device__()[0]``) whose memory the CPU reads in place:
#: kDLCPU, kDLCUDAHost (pinned), kDLROCMHost.
_HOST_DEVICES = {1, 3, 11}
#: Names of the other DLPack device types, for the note on a copy.
_DEVICE_NAMES = {2: "cuda", 4: "opencl", 7: "vulkan", 8: "metal", 9: "vpi", 10: "rocm",
                 13: "cuda (managed)", 14: "oneapi", 15: "webgpu", 16: "hexagon", 17: "maia"}


@dataclass(frozen=True)
class HostArray:
    """An argument as a read-only numpy array on the host: ``array``, and ``device``, the
    device it was copied from (None: read in place, no copy)."""

    array: np.ndarray
    device: str | None = None

    def note(self, argument: str) -> str | None:
        """Return the sentence saying that ``argument`` was copied to the host (None when
        it was read in place)."""
        if self.device is None:
            return None
        return (f"{argument}: copied from {self.device} to the host, where irviewer ranks "
                "(ranking on the GPU where the tensors live is not supported yet)")


def host_array(value: object, argument: str) -> HostArray:
    """Return ``value`` as a read-only numpy view on the host (see the module docstring);
    ArgumentError naming ``argument`` for a value that is not an array of numbers or
    strings."""
    if isinstance(value, np.ndarray):
        return HostArray(_read_only(value))
    if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        return _from_dlpack(value, argument)
    try:
        array = np.asarray(value)
    except (TypeError, ValueError, RuntimeError) as e:
        raise ArgumentError(argument, f"{argument}: a {type(value).__name__} cannot be read "
                            f"as an array ({_reason(e)})") from None
    if array.dtype.kind == "O":
        raise ArgumentError(argument, f"{argument}: a {type(value).__name__} of Python objects "
                            "is not an array of numbers; give a numpy array or a tensor")
    return HostArray(_read_only(array))


def _from_dlpack(value: Any, argument: str) -> HostArray:
    """Return a DLPack array on the host: read in place when its memory is the CPU's, else
    copied (by DLPack to the CPU device, else by the library's own ``cpu()`` / ``get()``)."""
    if getattr(value, "requires_grad", False) and callable(getattr(value, "detach", None)):
        value = value.detach()  # a view without the autograd graph: no copy
    try:
        kind, index = (int(x) for x in value.__dlpack_device__())
    except (TypeError, ValueError) as e:
        raise ArgumentError(argument, f"{argument}: its DLPack device cannot be read "
                            f"({_reason(e)})") from None
    if kind in _HOST_DEVICES:
        try:
            return HostArray(_read_only(np.from_dlpack(value)))
        except (BufferError, TypeError, RuntimeError, ValueError) as e:
            raise _unreadable(value, argument, e) from None
    device = f"{_DEVICE_NAMES.get(kind, f'device type {kind}')}:{index}"
    copied = None
    try:
        copied = np.from_dlpack(value, device="cpu", copy=True)
    except (BufferError, TypeError, RuntimeError, ValueError, NotImplementedError):
        for method in ("cpu", "get"):  # torch, cupy
            move = getattr(value, method, None)
            if callable(move):
                try:
                    moved = move()
                    copied = moved if isinstance(moved, np.ndarray) else np.from_dlpack(moved)
                    break
                except (BufferError, TypeError, RuntimeError, ValueError) as e:
                    raise _unreadable(value, argument, e) from None
        if copied is None:
            try:
                copied = np.asarray(value)
            except (TypeError, ValueError, RuntimeError) as e:
                raise _unreadable(value, argument, e) from None
    return HostArray(_read_only(copied), device)


def _unreadable(value: Any, argument: str, error: Exception) -> ArgumentError:
    dtype = getattr(value, "dtype", None)
    of = f" of {dtype} values" if dtype is not None else ""
    return ArgumentError(argument, f"{argument}: a {type(value).__name__}{of} cannot be read "
                         f"as a numpy array ({_reason(error)}); convert it to float32 first")


def _reason(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _read_only(array: np.ndarray) -> np.ndarray:
    """Return a read-only view of ``array`` (never a copy): irviewer never writes into the
    caller's arrays."""
    view = array.view()
    view.flags.writeable = False
    return view


def matrix(value: object, argument: str, what: str = "vectors") -> HostArray:
    """Return ``value`` as a 2-D array of real numbers (one row per image, or a score
    matrix): ArgumentError naming ``argument`` for another shape, no row, no column, or
    values that are not real numbers. ``what`` names a row's content in the sentence."""
    found = host_array(value, argument)
    a = found.array
    if a.dtype.kind == "c":
        raise ArgumentError(argument, f"{argument}: holds {a.dtype} values; {what} must be "
                            "real numbers")
    if a.dtype.kind not in "biuf":
        raise ArgumentError(argument, f"{argument}: holds {a.dtype} values; {what} must be "
                            "numbers")
    if a.ndim != 2:
        raise ArgumentError(argument, f"{argument}: a 2-D matrix is needed (one row per "
                            f"{'query' if what == 'scores' else 'image'}), got shape "
                            f"{tuple(a.shape)}")
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise ArgumentError(argument, f"{argument}: the matrix is empty (shape "
                            f"{tuple(a.shape)})")
    return found


def names_of(value: object, argument: str, n: int, rows: str) -> np.ndarray:
    """Return ``value`` as ``n`` image names, a 1-D string array (whole numbers written in
    decimal); ArgumentError naming ``argument`` for another count, a repeated name, or
    values that are not strings or whole numbers. ``rows`` names what they name ("rows of
    embeddings")."""
    a = host_array(value, argument).array
    if a.ndim != 1:
        raise ArgumentError(argument, f"{argument}: one name per row is needed (a 1-D "
                            f"sequence), got shape {tuple(a.shape)}")
    if a.dtype.kind not in "USiu":
        raise ArgumentError(argument, f"{argument}: names must be strings, not {a.dtype} "
                            "values")
    if len(a) != n:
        raise ArgumentError(argument, f"{argument}: {counted(len(a), 'name')} for "
                            f"{counted(n, 'row')} of {rows}; give one name per row")
    names = a.astype(str)
    unique, counts = np.unique(names, return_counts=True)
    if (counts > 1).any():
        twice = unique[counts > 1]
        raise ArgumentError(argument, f"{argument}: {counted(len(twice), 'name')} "
                            f"{'appears' if len(twice) == 1 else 'appear'} more than once, "
                            f"e.g. {', '.join(map(str, twice[:3]))}; give each image its "
                            "own name")
    return names


__all__ = ["HostArray", "host_array", "matrix", "names_of"]
