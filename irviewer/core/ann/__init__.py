"""Approximate search as a method: a FAISS index (built from a factory string or read from
a file) or a vector engine (Milvus) ranks the gallery, its lists are scored like any result
lists, and each query is compared with the exact ranking of the same descriptors (recall
by ann-benchmarks' and big-ann-benchmarks' rules, ΔAP, ΔP@1, the positives lost).
Definitions and sources: docs/ann.md.

FAISS and the Milvus client are optional (``irviewer[ann]``, ``irviewer[milvus]``); they are
imported only when a search runs, and their absence is one sentence naming the extra.
"""

from irviewer.core.ann.compare import ExactComparison, compare_with_exact, first_reaching
from irviewer.core.ann.results import AnnRun, score_lists
from irviewer.core.ann.spec import AnnSetting, AnnSpec, parse_ann_spec

__all__ = ["AnnRun", "AnnSetting", "AnnSpec", "ExactComparison", "compare_with_exact",
           "first_reaching", "parse_ann_spec", "score_lists"]
