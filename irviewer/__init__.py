"""irviewer: inspect and score image retrieval with each benchmark's own conventions.

Importing :mod:`irviewer` imports no Qt; the GUI lives in :mod:`irviewer.gui` and is
loaded only when a window is opened.
"""

import os

# OpenBLAS's worker threads spin for 2**28 cycles (about 0.1 s) after every matrix multiply
# before they sleep, holding the cores that the ranking's own threads need right after it
# (core/ranking/ranker.py splits each block's selection and counting between threads). A short
# spin costs the multiply nothing measurable. Only this process is concerned, a value the
# user set is kept, and it takes effect when irviewer is imported before numpy (the
# command line, the window, the benchmarks).
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

# IRVIEWER_THREADS caps every thread of the process, BLAS included: imported before numpy, the
# libraries read the cap from their environment variables when they load (the command line's
# --threads, given later, caps them through threadpoolctl: irviewer.core.threads).
from irviewer.core.threads import cap_libraries, environment_threads

if (_cap := environment_threads()) is not None:
    cap_libraries(_cap)

__version__ = "0.1.0"
