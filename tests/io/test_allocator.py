"""keep_freed_memory: a process that allocates and frees a photo's arrays over and over
stops faulting their pages in again (glibc on Linux; elsewhere it says it did nothing)."""

from __future__ import annotations

import subprocess
import sys

import pytest

#: One "photo": arrays of the sizes describing one allocates (the decoded photo, its grey
#: copy, SIFT's scale space, ...), each freed but a small result of each kept.
CHURN = """
import resource, sys
import numpy as np
from irviewer.io.allocator import keep_freed_memory
said = keep_freed_memory() if sys.argv[1] == "keep" else None
SIZES = (3_600_000, 1_228_800, 6_291_456, 4_194_304, 16_777_216, 153_600)
def photo(i):
    kept, scratch = [], None
    for size in SIZES:
        block = np.ones(size // 8 + i, np.float64)
        kept.append(block[:10].copy())
        scratch = np.ones(size // 16, np.float64)  # freed when the next one is made
    return kept, scratch
photo(0)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for i in range(20):
    photo(i)
print(said, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> tuple[str, int]:
    out = subprocess.run([sys.executable, "-c", CHURN, mode], capture_output=True, text=True,
                         check=True).stdout.split()
    return out[0], int(out[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_photos_freed_arrays_are_reused_instead_of_faulted_in_again():
    said, kept = _faults("keep")
    _, given_back = _faults("default")
    assert said == "True"
    assert given_back > 20_000  # the default gives blocks back and faults them in again
    assert kept < 2_000
