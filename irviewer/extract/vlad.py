"""The museum demo's strong descriptor: dense RootSIFT-like gradients and opponent colour,
reduced by PCA and aggregated by VLAD over a learnt vocabulary (numpy and Pillow only).

Dense local descriptors at four scales (the image resized to :data:`SCALES` px on its long
side; 16 x 16 px windows every 8 px): a RootSIFT-like gradient-orientation histogram (4 x 4
cells of 4 x 4 px, 8 orientations with linear interpolation; L1 then square root — Lowe,
IJCV 2004; Arandjelović & Zisserman, CVPR 2012) plus the mean opponent colours (O1, O2) of
the window's four quadrants (normalised, weight :data:`COLOUR_WEIGHT`); the 10 % least
contrasted windows of each scale are dropped. They are projected by PCA and aggregated by
VLAD (Jégou et al., CVPR 2010) over k-means centres, with intra-normalisation, signed square
root and L2 (Arandjelović & Zisserman, CVPR 2013). The PCA and the centres are a
:class:`Vocabulary`; the demo's is ``resources/demo/strong_vocabulary.npz``, learnt by
``resources/demo/build.py`` on the demo gallery.

:func:`demo_extractor` is registered as the extractor ``demo-vlad`` (entry-point group
``irviewer.extractors``); ``resources/demo/strong.npz`` names it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from irviewer.core.errors import InputError

#: Long side of the four dense-descriptor scales, px.
SCALES = (384, 256, 170, 112)
#: Weight of the 8 opponent-colour values against the 128 gradient values.
COLOUR_WEIGHT = 2.5
#: Length of one dense local descriptor (128 gradient + 8 colour values).
LOCAL_DESCRIPTOR_DIM = 136
#: The name the demo's extractor is registered and recorded under.
DEMO_NAME = "demo-vlad"


def dense_descriptors(image: Image.Image) -> np.ndarray:
    """Return the image's dense local descriptors, one 136-d float32 row each.

    At each scale of :data:`SCALES` (the image resized to that long side), every 16 x 16 px
    window on an 8 px grid gives a RootSIFT-like 128-d gradient histogram (4 x 4 cells of
    4 x 4 px, 8 orientations with linear interpolation; L1 then square root) and the mean
    opponent colours (O1, O2) of its four quadrants (8-d, normalised, weighted by
    :data:`COLOUR_WEIGHT`). The 10 % lowest-contrast windows of each scale are dropped.
    """
    out = []
    rgb_full = image.convert("RGB")
    for long_side in SCALES:
        f = long_side / max(rgb_full.size)
        small = rgb_full.resize((max(16, round(rgb_full.width * f)),
                                 max(16, round(rgb_full.height * f))), Image.Resampling.BILINEAR)
        rgb = np.asarray(small, dtype=np.float32) / 255.0
        grey = rgb.mean(axis=2)
        gy, gx = np.gradient(grey)
        ch, cw = grey.shape[0] // 4, grey.shape[1] // 4
        gy, gx, rgb = gy[: ch * 4, : cw * 4], gx[: ch * 4, : cw * 4], rgb[: ch * 4, : cw * 4]
        cells = _orientation_cells(np.hypot(gx, gy), np.arctan2(gy, gx), ch, cw)
        windows = np.lib.stride_tricks.sliding_window_view(cells, (4, 4), axis=(0, 1))[::2, ::2]
        grad = windows.transpose(0, 1, 3, 4, 2).reshape(-1, 128)
        mean = rgb.reshape(ch, 4, cw, 4, 3).mean(axis=(1, 3))  # the opponent colours are
        ccells = np.stack([(mean[..., 0] - mean[..., 1]) / np.sqrt(2),  # linear: their cell
                           (mean[..., 0] + mean[..., 1] - 2 * mean[..., 2]) / np.sqrt(6)],
                          axis=-1)  # means are those of the cell's mean colour
        cwin = np.lib.stride_tricks.sliding_window_view(ccells, (4, 4), axis=(0, 1))[::2, ::2]
        quadrants = cwin.reshape(*cwin.shape[:3], 2, 2, 2, 2).mean(axis=(4, 6))
        colour = quadrants.transpose(0, 1, 3, 4, 2).reshape(-1, 8)
        energy = grad.sum(axis=1)
        keep = energy > np.percentile(energy, 10) + 1e-6
        grad = np.sqrt(grad[keep] / grad[keep].sum(axis=1, keepdims=True))
        col = colour[keep]
        col = col / (np.linalg.norm(col, axis=1, keepdims=True) + 0.05)
        out.append(np.hstack([grad, COLOUR_WEIGHT * col]))
    return np.concatenate(out).astype(np.float32)


def _orientation_cells(magnitude: np.ndarray, angle: np.ndarray, ch: int, cw: int
                       ) -> np.ndarray:
    """Return the (ch, cw, 8) gradient-orientation histograms of the 4 x 4 px cells: each
    pixel's magnitude shared between the two orientation bins nearest its angle (linear
    interpolation over 8 bins round the circle), summed per cell (two weighted bincounts)."""
    position = (angle % (2 * np.pi)) * (8 / (2 * np.pi))
    lower = np.floor(position)
    upper_share = (position - lower) * magnitude
    lower_share = magnitude - upper_share
    bins = lower.astype(np.intp) % 8
    cell = ((np.arange(ch * 4) // 4)[:, None] * cw + (np.arange(cw * 4) // 4)[None, :]) * 8
    n = ch * cw * 8
    cells = np.bincount((cell + bins).ravel(), lower_share.ravel(), n) + \
        np.bincount((cell + (bins + 1) % 8).ravel(), upper_share.ravel(), n)
    return cells.astype(np.float32).reshape(ch, cw, 8)


@dataclass(frozen=True)
class Vocabulary:
    """What turns dense local descriptors into one VLAD vector: a PCA and k-means centres."""

    mean: np.ndarray  # (136,) local-descriptor mean
    basis: np.ndarray  # (136, d) PCA projection
    centres: np.ndarray  # (words, d) k-means centres in the projected space

    @property
    def dim(self) -> int:
        """Return the length of the VLAD vectors: words x projected dimensions."""
        return int(self.centres.shape[0] * self.centres.shape[1])

    def arrays(self) -> dict[str, np.ndarray]:
        """Return the arrays a vocabulary file holds (``mean``, ``basis``, ``centres``)."""
        return {"mean": self.mean, "basis": self.basis, "centres": self.centres}

    @classmethod
    def load(cls, path: Path | str) -> Vocabulary:
        """Return the vocabulary stored in an .npz with ``mean``, ``basis`` and ``centres``;
        InputError when the file is missing, unreadable or inconsistent."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as f:
                arrays = {key: f[key] for key in ("mean", "basis", "centres")}
        except (OSError, ValueError, KeyError, EOFError) as e:
            raise InputError(f"{path.name}: not a readable VLAD vocabulary ({e})") from None
        return cls.of(arrays, path.name)

    @classmethod
    def of(cls, arrays: Mapping[str, np.ndarray], where: str) -> Vocabulary:
        """Return the vocabulary of ``mean``, ``basis`` and ``centres`` arrays; InputError
        naming ``where`` when one is missing or their shapes do not fit together."""
        try:
            vocabulary = cls(*(np.asarray(arrays[k], dtype=np.float32)
                               for k in ("mean", "basis", "centres")))
        except KeyError as e:
            raise InputError(f"{where}: not a VLAD vocabulary (no {e.args[0]!r} array)"
                             ) from None
        except (TypeError, ValueError) as e:
            raise InputError(f"{where}: not a VLAD vocabulary ({e})") from None
        d = vocabulary.basis.shape
        if (vocabulary.mean.shape != (LOCAL_DESCRIPTOR_DIM,) or len(d) != 2
                or d[0] != LOCAL_DESCRIPTOR_DIM or vocabulary.centres.ndim != 2
                or vocabulary.centres.shape[1] != d[1]):
            raise InputError(f"{where}: the vocabulary's shapes do not fit together "
                             f"(mean {vocabulary.mean.shape}, basis {d}, centres "
                             f"{vocabulary.centres.shape})")
        return vocabulary


