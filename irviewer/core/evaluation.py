"""Evaluation: a dataset, a ranking and a protocol give per-query results and a summary.

The protocol decides, per query, which gallery items are positive and which are removed
from the ranking (ignored). Ignored items are removed *before* ranks are counted: a
positive's rank drops by the number of ignored items ranked above it. Metrics are computed
per query as arrays (see :mod:`irviewer.core.metrics`); means are taken last, over the
queries that have at least one positive. A query with no positive left is reported as
skipped, never counted as 0 or 1.

Re-scoring the queries whose ground truth changed (:meth:`Evaluation.with_queries`) reuses
the ranking: ranks of items outside the stored items come from that one query's score row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from irviewer.core import family_numbers, metrics
from irviewer.core.ap_rules import ap_polyline, average_precision
from irviewer.core.convention_names import REMOVE
from irviewer.core.dataset import Dataset, Query
from irviewer.core.errors import InputError
from irviewer.core.learning_metrics import learning_metrics
from irviewer.core.protocols import Protocol, check_applicable, mean_key
from irviewer.core.ranking import Ranking
from irviewer.core.ties import (
    AP_EPSILON,
    TieBounds,
    bounded_keys,
    protocol_expected_ap,
    tie_groups,
)

#: Relevance codes of a gallery item for one query, as the viewer colours them.
NEGATIVE, POSITIVE, IGNORED = 0, 1, 2


@dataclass(frozen=True)
class PositiveRanks:
    """Ragged per-query ranks of the retrieved positives, after ignored items are removed.

    Query q's sorted 0-based ranks are ``ranks[offsets[q]:offsets[q+1]]``; ``n_positives[q]``
    counts all its positives, including any never retrieved (beyond a truncated list).
    """

    ranks: np.ndarray
    offsets: np.ndarray
    n_positives: np.ndarray

    def of(self, q: int) -> np.ndarray:
        """Return query ``q``'s positive ranks."""
        return self.ranks[self.offsets[q]:self.offsets[q + 1]]


