"""Score distributions of positive and negative pairs, and the threshold that accepts them.

A verification or open-set user asks at which score to say *same*. The pairs are every
(query, gallery image) pair the protocol does not ignore: positive when the image is one of
the query's positives, negative otherwise. Images removed for every query and the query's
ignored images (junk, its own image when the protocol removes it, the hard images of
rOxford Easy, ...) are in no pair. A query without positives still gives negative pairs.

Counts are kept on a fixed grid, so that precision and recall of "score >= t" are exact
counts at every grid edge: every ranking irviewer makes scores in [-1, 1] (cosines, and
k-reciprocal re-ranking's negated distances in [-1, 0]); the grid cuts [-1, 1] into
:data:`GRID_BINS` bins of width ``2 / GRID_BINS``, a power of two, so a score's bin
``floor(s * GRID_BINS / 2) + GRID_BINS / 2`` is computed exactly in float32 and "score >=
edge" is decided exactly for every edge. A score outside [-1, 1] (float rounding of a cosine
of 1) falls into an end bin. Every positive score is kept too, and the highest negative
scores, enough for TAR at the largest FAR asked.

TAR at FAR is the face-verification operating point (ISO/IEC 19795-1's true and false
accept rates; fast-reid's ``TPR@FPR`` and insightface's IJB evaluation read it off
scikit-learn's ``roc_curve``): accepting "score >= t", TAR is the fraction of positive pairs
accepted and FAR the fraction of negative pairs accepted. For a target FAR f the threshold
is the lowest score t whose FAR is at most f, the point of the ROC curve with the largest
FPR not above f; TAR and the FAR reached there are reported with it. fast-reid and
insightface take instead the ROC point whose FPR is *nearest* f (``argmin |fpr - f|``),
which can exceed f; and fast-reid's code labels the *different*-identity pairs as its
positive class over distances, so its ``TPR@FPR`` is the rate of correct rejections at a
rate of false rejections (docs/metrics.md). Scores are read block by block from the
ranking (:meth:`~irviewer.core.ranking.Ranking.score_rows`): the whole score matrix is
never held.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from math import ceil

import numpy as np

from irviewer.core.errors import InputError
from irviewer.core.evaluation import Evaluation, query_roles

#: Bins of the score grid over [-1, 1] (a power of two: bin edges are exact binary fractions).
GRID_BINS = 1 << 14
#: The targets of TAR at FAR, as fast-reid reports them.
FARS = (1e-4, 1e-3, 1e-2)
#: Bytes of one block of score rows.
PAIR_BLOCK_BYTES = 64 * 2**20
#: Scores binned at once within a block (the bin indices' memory).
_BIN_STEP = 1 << 22
_HALF = GRID_BINS // 2
#: Scores sampled from a block to guess which can be among the highest negatives.
_SAMPLE = 1 << 16


def edge(i: int) -> float:
    """Return grid edge ``i`` (0..GRID_BINS): ``-1 + 2 i / GRID_BINS``, exact; when counting,
    edge 0 stands for -inf and edge GRID_BINS for +inf (the end bins take every score
    beyond)."""
    return i / _HALF - 1.0


def grid_bins(scores: np.ndarray) -> np.ndarray:
    """Return each float32 score's grid bin (0..GRID_BINS-1): bin ``b`` holds the scores in
    [edge(b), edge(b + 1)), the end bins everything beyond; exact, as the scaling is by a
    power of two."""
    scaled = np.multiply(np.asarray(scores, dtype=np.float32), np.float32(_HALF))
    np.floor(scaled, out=scaled)
    scaled += np.float32(_HALF)  # whole numbers up to 2^15: exact in float32
    np.clip(scaled, 0, GRID_BINS - 1, out=scaled)
    return scaled.astype(np.int64)


@dataclass(frozen=True)
class PairScores:
    """The scores of a set of (query, gallery image) pairs, by class.

    ``positives`` and ``negatives`` count each class's scores per grid bin (GRID_BINS);
    ``positive_scores`` holds every positive score, ascending; ``top_negatives`` the
    highest negative scores, descending: all of them, or at least the ``ceil(max(fars) *
    n_negative) + 1`` highest that TAR at ``fars`` needs.
    """

    positives: np.ndarray
    negatives: np.ndarray
    positive_scores: np.ndarray
    top_negatives: np.ndarray
    fars: tuple[float, ...] = FARS

    @property
    def n_positive(self) -> int:
        """Return the number of positive pairs."""
        return int(self.positives.sum())

    @property
    def n_negative(self) -> int:
        """Return the number of negative pairs."""
        return int(self.negatives.sum())

    def accepted(self, i: int) -> tuple[int, int]:
        """Return (positive, negative) pairs whose score is at least grid edge ``i``
        (1..GRID_BINS-1; 0 accepts every pair, GRID_BINS none): exact counts."""
        if not 0 <= i <= GRID_BINS:
            raise ValueError(f"grid edge {i} is not in 0..{GRID_BINS}")
        return int(self.positives[i:].sum()), int(self.negatives[i:].sum())

    def precision_recall(self, i: int) -> tuple[float, float]:
        """Return (precision, recall) of "score >= edge(i)": accepted positives over accepted
        pairs (nan when none is accepted) and over all positives (nan without positives)."""
        tp, fp = self.accepted(i)
        precision = tp / (tp + fp) if tp + fp else float("nan")
        recall = tp / self.n_positive if self.n_positive else float("nan")
        return precision, recall


def coarse_histogram(pairs: PairScores, bins: int = 256) -> tuple[np.ndarray, np.ndarray,
                                                                   np.ndarray]:
    """Return (edges, positive counts, negative counts) of ``pairs`` in ``bins`` equal bins
    over [-1, 1] (a power of two up to GRID_BINS: each sums whole grid bins), cut to the
    bins from the first to the last that holds a pair; ``edges`` has one more entry than
    the counts (the end bins also hold the rare scores beyond [-1, 1])."""
    if bins < 1 or GRID_BINS % bins:
        raise ValueError(f"{bins} bins do not divide the grid of {GRID_BINS}")
    pos = pairs.positives.reshape(bins, -1).sum(axis=1)
    neg = pairs.negatives.reshape(bins, -1).sum(axis=1)
    used = np.flatnonzero(pos + neg)
    if not len(used):
        return np.zeros(1), np.zeros(0, np.int64), np.zeros(0, np.int64)
    a, b = int(used[0]), int(used[-1]) + 1
    width = GRID_BINS // bins
    edges = np.array([edge(i * width) for i in range(a, b + 1)])
    return edges, pos[a:b], neg[a:b]


@dataclass(frozen=True)
class OperatingPoint:
    """TAR at a target FAR: the threshold (accept "score >= threshold"; inf when no score
    keeps the FAR within the target), the TAR and the FAR reached there."""

    far_target: float
    threshold: float
    tar: float
    far: float


def tar_at_far(pairs: PairScores, fars: tuple[float, ...] | None = None) -> list[OperatingPoint]:
    """Return the operating point of each target FAR (each in (0, 1)): the lowest score t
    with #(negatives >= t) / n_negative <= f, TAR = #(positives >= t) / n_positive.

    This is the point of scikit-learn's ``roc_curve(labels, scores)`` with the largest FPR
    not above f (its threshold, TPR and FPR). nan without positives or negatives.
    """
    fars = pairs.fars if fars is None else fars
    n_pos, n_neg = len(pairs.positive_scores), pairs.n_negative
    out = []
    for f in fars:
        if not 0.0 < f < 1.0:
            raise ValueError(f"a target FAR must lie in (0, 1), not {f}")
        if n_pos == 0 or n_neg == 0:
            out.append(OperatingPoint(f, float("nan"), float("nan"), float("nan")))
            continue
        m = allowed_negatives(f, n_neg)
        if m >= len(pairs.top_negatives):
            raise ValueError(f"FAR {f} needs the {m + 1} highest negative scores; "
                             f"{len(pairs.top_negatives)} were kept")
        # Accepting the (m+1)-th highest negative would exceed f: accept what lies above it.
        cut = pairs.top_negatives[m]
        above_pos = pairs.positive_scores[np.searchsorted(pairs.positive_scores, cut,
                                                          side="right"):]
        above_neg = pairs.top_negatives[:m][pairs.top_negatives[:m] > cut]  # descending
        threshold = min(float(above_pos[0]) if len(above_pos) else np.inf,
                        float(above_neg[-1]) if len(above_neg) else np.inf)
        out.append(OperatingPoint(f, threshold, len(above_pos) / n_pos, len(above_neg) / n_neg))
    return out


def allowed_negatives(far: float, n_negative: int) -> int:
    """Return the most negative pairs that may be accepted at ``far``: the largest m with
    m / n_negative <= far, divided as scikit-learn divides its false positive counts."""
    m = int(far * n_negative)
    while m + 1 <= n_negative and (m + 1) / n_negative <= far:
        m += 1
    while m > 0 and m / n_negative > far:
        m -= 1
    return m


@dataclass(frozen=True)
class Progress:
    """One step of :func:`iter_pair_scores`: ``done`` of ``total`` query blocks, and the
    result at the end."""

    done: int
    total: int
    pairs: PairScores | None = None
    stage: str = "counting the pairs' scores"


def iter_pair_scores(evaluation: Evaluation, fars: tuple[float, ...] = FARS,
                     block_rows: int | None = None) -> Iterator[Progress]:
    """Count the scores of every pair of ``evaluation`` (see the module), yielding
    :class:`Progress` after each block of queries; the last step carries the
    :class:`PairScores`. Stop iterating to cancel.

    The ranking's score rows are read a block of queries at a time (about
    :data:`PAIR_BLOCK_BYTES`); InputError for a ranking read from a file, which has scores
    for its listed results only.
    """
    ranking, dataset, protocol = evaluation.ranking, evaluation.dataset, evaluation.protocol
    if not ranking.has_score_rows:
        raise InputError(f"{ranking.source}: score distributions need the score of every "
                         "(query, gallery image) pair, and a ranking read from a file has "
                         "scores for its listed results only; give the descriptor file")
    n_q, n_g = dataset.n_queries, dataset.n_gallery
    removed = dataset.ignored_mask
    n_active = int(n_g - removed.sum())
    keep = min(n_q * n_active, ceil(max(fars, default=0.0) * n_q * n_active) + 1)
    rows = block_rows or max(1, PAIR_BLOCK_BYTES // (4 * max(n_g, 1)))
    blocks = [(a, min(n_q, a + rows)) for a in range(0, n_q, rows)]
    state = _Counts(keep)
    yield Progress(0, len(blocks))
    for done, (qa, qb) in enumerate(blocks, start=1):
        scores = ranking.score_rows(qa, qb)
        n_pairs = 0
        for r, q in enumerate(range(qa, qb)):
            pos, ign = query_roles(dataset.queries[q], protocol, removed)
            state.add_positives(scores[r, pos])
            scores[r, pos] = -np.inf
            scores[r, ign] = -np.inf
            n_pairs += n_active - len(pos) - len(ign)
        state.add_negatives(scores, n_pairs)
        yield Progress(done, len(blocks))
    yield Progress(len(blocks), len(blocks), state.result(fars))


def pair_scores(evaluation: Evaluation, fars: tuple[float, ...] = FARS) -> PairScores:
    """Return the :class:`PairScores` of every pair of ``evaluation`` (see
    :func:`iter_pair_scores`)."""
    result = None
    for step in iter_pair_scores(evaluation, fars):
        result = step.pairs or result
    assert result is not None
    return result


def query_pair_scores(evaluation: Evaluation, q: int) -> PairScores:
    """Return the :class:`PairScores` of query ``q``'s pairs alone (all its negatives kept),
    from its score row: InputError for a ranking read from a file."""
    ranking = evaluation.ranking
    if not ranking.has_score_rows:
        raise InputError(f"{ranking.source}: a ranking read from a file has scores for its "
                         "listed results only, not for every gallery image")
    row = ranking.score_row(q)
    pos, ign = query_roles(evaluation.dataset.queries[q], evaluation.protocol,
                           evaluation.dataset.ignored_mask)
    negative = np.ones(len(row), dtype=bool)
    negative[pos] = negative[ign] = False
    negative &= ~evaluation.dataset.ignored_mask
    state = _Counts(int(negative.sum()))
    state.add_positives(row[pos])
    values = row[negative]
    state.add_negatives(values[None, :], len(values))
    return state.result(FARS)


class _Counts:
    """The running counts of :func:`iter_pair_scores`: positives, negatives per bin, and the
    ``keep`` highest negative scores."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.negatives = np.zeros(GRID_BINS, dtype=np.int64)
        self.positive_scores: list[np.ndarray] = []
        self.top = np.zeros(0, dtype=np.float32)

    def add_positives(self, scores: np.ndarray) -> None:
        self.positive_scores.append(np.asarray(scores, dtype=np.float32))

    def add_negatives(self, block: np.ndarray, n_pairs: int) -> None:
        """Add a block whose finite scores are exactly its ``n_pairs`` negative pairs (the
        rest set to -inf, which falls into bin 0 and is taken out again)."""
        flat = block.reshape(-1)
        for a in range(0, len(flat), _BIN_STEP):
            self.negatives += np.bincount(grid_bins(flat[a:a + _BIN_STEP]),
                                          minlength=GRID_BINS)
        self.negatives[0] -= len(flat) - n_pairs
        if self.keep == 0:
            return
        merged = np.concatenate([self.top, self._candidates(flat)])
        if len(merged) > self.keep:
            merged = np.partition(merged, len(merged) - self.keep)[len(merged) - self.keep:]
        self.top = merged

    def _candidates(self, flat: np.ndarray) -> np.ndarray:
        """Return the scores of ``flat`` that can be among the ``keep`` highest so far.

        Once ``keep`` are kept, those above the lowest kept. Before, those at or above a
        floor read off a strided sample (about twice as many as are missing), when they and
        the kept ones at or above it are enough; else every finite score. Equal scores are
        interchangeable, so the values kept are the ``keep`` highest either way.
        """
        missing = self.keep - len(self.top)
        if missing <= 0:
            return flat[flat > self.top.min()]
        if 4 * missing < len(flat):
            sample = flat[::max(1, len(flat) // _SAMPLE)]
            sample = sample[np.isfinite(sample)]
            if len(sample) >= _SAMPLE // 16:
                j = len(sample) - min(len(sample), -(-2 * missing * len(sample) // len(flat)))
                floor = np.partition(sample, j)[j]
                found = flat[flat >= floor]
                if len(found) + int(np.count_nonzero(self.top >= floor)) >= self.keep:
                    return found
        return flat[np.isfinite(flat)]

    def result(self, fars: tuple[float, ...]) -> PairScores:
        positive = (np.sort(np.concatenate(self.positive_scores)) if self.positive_scores
                    else np.zeros(0, dtype=np.float32))
        positives = np.bincount(grid_bins(positive), minlength=GRID_BINS)
        return PairScores(positives, self.negatives, positive,
                          np.sort(self.top)[::-1].copy(), tuple(fars))
