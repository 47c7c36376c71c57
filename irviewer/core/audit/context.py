"""The label audit's shared state: the protocol's roles as sorted (query, gallery) keys, the
positive sets the queries share, one view per method of what its ranking says, the evidence on
(positive set, item) pairs, and the gallery neighbours of the images that evidence points at
(see :mod:`irviewer.core.audit`).

Everything reads the rankings' stored top-K lists and exact item ranks; gallery-to-gallery
similarities come from :mod:`irviewer.core.neighbours` in blocks and only for chosen images (or
the whole gallery when that is cheap), so no queries x gallery or gallery x gallery matrix is
ever held.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from irviewer.core import neighbours as nb
from irviewer.core.audit.sets import PositiveSets, positive_sets
from irviewer.core.audit.suspects import AuditOptions, Suspect
from irviewer.core.convention_names import KEEP, REMOVE
from irviewer.core.corrections import NEGATIVE, Correction
from irviewer.core.dataset import Dataset
from irviewer.core.parallel import run_each
from irviewer.core.protocols import Protocol
from irviewer.core.ranking import Ranking


def isin_sorted(keys: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    if not len(sorted_keys):
        return np.zeros(keys.shape, dtype=bool)
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[at] == keys


@dataclass
class MethodView:
    """What one method's ranking says, in the protocol's terms.

    Top lists: ``top_q``/``top_g``/``top_rank``/``top_score`` of the negatives within the
    audit depth (rank after the protocol's removals, 0-based). Positives: ``pos_q``,
    ``pos_g``, ``pos_rank`` (-1 beyond a list), sorted by (query, rank, unranked last).
    """

    name: str
    ranking: Ranking
    unit: nb.UnitGallery | None
    top_q: np.ndarray
    top_g: np.ndarray
    top_rank: np.ndarray
    top_score: np.ndarray
    pos_q: np.ndarray
    pos_g: np.ndarray
    pos_rank: np.ndarray
    n_pos: np.ndarray
    n_neg: np.ndarray
    n_g: int

    def rank_of(self, q: int, g: int) -> int | None:
        """Return ``g``'s 1-based rank for query ``q`` after removals, None when unknown: a
        search of the query's own stretch of the positives and of the top lists (both sorted
        by query), so the few suspects' ranks cost no sort of every key."""
        for qs, gs, ranks in ((self.pos_q, self.pos_g, self.pos_rank),
                              (self.top_q, self.top_g, self.top_rank)):
            lo, hi = np.searchsorted(qs, (q, q + 1))
            hit = np.flatnonzero(gs[lo:hi] == g)
            if len(hit):
                rank = int(ranks[lo + hit[0]])
                return rank + 1 if rank >= 0 else None
        return None