def vlad(local: np.ndarray, vocabulary: Vocabulary) -> np.ndarray:
    """Return the VLAD vector (words x projected dims, float32) of local descriptors: per
    word the sum of residuals to its centre, intra-normalised, signed square root, then L2
    (Jégou et al. 2010; Arandjelović & Zisserman 2013). No local descriptor at all gives
    the zero vector."""
    x = (local.astype(np.float64) - vocabulary.mean) @ vocabulary.basis.astype(np.float64)
    c = vocabulary.centres.astype(np.float64)
    assign = np.argmin((x ** 2).sum(1)[:, None] - 2 * x @ c.T + (c ** 2).sum(1), axis=1)
    v = np.zeros_like(c)
    np.add.at(v, assign, x - c[assign])
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    v = v / np.where(norms > 0, norms, 1)
    v = (np.sign(v) * np.sqrt(np.abs(v))).ravel()
    total = np.linalg.norm(v)
    return (v / total if total > 0 else v).astype(np.float32)


def strong_descriptor(image: Image.Image, vocabulary: Vocabulary) -> np.ndarray:
    """Return the strong (dense RootSIFT + colour, PCA, VLAD) descriptor of one image."""
    return vlad(dense_descriptors(image), vocabulary)


class VladExtractor:
    """The :class:`~irviewer.extract.base.Extractor` of :func:`strong_descriptor` over one
    vocabulary; stateless after loading, so one instance serves any thread.

    It is a :class:`~irviewer.extract.base.Learner` too: it learns a vocabulary from a
    sample of a collection's local descriptors (:mod:`irviewer.extract.vlad_learning`), and
    its state is that vocabulary. ``input_side``: it never looks at more than its largest
    scale, so a photo may be decoded reduced to that first (a large JPEG decodes several
    times faster).
    """

    input_side = max(SCALES)
    #: What it learns, and the name of the file a collection keeps it in (vocabulary.npz).
    state_name = "vocabulary"

    def __init__(self, vocabulary: Vocabulary, name: str = DEMO_NAME) -> None:
        self.vocabulary = vocabulary
        self.name = name
        self.dim = vocabulary.dim

    def __call__(self, image: Image.Image) -> np.ndarray:
        """Return the image's VLAD vector (float32, unit length unless the image is blank)."""
        return strong_descriptor(image, self.vocabulary)

    def learning_sample(self, image: Image.Image, count: int, seed: int) -> np.ndarray:
        """Return up to ``count`` of the image's dense local descriptors
        (:func:`dense_descriptors`), chosen at random by ``seed`` (all when it has fewer)."""
        local = dense_descriptors(image)
        if len(local) <= count:
            return local
        pick = np.random.default_rng(seed).choice(len(local), size=count, replace=False)
        return local[np.sort(pick)]

    def learned(self, samples: Sequence[np.ndarray], seed: int) -> VladExtractor:
        """Return this extractor over the vocabulary learnt from ``samples``
        (:func:`irviewer.extract.vlad_learning.learn_vocabulary`, seeded by ``seed``)."""
        from irviewer.extract.vlad_learning import learn_vocabulary

        arrays = learn_vocabulary(samples, np.random.default_rng(seed))
        return VladExtractor(Vocabulary.of(arrays, "the learnt vocabulary"), self.name)

    def state(self) -> dict[str, np.ndarray]:
        """Return the vocabulary's arrays (``mean``, ``basis``, ``centres``)."""
        return self.vocabulary.arrays()

    def with_state(self, arrays: Mapping[str, np.ndarray], where: str) -> VladExtractor:
        """Return this extractor over the vocabulary in ``arrays`` (saved by
        :meth:`state`); InputError naming ``where`` when they are not a vocabulary."""
        return VladExtractor(Vocabulary.of(arrays, where), self.name)


def demo_vocabulary_path() -> Path:
    """Return the committed vocabulary of the museum demo."""
    from irviewer.io.resources import resources_dir

    return resources_dir() / "demo" / "strong_vocabulary.npz"


def demo_extractor() -> VladExtractor:
    """Return the museum demo's extractor (``demo-vlad``): :func:`strong_descriptor` over
    ``resources/demo/strong_vocabulary.npz``, 4,096 dimensions."""
    return VladExtractor(Vocabulary.load(demo_vocabulary_path()), DEMO_NAME)