@dataclass(frozen=True)
class Evaluation:
    """Per-query metric arrays and their means under one protocol.

    ``per_query`` maps a metric key (``AP``, ``P@1``, ``P@5(revisitop)``, ``INP``,
    ``CMC@1``, ``R-precision``, ``AP@R``, ``Recall@1``, ``first_positive_rank``,
    ``n_positives``) to an array over queries; nan (or -1 for ranks) marks a skipped query.
    ``summary`` maps each metric's mean (:func:`~irviewer.core.protocols.mean_key`: ``mAP``,
    ``CMC@k``, ...), ``n_evaluated`` and ``n_skipped`` to numbers.
    """

    dataset: Dataset
    ranking: Ranking
    protocol: Protocol
    positives: PositiveRanks
    per_query: dict[str, np.ndarray]
    summary: dict[str, float | int] = field(default_factory=dict)

    @property
    def evaluated(self) -> np.ndarray:
        """Return a boolean mask of the queries that count in the means."""
        return self.positives.n_positives > 0

    def skipped(self) -> list[tuple[str, str]]:
        """Return (query name, reason) of each query left out of the means."""
        pairs = zip(self.dataset.queries, self.evaluated, strict=True)
        return [(q.name, self.protocol.skip_reason) for q, ok in pairs if not ok]

    def relevance(self, q: int, gallery_indices: np.ndarray) -> np.ndarray:
        """Return POSITIVE / NEGATIVE / IGNORED for each gallery index, for query ``q``."""
        pos, ign = query_roles(self.dataset.queries[q], self.protocol, self._global_mask())
        g = np.asarray(gallery_indices, dtype=np.int64)
        out = np.full(len(g), NEGATIVE, dtype=np.int8)
        out[np.isin(g, pos)] = POSITIVE
        out[np.isin(g, ign) | self._global_mask()[np.clip(g, 0, None)]] = IGNORED
        out[g < 0] = NEGATIVE
        return out

    def missed_positives(self, q: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Return (gallery indices, ranks after removals) of positives ranked at or after ``k``.

        Positives never retrieved (beyond a truncated list) come last with rank -1.
        """
        pos, ign = query_roles(self.dataset.queries[q], self.protocol, self._global_mask())
        raw = self.ranking.rank_items(q, pos)
        adjusted = remove_ignored(raw, self.ranking.rank_items(q, ign))
        keep = (adjusted >= k) | (adjusted < 0)
        order = np.lexsort((adjusted[keep], adjusted[keep] < 0))
        return pos[keep][order], adjusted[keep][order]

    def ranks_after_removals(self, q: int, items: np.ndarray) -> np.ndarray:
        """Return the 0-based ranks of gallery ``items`` for query ``q`` after the
        protocol's removals (the ranks the metrics use), -1 for an item not ranked (removed,
        ignored for ``q``, or beyond a truncated list). An item outside the stored lists is
        ranked from the query's score row (:meth:`Ranking.rank_items`)."""
        items = np.asarray(items, dtype=np.int64)
        _, ign = query_roles(self.dataset.queries[q], self.protocol, self._global_mask())
        out = remove_ignored(self.ranking.rank_items(q, items), self.ranking.rank_items(q, ign))
        out[np.isin(items, ign)] = -1
        return out

    def pr_curve(self, q: int) -> tuple[np.ndarray, np.ndarray]:
        """Return query ``q``'s (recall, precision) points, one per retrieved positive."""
        return metrics.pr_points(self.positives.of(q), int(self.positives.n_positives[q]))

    def ap_curve(self, q: int) -> tuple[np.ndarray, np.ndarray]:
        """Return the polyline whose area is query ``q``'s AP under the protocol's rule."""
        p = self.positives
        return ap_polyline(p.of(q), int(p.n_positives[q]), self.protocol.ap)

    def mean_pr(self, levels: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Return (recall levels, mean interpolated precision) over the evaluated queries."""
        lv = np.linspace(0.0, 1.0, 11) if levels is None else np.asarray(levels, dtype=float)
        p = self.positives
        return lv, metrics.mean_interpolated_pr(p.ranks, p.offsets, p.n_positives, lv)

    def ap_values(self) -> tuple[np.ndarray, np.ndarray]:
        """Return (query indices, AP) of the evaluated queries, in query order; skipped
        queries are left out (never counted as 0)."""
        queries = np.flatnonzero(self.evaluated).astype(np.int64)
        return queries, np.asarray(self.per_query["AP"], dtype=np.float64)[queries]

    def with_query(self, q: int, query: Query) -> Evaluation:
        """Return a new Evaluation in which query ``q`` has the ground truth of ``query``
        (:meth:`with_queries` for one query)."""
        queries = list(self.dataset.queries)
        queries[q] = query
        return self.with_queries(replace(self.dataset, queries=tuple(queries)), [q])

    def with_queries(self, dataset: Dataset, queries: Sequence[int]) -> Evaluation:
        """Return the Evaluation of the same ranking and protocol on ``dataset``, which has
        the same gallery and queries in the same order and new ground truth for the queries
        at positions ``queries``; only those are re-scored.

        The ranking is reused (an item outside the stored ones is ranked from that query's
        score row, :meth:`Ranking.rank_items`), so the result equals :func:`evaluate` on
        ``dataset`` with the same ranking. InputError when ``dataset`` has another gallery or
        other queries, or a position is not a query.
        """
        _check_same_layout(self.dataset, dataset)
        check_applicable(self.protocol, dataset.groups, dataset.label())
        changed = np.unique(np.asarray(list(queries), dtype=np.int64))
        n_q = dataset.n_queries
        if len(changed) and (changed[0] < 0 or changed[-1] >= n_q):
            bad = int(changed[0] if changed[0] < 0 else changed[-1])
            raise InputError(f"no query {bad}: there are {n_q} queries")
        mask = dataset.ignored_mask
        p = self.positives
        n_pos = p.n_positives.copy()
        new_ranks: list[np.ndarray] = []
        for q in changed.tolist():
            pos, ign = query_roles(dataset.queries[q], self.protocol, mask)
            adjusted = np.sort(remove_ignored(self.ranking.rank_items(q, pos),
                                               self.ranking.rank_items(q, ign)))
            retrieved = adjusted[adjusted >= 0]
            if self.protocol.list_depth is not None:
                retrieved = retrieved[retrieved < self.protocol.list_depth]
            new_ranks.append(retrieved.astype(np.int64))
            n_pos[q] = len(pos)
        # Splice: the unchanged queries' ranks stay where they are (each query's ranks are
        # sorted), the changed ones' are replaced; no sort of the whole array.
        lengths = np.array([len(r) for r in new_ranks], dtype=np.int64)
        pieces: list[np.ndarray] = []
        start = 0
        for q, ranks in zip(changed.tolist(), new_ranks, strict=True):
            pieces += [p.ranks[p.offsets[start]:p.offsets[q]], ranks]
            start = q + 1
        pieces.append(p.ranks[p.offsets[start]:])
        counts = np.diff(p.offsets)
        counts[changed] = lengths
        offsets = np.zeros(n_q + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(counts)
        positives = PositiveRanks(np.concatenate(pieces).astype(np.int64), offsets, n_pos)
        sub_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        sub = PositiveRanks(np.concatenate([np.zeros(0, np.int64), *new_ranks]), sub_offsets,
                            n_pos[changed])
        per_query = {key: arr.copy() for key, arr in self.per_query.items()}
        for key, arr in _per_query(sub, self.protocol).items():
            if self.protocol.cmc == "cuhk03" and key.startswith("CMC@"):
                continue
            per_query[key][changed] = arr
        if self.protocol.cmc == "cuhk03" and len(changed):
            rows = _cuhk03_cmc(dataset, self.ranking, self.protocol, changed.tolist())
            for j, k in enumerate(self.protocol.cmc_ks):
                per_query[f"CMC@{k}"][changed] = rows[:, j]
        per_query, summary = family_numbers.added(dataset, self.ranking, self.protocol, per_query,
                                                  _summary(per_query, positives, self.protocol))
        return Evaluation(dataset, self.ranking, self.protocol, positives, per_query, summary)

    def _global_mask(self) -> np.ndarray:
        return self.dataset.ignored_mask

    @cached_property
    def ties(self) -> TieBounds:
        """Return how far tied scores move this evaluation's numbers (computed on first use,
        from the ranks and tie windows the ranking stored; see :mod:`irviewer.core.ties`)."""
        return tie_bounds(self)


def tie_bounds(ev: Evaluation) -> TieBounds:
    """Return ``ev``'s :class:`~irviewer.core.ties.TieBounds`: its metrics on the best and
    worst order of every tie group, and AP's expected value over all of them."""
    dataset, ranking, protocol = ev.dataset, ev.ranking, ev.protocol
    m = marked_items(dataset, ranking, protocol)
    live = m.raw >= 0
    above, through = ranking.tie_windows(m.stored[live], m.query[live], m.gallery[live])
    groups = tie_groups(m.query[live], m.raw[live], m.code[live] == POSITIVE, above, through)
    n_q = dataset.n_queries
    n = ev.positives.n_positives
    owner = groups.query[groups.group_of]
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(np.bincount(owner, minlength=n_q))
    per_query: dict[str, np.ndarray] = {}
    keys = bounded_keys(list(ev.per_query))
    if protocol.cmc == "cuhk03":  # sampled per draw, not a function of the ranks alone
        keys = [k for k in keys if not k.startswith("CMC@")]
    for order in ("best", "worst"):
        ranks = PositiveRanks(groups.order_ranks(order), offsets, n)
        values = _per_query(_truncate(ranks, protocol), protocol)
        for key in keys:
            per_query[f"{key}_{order}"] = values[key]
    per_query["AP_expected"] = protocol_expected_ap(
        groups, n, np.diff(ev.positives.offsets), protocol.ap, protocol.ap_positives,
        protocol.list_depth)
    ok = n > 0
    summary = {mean_key(k): float(np.mean(v[ok])) if ok.any() else float("nan")
               for k, v in per_query.items()}
    tied = ok & (per_query["AP_best"] - per_query["AP_worst"] > AP_EPSILON)
    return TieBounds(per_query, summary, tied)


