"""Learning a VLAD vocabulary: the PCA and the k-means words of :mod:`irviewer.extract.vlad`
(numpy only).

The museum demo's vocabulary was learnt by ``resources/demo/build.py`` with these functions
on the demo gallery; ``irviewer index`` learns a collection's own from a sample of its
photos' local descriptors (:meth:`irviewer.extract.vlad.VladExtractor.learned`). PCA to
:data:`LOCAL_DIM` dimensions, then :data:`WORDS` centres by Lloyd's algorithm
(:data:`KMEANS_ITERATIONS` iterations) from a seeded k-means++ start (Arthur &
Vassilvitskii, SODA 2007), on at most :data:`KMEANS_SAMPLE` local descriptors — the
vocabulary of VLAD (Jégou et al., CVPR 2010).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from irviewer.core.errors import InputError

#: Dimensions the local descriptors are reduced to by PCA.
LOCAL_DIM = 32
#: Words (k-means centres) of the vocabulary.
WORDS = 128
#: Local descriptors the vocabulary is learnt from, at most.
KMEANS_SAMPLE = 20_000
#: Lloyd iterations after the k-means++ start.
KMEANS_ITERATIONS = 25


def kmeans(data: np.ndarray, k: int, rng: np.random.Generator,
           iterations: int = KMEANS_ITERATIONS) -> np.ndarray:
    """Return ``k`` centres (float32) by Lloyd's algorithm from a seeded k-means++ start."""
    data = data.astype(np.float64)
    sq = (data ** 2).sum(axis=1)
    centres = np.empty((k, data.shape[1]))
    centres[0] = data[rng.integers(len(data))]
    nearest = ((data - centres[0]) ** 2).sum(axis=1)
    for j in range(1, k):
        centres[j] = data[rng.choice(len(data), p=nearest / nearest.sum())]
        nearest = np.minimum(nearest, ((data - centres[j]) ** 2).sum(axis=1))
    for _ in range(iterations):
        assign = np.argmin(sq[:, None] - 2 * data @ centres.T + (centres ** 2).sum(axis=1), 1)
        counts = np.bincount(assign, minlength=k)
        sums = np.zeros_like(centres)
        np.add.at(sums, assign, data)
        filled = counts > 0
        centres[filled] = sums[filled] / counts[filled, None]
    return centres.astype(np.float32)


def learn_vocabulary(local: Sequence[np.ndarray], rng: np.random.Generator
                     ) -> dict[str, np.ndarray]:
    """Return the PCA (to :data:`LOCAL_DIM` dims) and :data:`WORDS` k-means centres learnt on
    a seeded sample of :data:`KMEANS_SAMPLE` local descriptors from ``local``, as the arrays
    of a :class:`~irviewer.extract.vlad.Vocabulary` (``mean``, ``basis``, ``centres``).

    InputError when there are fewer local descriptors than words (nothing to learn from).
    """
    pool = np.concatenate(local) if len(local) else np.zeros((0, 0))
    if len(pool) < WORDS:
        raise InputError(f"{len(pool)} local descriptors are too few to learn a vocabulary of "
                         f"{WORDS} words from")
    sample = pool[np.sort(rng.choice(len(pool), size=min(KMEANS_SAMPLE, len(pool)),
                                     replace=False))].astype(np.float64)
    mean = sample.mean(axis=0)
    _, _, vt = np.linalg.svd(sample - mean, full_matrices=False)
    basis = vt[:LOCAL_DIM].T
    basis *= np.where(basis[np.abs(basis).argmax(axis=0), np.arange(LOCAL_DIM)] < 0, -1, 1)
    projected = (sample - mean) @ basis
    centres = kmeans(projected, WORDS, rng)
    return {"mean": mean.astype(np.float32), "basis": basis.astype(np.float32),
            "centres": centres}
