"""An approximate search's result lists as a method: scored by the rule for result lists,
compared with the exact ranking of the same descriptors.

The lists an index (or a vector engine) returns become a truncated
:class:`~irviewer.core.ranking.Ranking` through
:func:`~irviewer.core.ranking.ranking_from_lists`, the path precomputed rankings
(``--ranking``) take: a positive the list does not hold counts in AP's denominator as never
retrieved. Beside it, :class:`AnnRun` keeps what an ANN benchmark reports: the build and
search time and each query's recall against the exact top k (:mod:`irviewer.core.ann.recall`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from irviewer.core.ann.recall import RECALL_KS, RULES, recalls
from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import AlignedDescriptors, normalise_rows
from irviewer.core.errors import Sentence, either
from irviewer.core.ranking import Ranking, ranking_from_lists

#: Returned items whose true similarity is computed at once (rows gathered).
_SIMILARITY_ROWS = 16_384


@dataclass(frozen=True)
class AnnRun:
    """One approximate search of every query: ``setting`` (the SPEC of one setting, or the
    engine's collection), ``source`` (what searched: "FAISS index factory", "FAISS index
    file", "Milvus"), ``kind`` (the index class or the engine's index type and metric),
    ``build_s`` (seconds to build, read or connect), ``search_s`` (seconds inside the
    index's or engine's search, every query), ``recall`` (per-query arrays: ``recall@k`` by
    ann-benchmarks' rule, ``recall@k(tie-aware)`` by big-ann-benchmarks'; empty when no
    exact ranking was computed beside it), ``depth`` (results asked per query; what the
    search is compared with at that depth is the opening's rule,
    :meth:`irviewer.opening.opener.Opened.paired`), ``id_order`` (for an index
    file: which image each FAISS id was read as, a sentence; None otherwise),
    ``beam_note`` (the sentence of :func:`narrow_beam_note` when the search beam is
    narrower than the depth; None otherwise), ``warnings`` (what FAISS warned of while
    building the index, as it wrote it)."""

    setting: str
    source: str
    kind: str
    build_s: float
    search_s: float
    n_queries: int
    depth: int
    recall: Mapping[str, np.ndarray] = field(default_factory=dict, compare=False)
    id_order: str | None = None
    beam_note: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def notes(self) -> tuple[str, ...]:
        """Return what the output says under the run, in order: how an index file's ids
        were read, a beam narrower than the depth, FAISS's warnings while building."""
        said = [n for n in (self.id_order, self.beam_note) if n is not None]
        return (*said, *(f"FAISS warned while building the index: {w}"
                         for w in self.warnings))

    @property
    def ms_per_query(self) -> float:
        """Return the search time per query in milliseconds."""
        return 1000.0 * self.search_s / max(self.n_queries, 1)

    def mean_recall(self, key: str) -> float | None:
        """Return the mean of one recall column over the queries (None when not computed)."""
        values = self.recall.get(key)
        if values is None or not np.isfinite(values).any():
            return None
        return float(np.nanmean(values))

    def record(self) -> dict:
        """Return the run as the reports' JSON member: setting, source, times, the mean of
        each recall over the queries (``recall@k`` ann-benchmarks' rule,
        ``recall@k(tie-aware)`` big-ann-benchmarks'), the rules in words, and the notes:
        ``id_order`` (how an index file's ids were read), ``beam_note`` (a search beam
        narrower than the depth), ``warnings`` (FAISS's while building), and ``notes``
        (:attr:`notes`: the sentences printed under the run); null or empty when there is
        nothing to say."""
        means = {k: self.mean_recall(k) for k in self.recall}
        return {"setting": self.setting, "source": self.source, "index": self.kind,
                "depth": self.depth, "build_s": self.build_s, "search_s": self.search_s,
                "ms_per_query": self.ms_per_query, **means,
                "id_order": None if self.id_order is None else str(self.id_order),
                "beam_note": None if self.beam_note is None else str(self.beam_note),
                "warnings": list(self.warnings), "notes": [str(n) for n in self.notes],
                "recall_rule": (f"{RULES[0]}: a result counts when its similarity is at "
                                "least the exact k-th similarity minus 1e-3"),
                "tie_aware_rule": (f"{RULES[1]}: exact ids up to the k-th and their ties "
                                   "(within 1e-6) intersected with the results, over k")}


def narrow_beam_note(beam: int | None, depth: int, parameter: str,
                     engine: str) -> Sentence | None:
    """Return the sentence that says an index searched with a beam ``beam`` wide (HNSW's
    ``efSearch`` in FAISS, ``ef`` in Milvus: ``parameter``) returns ``depth`` results per
    query from a beam narrower than that, so that the results past the first ``beam`` are
    poor; None when the beam is at least the depth or the index has none.

    FAISS keeps ``efSearch`` as given below k and still returns k results (measured in
    docs/ann.md: ``HNSW32`` at efSearch 16 has recall@200 0.337 for k = 200, 0.946 at
    efSearch 200), and Milvus Lite searches its HNSW collections with FAISS; hnswlib ("ef
    cannot be set lower than k") and a Milvus server ("must be >= topK") refuse instead, so
    a number compared with theirs must say so."""
    if beam is None or beam >= depth:
        return None
    depth_option = either("--depth", "the depth", key="depth")
    return Sentence(
        f"HNSW's {parameter} ({beam:,}) is below the depth ({depth:,}): {engine} returns "
        f"{depth:,} results per query from a search beam {beam:,} wide, so those past the "
        f"first {beam:,} are poor and recall@100, AP and ΔAP count them (recall@10 is what "
        f"a top-10 search gives); to compare with tools that raise the beam to the depth, "
        f"sweep {parameter} from {depth:,} up ({parameter}={depth},{2 * depth}) or lower "
        f"{depth_option}")


def compact_lists(ids: np.ndarray, scores: np.ndarray, dataset: Dataset,
                  depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (ids, scores) of each list with the entries that cannot count dropped (-1,
    gallery images removed for every query), the rest kept in their order, cut to
    ``depth`` (-1 / -inf padding)."""
    idx = np.asarray(ids, dtype=np.int64)
    val = np.asarray(scores, dtype=np.float32)
    keep = idx >= 0
    if dataset.global_ignored.size:
        keep &= ~dataset.ignored_mask[np.maximum(idx, 0)]
    order = np.argsort(~keep, axis=1, kind="stable")[:, :depth]
    kept = np.take_along_axis(keep, order, axis=1)
    out_ids = np.where(kept, np.take_along_axis(idx, order, axis=1), -1)
    out_val = np.where(kept, np.take_along_axis(val, order, axis=1), -np.inf)
    if out_ids.shape[1] < depth:
        pad = depth - out_ids.shape[1]
        out_ids = np.pad(out_ids, ((0, 0), (0, pad)), constant_values=-1)
        out_val = np.pad(out_val, ((0, 0), (0, pad)), constant_values=-np.inf)
    return out_ids, out_val.astype(np.float32)


def true_similarity(aligned: AlignedDescriptors, ids: np.ndarray) -> np.ndarray:
    """Return the cosine similarity of each query to each listed gallery image (dataset
    gallery indices, -1 padding gives nan), recomputed from the descriptors as
    ann-benchmarks recomputes distances: never the index's own (approximate) scores."""
    idx = np.asarray(ids, dtype=np.int64)
    out = np.full(idx.shape, np.nan, dtype=np.float64)
    rows_per_block = max(1, _SIMILARITY_ROWS // max(idx.shape[1], 1))
    for a in range(0, idx.shape[0], rows_per_block):
        b = min(a + rows_per_block, idx.shape[0])
        block = idx[a:b]
        listed = np.unique(block[block >= 0])
        if not listed.size:
            continue
        file_rows = listed if aligned.gallery_rows is None else aligned.gallery_rows[listed]
        order = np.argsort(file_rows, kind="stable")
        vectors = np.empty((len(listed), aligned.dim), dtype=np.float32)
        vectors[order] = normalise_rows(aligned.gallery[file_rows[order]])
        sims = aligned.queries[a:b] @ vectors.T
        where = np.searchsorted(listed, np.maximum(block, 0))
        got = np.take_along_axis(sims, where, axis=1)
        out[a:b] = np.where(block >= 0, got, np.nan)
    return out


def score_lists(dataset: Dataset, ids: np.ndarray, scores: np.ndarray, depth: int,
                source: str, aligned: AlignedDescriptors | None = None,
                exact: Ranking | None = None) -> tuple[Ranking, dict[str, np.ndarray]]:
    """Return the truncated :class:`Ranking` of an approximate search's lists (``ids``:
    dataset gallery indices in returned order, -1 padding; ``scores`` the index's scores)
    and, when the exact ranking of the same descriptors is given, each query's recalls
    (:func:`irviewer.core.ann.recall.recalls` at :data:`RECALL_KS`; empty otherwise)."""
    top_ids, top_scores = compact_lists(ids, scores, dataset, depth)
    ranking = ranking_from_lists(dataset, top_ids, top_scores, source)
    if aligned is None or exact is None:
        return ranking, {}
    similarity = true_similarity(aligned, top_ids)
    return ranking, recalls(exact.top_indices, exact.top_scores, top_ids, similarity,
                            tuple(k for k in RECALL_KS))


__all__ = ["AnnRun", "compact_lists", "narrow_beam_note", "score_lists", "true_similarity"]
