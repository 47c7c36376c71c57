"""How a process that describes many photos asks the C allocator to keep the memory it frees.

Describing a photo allocates and frees tens of megabytes in blocks of many sizes (the
decoded photo, Pillow's copies, the extractor's arrays, SIFT's scale space). glibc's
allocator gives such blocks back to the kernel when they are freed (``munmap`` above its
mapping threshold, and trimming the top of its heap), so the next photo faults every page
in again: indexing 2,000 photos took 22 million page faults, 10,000 per photo, and a
quarter of the indexer's processor time was the kernel's (``tests/benchmarks/
bench_index.py``, part c). :func:`keep_freed_memory` sets glibc's documented thresholds
(``M_MMAP_THRESHOLD`` and ``M_TRIM_THRESHOLD``; ``man 3 mallopt``) so that freed blocks stay
in the process for the next photo: about 170 faults per photo. Both are needed: setting
either alone turns off glibc's own adjustment of the other, which is worse than neither.
A worker's peak memory is unchanged: it keeps what one photo needs, which it needed anyway.
"""

from __future__ import annotations

import ctypes
import sys

#: mallopt's parameter numbers (glibc's malloc.h).
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: Blocks up to this size come from the heap, not from a mapping of their own (glibc's
#: largest allowed value on 64-bit systems).
MMAP_THRESHOLD = 32 * 2**20
#: The heap's free top is given back to the kernel only beyond this.
TRIM_THRESHOLD = 256 * 2**20


def keep_freed_memory() -> bool:
    """Ask glibc's allocator to keep freed memory for reuse in this process; return whether
    it was done (False on other systems and C libraries, where nothing changes)."""
    if not sys.platform.startswith("linux"):
        return False
    try:  # the C library this process already uses (no search: it works in a built app)
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return all(mallopt(p, v) == 1 for p, v in ((M_MMAP_THRESHOLD, MMAP_THRESHOLD),
                                              (M_TRIM_THRESHOLD, TRIM_THRESHOLD)))