@dataclass
class SetEvidence:
    """One method's evidence on (positive set, item) pairs (:mod:`irviewer.core.audit.sets`).

    ``keys``: sorted ``s * n_g + g`` of every labelled pair with evidence: each set's
    positives, and the negatives ranked within the stored lists of one of the set's queries,
    with a positive among their nearest gallery images or more like the set than some of its
    negatives (the other negatives, the *bulk*, have no evidence); ``is_pos`` their label;
    ``u`` the share of the set's other positives the item outranks (mean over the set's
    queries); ``v`` the share of its nearest labelled gallery images in the set (NaN:
    neighbours not computed); ``x`` (lists only) the share of its nearest gallery images that
    are a positive of any list; ``v_ref`` whether the item is one of the reference rows whose
    shares the set's negatives' histograms count. ``ref_neg``: per set,
    how many reference rows are its negatives (None until neighbours are computed);
    ``whole``: every active gallery image is a reference row. After scoring: ``log_lr``,
    ``prob`` (probability that the label is wrong), ``bulk_prob`` of a
    negative without evidence, the priors ``rho`` (negatives, positives), and ``v_hist`` the
    sets' histograms of v for the evidence sentences (positives', negatives', offsets, each
    item's bin, whether it is counted: +1 / -1 / 0). ``log_odds`` / ``bulk_log_odds``: the
    log odds that the label is wrong, unbounded where ``prob`` rounds to 1 (the order of the
    most certain errors), a competing claim included (:func:`~irviewer.core.audit.pairs.
    competing_claims`).
    """

    keys: np.ndarray
    is_pos: np.ndarray
    u: np.ndarray
    v: np.ndarray
    v_ref: np.ndarray
    x: np.ndarray | None = None
    x_ref: list[np.ndarray] | None = None
    w: np.ndarray | None = None
    like: np.ndarray | None = None
    like_neg: np.ndarray | None = None
    ref_neg: np.ndarray | None = None
    whole: bool = False
    log_lr: np.ndarray | None = None
    log_odds: np.ndarray | None = None
    prob: np.ndarray | None = None
    bulk_log_odds: np.ndarray | None = None
    bulk_prob: np.ndarray | None = None
    rho: tuple[float, float] = (0.0, 0.0)
    v_hist: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
    parts: np.ndarray | None = None
    doubted: np.ndarray | None = None

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Return the position of each key in ``keys`` (-1 where it has no evidence)."""
        keys = np.asarray(keys, dtype=np.int64)
        if not len(self.keys):
            return np.full(keys.shape, -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        return np.where(self.keys[at] == keys, at, -1)

    def find_in(self, union: np.ndarray) -> np.ndarray:
        """Return :meth:`find` of ``union``, a sorted array holding every one of ``keys``
        (the union of the methods' keys): one search of the fewer keys into it."""
        at = np.full(len(union), -1, dtype=np.int64)
        at[np.searchsorted(union, self.keys)] = np.arange(len(self.keys))
        return at


@dataclass(frozen=True)
class RowNeighbours:
    """One method's nearest gallery images of the audited rows.

    ``rows``: the gallery image of each row; ``found``: its neighbours; ``item_row``: gallery
    image -> its row; ``sample``: the rows of a random sample of the gallery (the reference
    for "far from everything", and for the negatives' neighbour shares when the rows are not
    the whole gallery).
    """

    rows: np.ndarray
    found: nb.Neighbours
    item_row: dict[int, int]
    sample: slice


@dataclass(frozen=True)
class PairScores:
    """The probability that each (positive set, item) label is wrong, the smallest over the
    methods (agreement): ``keys`` (sorted ``s * n_g + g``), ``is_pos``, ``prob`` and its
    ``log_odds`` (the order where probabilities round to 1); ``at`` per method the position
    of each key in that method's :class:`SetEvidence` (-1: bulk)."""

    keys: np.ndarray
    is_pos: np.ndarray
    prob: np.ndarray
    at: tuple[np.ndarray, ...]
    log_odds: np.ndarray


@dataclass
class Context:
    """The audit's shared state: dataset, protocol roles, one view per method, findings."""

    dataset: Dataset
    protocol: Protocol
    options: AuditOptions
    views: list[MethodView]
    pos_keys: np.ndarray
    removed_keys: np.ndarray
    selves: np.ndarray
    labels: np.ndarray | None  # per gallery image, as str (image-label families)
    query_labels: list[str] | None
    active: np.ndarray
    suspects: list[Suspect] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sets: PositiveSets | None = None
    set_evidence: list[SetEvidence] = field(default_factory=list)  # one per method
    pair_scores: PairScores | None = None
    near: list[RowNeighbours] = field(default_factory=list)  # one per method with vectors
    label_members: dict[str, np.ndarray] = field(default_factory=dict)
    #: (set, item) key -> the unrelated set whose competing claim the item fits better
    rivals: dict[int, int] = field(default_factory=dict)
    #: the family of each positive set (:func:`~irviewer.core.audit.claims.families`)
    family: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: per positive group of the protocol (good, ok), the sorted ``s * n_g + g`` its sets give
    group_keys: list[np.ndarray] = field(default_factory=list)

    @property
    def n_g(self) -> int:
        """Return the gallery size."""
        return self.dataset.n_gallery

    @property
    def n_methods(self) -> int:
        """Return the number of methods."""
        return len(self.views)

    @property
    def with_vectors(self) -> list[MethodView]:
        """Return the methods ranked from descriptors (gallery vectors available)."""
        return [v for v in self.views if v.unit is not None]

    @classmethod
    def build(cls, dataset: Dataset, rankings: dict[str, Ranking], protocol: Protocol,
              options: AuditOptions) -> Context:
        """Return the context: protocol roles as sorted (query, gallery) keys, and views."""
        n_g = dataset.n_gallery
        active = ~dataset.ignored_mask
        pos_parts: list[np.ndarray] = []
        rem_parts: list[np.ndarray] = []
        for groups, parts in ((protocol.positive, pos_parts), (protocol.ignored, rem_parts)):
            for group in groups:
                owners, members = dataset.group_table(group)
                parts.append(owners * n_g + members)
        selves = np.array([q.self_index for q in dataset.queries], dtype=np.int64)
        has = np.flatnonzero(selves >= 0)
        if protocol.self_match == REMOVE:
            rem_parts.append(has * n_g + selves[has])
        removed = np.unique(np.concatenate(rem_parts)) if rem_parts else np.zeros(0, np.int64)
        pos = np.unique(np.concatenate(pos_parts)) if pos_parts else np.zeros(0, np.int64)
        pos = pos[~isin_sorted(pos, removed) & active[pos % n_g]]
        removed = removed[active[removed % n_g]]
        labels = query_labels = None
        if dataset.gallery_labels is not None and all("label" in q.meta
                                                      for q in dataset.queries):
            labels = np.asarray([str(x) for x in dataset.gallery_labels])
            query_labels = [str(q.meta["label"]) for q in dataset.queries]
        ctx = cls(dataset, protocol, options, [], pos, removed, selves, labels, query_labels,
                  active)
        if labels is not None:
            live = np.flatnonzero(active)
            names, inverse = np.unique(labels[live], return_inverse=True)
            order = np.argsort(inverse, kind="stable")
            bounds = np.searchsorted(inverse[order], np.arange(len(names) + 1))
            ctx.label_members = {name: live[order[bounds[i]:bounds[i + 1]]]
                                 for i, name in enumerate(names.tolist())}
        ctx.sets = positive_sets(pos, removed, selves, active)
        if labels is None and len(protocol.positive) > 1:
            of_query = ctx.sets.of_query
            for group in protocol.positive:
                owners, members = dataset.group_table(group)
                ctx.group_keys.append(np.unique(of_query[owners] * n_g + members))
        ctx.views = run_each(lambda item: _view(ctx, *item), list(rankings.items()))
        if not ctx.with_vectors:
            ctx.notes.append("no method has descriptors (only precomputed rankings), so label "
                             "disagreement, near-duplicates and positive-set similarity "
                             "are not checked")
        return ctx

    def grades(self, keys: np.ndarray, is_pos: np.ndarray) -> np.ndarray | None:
        """Return the positive group each (set, item) key's label gives (0 for the protocol's
        first, ``good``; 1 for ``ok``, ...; the first where the set's queries differ; -1 for a
        negative), None where the protocol has one positive group or the sets are image
        labels: the nearness of a positive is judged against its own group's
        (:mod:`irviewer.core.audit.calibration`)."""
        if not self.group_keys:
            return None
        grade = np.full(len(keys), -1, dtype=np.int64)
        for k in range(len(self.group_keys) - 1, -1, -1):  # the first group wins
            grade[isin_sorted(keys, self.group_keys[k])] = k
        return np.where(is_pos, np.maximum(grade, 0), -1)

    def members(self, label: str) -> np.ndarray:
        """Return the active gallery images carrying ``label`` (image-label families)."""
        found = self.label_members.get(label)
        return found if found is not None else np.zeros(0, dtype=np.int64)

    def group_of(self, q: int, g: int) -> str:
        """Return the relevance group ``g`` has for query ``q``, or ``negative``."""
        for group in self.dataset.groups:
            found = self.dataset.queries[q].group(group)
            if len(found) and np.searchsorted(found, g) < len(found) and \
                    found[np.searchsorted(found, g)] == g:
                return group
        return NEGATIVE

    def ranks(self, q: int, g: int) -> tuple[tuple[str, int | None], ...]:
        """Return (method, 1-based rank) of ``g`` for query ``q`` under every method."""
        return tuple((v.name, v.rank_of(q, g)) for v in self.views)

    def relabel(self, g: int, label: str) -> Correction:
        """Return the image-level correction giving gallery image ``g`` the label."""
        return Correction("", self.dataset.gallery[g], label)


def _view(ctx: Context, name: str, ranking: Ranking) -> MethodView:
    ds, n_g, opts = ctx.dataset, ctx.n_g, ctx.options
    n_q = ds.n_queries
    idx = ranking.top_indices
    valid = idx >= 0
    keys = np.arange(n_q, dtype=np.int64)[:, None] * n_g + np.maximum(idx, 0)
    is_pos = isin_sorted(keys, ctx.pos_keys)
    is_rem = isin_sorted(keys, ctx.removed_keys)
    adj = np.cumsum(valid & ~is_rem, axis=1) - 1
    depth = opts.depth or idx.shape[1]
    neg = valid & ~is_pos & ~is_rem & (idx != ctx.selves[:, None]) & (adj < depth)
    tq, tj = np.nonzero(neg)
    # Positives: exact ranks from the ranking's items, minus removed items ranked above.
    item_q = np.repeat(np.arange(n_q, dtype=np.int64), np.diff(ranking.item_offsets))
    item_keys = item_q * n_g + ranking.item_indices
    raw = ranking.item_ranks
    rem = isin_sorted(item_keys, ctx.removed_keys) & (raw >= 0)
    stride = n_g + 1
    rem_keys = np.sort(item_q[rem] * stride + raw[rem])
    p = isin_sorted(item_keys, ctx.pos_keys) & (ranking.item_indices != ctx.selves[item_q])
    pq, pg, pr = item_q[p], ranking.item_indices[p], raw[p]
    above = np.searchsorted(rem_keys, pq * stride + pr) - np.searchsorted(rem_keys, pq * stride)
    pr = np.where(pr >= 0, pr - above, -1)
    order = np.lexsort((np.where(pr < 0, n_g + 1, pr), pq))
    n_pos = np.bincount(pq, minlength=n_q).astype(np.int64)
    n_rem = np.bincount(item_q[isin_sorted(item_keys, ctx.removed_keys)], minlength=n_q)
    kept_self = (ctx.selves >= 0) & (ctx.protocol.self_match == KEEP)
    n_neg = np.maximum(ranking.n_ranked - n_pos - n_rem - kept_self, 1)
    unit = nb.unit_gallery(ranking) if not ranking.truncated else None
    return MethodView(name, ranking, unit, tq, idx[tq, tj], adj[tq, tj],
                      ranking.top_scores[tq, tj], pq[order], pg[order], pr[order], n_pos, n_neg,
                      n_g)


def intersect(tables: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Return (keys present in every table, (n_keys, n_tables) values)."""
    keys, first = tables[0]
    values = [first]
    for k2, v2 in tables[1:]:
        common, ia, ib = np.intersect1d(keys, k2, assume_unique=True, return_indices=True)
        keys = common
        values = [v[ia] for v in values] + [v2[ib]]
    return keys, np.stack(values, axis=1) if values else np.zeros((0, 0))


