"""Re-ranking as a method: k-reciprocal encoding, alpha-weighted query expansion and
database-side augmentation, exact and in bounded memory.

:func:`~irviewer.core.rerank.spec.parse_spec` reads a SPEC into a
:class:`~irviewer.core.rerank.spec.Chain`; :func:`~irviewer.core.rerank.chain.iter_rerank`
applies it to one descriptor file's aligned vectors and returns a
:class:`~irviewer.core.ranking.Ranking` that every protocol scores like any other.
Definitions and sources: docs/rerank.md.
"""

from irviewer.core.rerank.chain import check_budget, iter_rerank, search_cost
from irviewer.core.rerank.spec import Chain, parse_spec

__all__ = ["Chain", "check_budget", "iter_rerank", "parse_spec", "search_cost"]