def _check_same_layout(old: Dataset, new: Dataset) -> None:
    """InputError unless ``new`` has ``old``'s gallery and queries, in the same order."""
    if new.gallery is not old.gallery and new.gallery != old.gallery:
        raise InputError(f"{new.label()}: the gallery differs from the one evaluated; "
                         "only the ground truth may change")
    if new.query_names is not old.query_names and new.query_names != old.query_names:
        raise InputError(f"{new.label()}: the queries differ from the ones evaluated; "
                         "only the ground truth may change")


def query_roles(query: Query, protocol: Protocol,
                global_ignored: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (positive, ignored) gallery indices of one query under ``protocol``.

    Ignored wins over positive; with ``self_match="remove"`` the query's own image is
    ignored; images removed for every query (``global_ignored`` mask) are in neither.
    """
    ign = _union(query, protocol.ignored)
    if protocol.self_match == REMOVE and query.self_index >= 0:
        ign = np.union1d(ign, [query.self_index])
    pos = np.setdiff1d(_union(query, protocol.positive), ign, assume_unique=True)
    pos = pos[~global_ignored[pos]]
    ign = ign[~global_ignored[ign]]
    return pos.astype(np.int64), ign.astype(np.int64)


def evaluate(dataset: Dataset, ranking: Ranking, protocol: Protocol) -> Evaluation:
    """Return the :class:`Evaluation` of ``ranking`` on ``dataset`` under ``protocol``."""
    check_applicable(protocol, dataset.groups, dataset.label())
    if ranking.n_queries != dataset.n_queries:
        raise InputError(f"{ranking.source}: the ranking has {ranking.n_queries} queries "
                         f"but {dataset.label()} has {dataset.n_queries}")
    positives = scored_ranks(dataset, ranking, protocol)
    per_query = _per_query(positives, protocol)
    if protocol.cmc == "cuhk03":
        cmc = _cuhk03_cmc(dataset, ranking, protocol, range(dataset.n_queries))
        for j, k in enumerate(protocol.cmc_ks):
            per_query[f"CMC@{k}"] = cmc[:, j]
    per_query, summary = family_numbers.added(dataset, ranking, protocol, per_query,
                                              _summary(per_query, positives, protocol))
    return Evaluation(dataset, ranking, protocol, positives, per_query, summary)


def scored_ranks(dataset: Dataset, ranking: Ranking, protocol: Protocol) -> PositiveRanks:
    """Return the positive ranks the metrics score: :func:`protocol_ranks` within the
    protocol's list depth."""
    return _truncate(protocol_ranks(dataset, ranking, protocol), protocol)


@dataclass(frozen=True)
class Marked:
    """The (query, gallery image) pairs a protocol marks positive or ignored, one role each
    (ignored wins): ``query``, ``gallery``, ``raw`` rank in the ranking before removals (-1
    when not ranked), ``code`` (POSITIVE or IGNORED), and ``stored`` the pair's index among
    the ranking's items of interest (-1 for an image it did not store, ranked from the
    query's score row)."""

    query: np.ndarray
    gallery: np.ndarray
    raw: np.ndarray
    code: np.ndarray
    stored: np.ndarray


def marked_items(dataset: Dataset, ranking: Ranking, protocol: Protocol) -> Marked:
    """Return the pairs ``protocol`` marks on ``dataset`` with their raw ranks (see
    :class:`Marked` and :func:`protocol_ranks`)."""
    n_q, n_g = dataset.n_queries, dataset.n_gallery
    global_mask = dataset.ignored_mask
    item_q = np.repeat(np.arange(n_q, dtype=np.int64), np.diff(ranking.item_offsets))
    item_keys = item_q * n_g + ranking.item_indices
    role = np.full(len(item_keys), NEGATIVE, dtype=np.int8)
    missing: list[tuple[np.ndarray, int]] = []  # (keys, code) the ranking did not store

    def mark(owners: np.ndarray, members: np.ndarray, code: int) -> None:
        members = np.asarray(members, dtype=np.int64)
        keep = ~global_mask[members]
        keys = np.asarray(owners, dtype=np.int64)[keep] * n_g + members[keep]
        at = np.minimum(np.searchsorted(item_keys, keys), max(len(item_keys) - 1, 0))
        found = item_keys[at] == keys if len(item_keys) else np.zeros(len(keys), bool)
        role[at[found]] = code
        if not found.all():
            missing.append((keys[~found], code))

    for code, groups in ((POSITIVE, protocol.positive), (IGNORED, protocol.ignored)):
        for group in groups:  # positives first: ignored, marked after, wins
            mark(*dataset.group_table(group), code)
    if protocol.self_match == REMOVE:
        selves = np.array([q.self_index for q in dataset.queries], dtype=np.int64)
        has = np.flatnonzero(selves >= 0)
        mark(has, selves[has], IGNORED)
    where = np.flatnonzero(role != NEGATIVE)
    found = Marked(item_q[where], ranking.item_indices[where], ranking.item_ranks[where],
                   role[where], where)
    return _with_unstored(ranking, n_g, missing, found) if missing else found


def protocol_ranks(dataset: Dataset, ranking: Ranking, protocol: Protocol) -> PositiveRanks:
    """Return every query's positive ranks after the protocol's removals, vectorised.

    Equivalent to :func:`query_roles` plus ranking look-ups query by query (a test checks
    this), but without a Python loop over ranks, so thousands of queries cost milliseconds.
    Each (query, image) gets one role, ignored winning over positive; the roles are marked
    on the ranking's own items of interest (sorted by query and image, like every group
    table), and an image it did not store (a ground truth changed since it was ranked) is
    ranked from the query's score row (:func:`marked_items`). One sort by (query, rank)
    then counts, for each positive, the ignored images ranked above it in its query.
    """
    n_q, n_g = dataset.n_queries, dataset.n_gallery
    m = marked_items(dataset, ranking, protocol)
    qs, raw, codes = m.query, m.raw, m.code
    is_pos = codes == POSITIVE
    n_positives = np.bincount(qs[is_pos], minlength=n_q).astype(np.int64)
    live = raw >= 0  # ranked (not beyond a truncated list)
    stride = max(n_g, int(raw.max(initial=-1)) + 1) + 1  # a listed ranking's may pass n_g
    # (query, rank, positive?) in one key; ranks are distinct within a query.
    tagged = np.sort(((qs[live] * stride + raw[live]) << 1) | is_pos[live])
    positive = (tagged & 1).astype(bool)
    ignored_so_far = np.cumsum(~positive)
    query = (tagged >> 1) // stride
    first = np.searchsorted(query, query)  # where each query's entries start
    above = ignored_so_far - ignored_so_far[first] + ~positive[first]
    pq = query[positive]
    adjusted = ((tagged >> 1) % stride - above)[positive]
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(np.bincount(pq, minlength=n_q))
    return PositiveRanks(adjusted.astype(np.int64), offsets, n_positives)


def _with_unstored(ranking: Ranking, n_g: int, missing: list[tuple[np.ndarray, int]],
                   found: Marked) -> Marked:
    """Return ``found`` with the images the ranking did not store added: each (query,
    image) once, ignored winning, ranked from the query's score row."""
    keys = np.concatenate([k for k, _ in missing])
    tags = np.concatenate([np.full(len(k), c != IGNORED, dtype=np.int64) for k, c in missing])
    tagged = np.sort((keys << 1) | tags)
    first = np.ones(len(tagged), dtype=bool)
    first[1:] = (tagged[1:] >> 1) != (tagged[:-1] >> 1)
    tagged = tagged[first]
    mq, mg = (tagged >> 1) // n_g, (tagged >> 1) % n_g
    mraw = np.array([ranking.rank_items(int(q), np.array([g]))[0] for q, g in zip(mq, mg,
                                                                                  strict=True)],
                    dtype=np.int64)
    mcodes = np.where(tagged & 1, POSITIVE, IGNORED).astype(np.int8)
    return Marked(np.concatenate([found.query, mq]), np.concatenate([found.gallery, mg]),
                  np.concatenate([found.raw, mraw]), np.concatenate([found.code, mcodes]),
                  np.concatenate([found.stored, np.full(len(mq), -1, dtype=np.int64)]))


# -- internals ---------------------------------------------------------------------------

def _union(query: Query, groups: tuple[str, ...]) -> np.ndarray:
    arrays = [query.group(g) for g in groups]
    return np.unique(np.concatenate(arrays)) if arrays else np.zeros(0, dtype=np.int64)


def remove_ignored(raw_ranks: np.ndarray, ignored_ranks: np.ndarray) -> np.ndarray:
    """Return ranks after the protocol's removal step: each rank minus the number of ignored
    items ranked above it (``ignored_ranks``, -1 entries not ranked); -1 stays -1."""
    ign = np.sort(ignored_ranks[ignored_ranks >= 0])
    out = raw_ranks - np.searchsorted(ign, raw_ranks)
    out[raw_ranks < 0] = -1
    return out


def _truncate(p: PositiveRanks, protocol: Protocol) -> PositiveRanks:
    """Return the ranks within the protocol's list depth (all of them when it has none)."""
    if protocol.list_depth is None:
        return p
    keep = p.ranks < protocol.list_depth
    owner = np.repeat(np.arange(len(p.n_positives)), np.diff(p.offsets))
    counts = np.bincount(owner[keep], minlength=len(p.n_positives))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return PositiveRanks(p.ranks[keep], offsets, p.n_positives)


def _per_query(p: PositiveRanks, protocol: Protocol) -> dict[str, np.ndarray]:
    n = p.n_positives
    batch = metrics.ragged(p.ranks, p.offsets, n)  # checked once for every metric
    # ap_positives "retrieved": VLFeat vl_pr as hpatches-benchmark retrieval_eval.m calls it.
    out: dict[str, np.ndarray] = {"AP": average_precision(
        batch, protocol.ap, protocol.ap_positives, protocol.list_depth)}
    for k in protocol.ks:
        out[f"P@{k}"] = batch.precision_at_k(k)
    if protocol.revisitop_pk:
        for k in protocol.ks:
            out[f"P@{k}(revisitop)"] = batch.precision_at_k_revisitop(k)
    if protocol.cmc == "market":
        cmc = batch.cmc_first_match(protocol.cmc_ks)
        for j, k in enumerate(protocol.cmc_ks):
            out[f"CMC@{k}"] = cmc[:, j]
    elif protocol.cmc == "cuhk03":
        for k in protocol.cmc_ks:
            out[f"CMC@{k}"] = np.full(len(n), np.nan)
    if protocol.inp:
        out["INP"] = batch.inverse_negative_penalty()
    out.update(learning_metrics(batch, protocol.map_at_r, protocol.recall_ks))
    out["R-precision"] = batch.r_precision()
    out["first_positive_rank"] = batch.first_positive_rank()
    out["n_positives"] = n.astype(np.int64)
    return out


def _summary(per_query: dict[str, np.ndarray], p: PositiveRanks,
             protocol: Protocol) -> dict[str, float | int]:
    summary: dict[str, float | int] = {}
    ok = p.n_positives > 0
    n_eval = int(ok.sum())
    for key, values in per_query.items():
        if key in family_numbers.NOT_AVERAGED:
            continue
        summary[mean_key(key)] = float(np.mean(values[ok])) if n_eval else float("nan")
    summary["n_evaluated"] = n_eval
    summary["n_skipped"] = int(len(ok) - n_eval)
    return summary


def query_rng(seed: int, q: int) -> np.random.Generator:
    """Return query ``q``'s own random generator for the CUHK03 sampler: seeded by
    (protocol seed, query position), so a query draws the same samples whether all queries
    are scored or only it is re-scored (:meth:`Evaluation.with_queries`)."""
    return np.random.default_rng([int(seed), int(q)])


def _cuhk03_cmc(dataset: Dataset, ranking: Ranking, protocol: Protocol,
                queries: range | list[int]) -> np.ndarray:
    """Return CUHK03 single-gallery-shot CMC rows (one per query in ``queries``), each
    query sampled with :func:`query_rng`."""
    labels = dataset.gallery_labels
    if labels is None:
        raise InputError(f"{dataset.label()}: CUHK03 single-gallery-shot CMC needs a person "
                         "id for every gallery image")
    global_mask = dataset.ignored_mask
    out = np.full((len(queries), len(protocol.cmc_ks)), np.nan)
    for row, q in enumerate(queries):
        query = dataset.queries[q]
        pos, ign = query_roles(query, protocol, global_mask)
        if not len(pos):
            continue
        valid = np.ones(dataset.n_gallery, dtype=bool)
        valid[ign] = False
        valid &= ~global_mask
        idx = np.flatnonzero(valid)
        order = ranking.order_of(q, idx)
        ranks = np.empty(len(order), dtype=np.int64)
        ranks[np.searchsorted(idx, order)] = np.arange(len(order))
        out[row] = metrics.cmc_single_gallery_shot(
            ranks, labels[idx], query.meta.get("label"), protocol.cmc_ks,
            protocol.cmc_repeats, query_rng(protocol.seed, q))
    return out
