"""Ranked lists as CSV: one row per listed result, ``query,rank,image,score,relevance``.

The lists are the ones the TREC run holds (:func:`irviewer.formats.trec.exported_list`):
the ranked gallery with the protocol's removed items taken out (so ``rank`` is the rank the
metrics count, 1-based), down to the stored depth and at least to the last retrieved
positive. ``relevance`` is ``positive`` or ``negative`` under the evaluation's protocol;
``score`` is empty where a precomputed ranking has none. Written atomically.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from irviewer.core.evaluation import Evaluation, query_roles
from irviewer.formats.trec import evaluated_queries, exported_list
from irviewer.io.atomic import atomic_open
from irviewer.io.csv_table import csv_writer

COLUMNS = ("query", "rank", "image", "score", "relevance")


def write_ranked_csv(path: Path, evaluation: Evaluation,
                     queries: Sequence[int] | None = None) -> int:
    """Write the ranked lists of ``queries`` (default: every query; a query left out of
    the means, with no positive, has none) to ``path``, as the TREC run lists them; return
    the number of rows. InputError when the file cannot be written."""
    ev = evaluation
    ds = ev.dataset
    chosen = evaluated_queries(ev, queries)
    rows = 0
    with atomic_open(Path(path), newline="") as stream:
        writer = csv_writer(stream, lineterminator="\r\n")
        writer.writerow(COLUMNS)
        for q in chosen:
            listed, scores = exported_list(ev, q)
            pos, _ = query_roles(ds.queries[q], ev.protocol, ds.ignored_mask)
            relevant = np.isin(listed, pos)
            for r, (g, s, rel) in enumerate(zip(listed.tolist(), scores.tolist(),
                                                relevant.tolist(), strict=True), start=1):
                writer.writerow((ds.queries[q].name, r, ds.gallery[g],
                                 "" if np.isnan(s) else f"{s:.9g}",
                                 "positive" if rel else "negative"))
            rows += len(listed)
    return rows
