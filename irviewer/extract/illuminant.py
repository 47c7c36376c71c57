"""Undoing the colour of the light a photo was taken under (numpy and Pillow only).

A visitor's photo of a painting under a warm lamp is the reference photo with every channel
scaled (von Kries): red up, blue down. :func:`grey_edge_balanced` estimates that light with
the grey-edge hypothesis — the average colour of a scene's edges is grey — and divides it
out: per channel the Minkowski p-norm (p = :data:`MINKOWSKI_P`) of the first-order
derivative magnitude in linear light (van de Weijer, Gevers & Gijsenij, "Edge-based colour
constancy", IEEE TIP 16(9), 2007; p = 6 is among their best settings). Edges, not the mean
colour (grey-world), because a photo of a painting on a wall is mostly wall: the wall is
flat and adds almost no edge, the painting adds most. Search by photo describes a photo as
taken and balanced, and keeps each gallery image's better score
(:meth:`irviewer.collection.photo_search.Searcher.search`).
"""

from __future__ import annotations

import numpy as np
from PIL import Image

#: The Minkowski norm of the edge average.
MINKOWSKI_P = 6
#: sRGB <-> linear light, as a simple power law.
GAMMA = 2.2


def edge_illuminant(linear: np.ndarray, p: int = MINKOWSKI_P) -> np.ndarray:
    """Return the light's colour estimated from a linear-light RGB array (h, w, 3): per
    channel the Minkowski ``p``-norm of the gradient magnitude, scaled to mean 1 (equal
    channels for a photo without edges)."""
    gy, gx = np.gradient(linear, axis=(0, 1))
    magnitude = np.sqrt(gx * gx + gy * gy).reshape(-1, 3).astype(np.float64)
    norm = (magnitude ** p).mean(axis=0) ** (1.0 / p)
    if not np.all(norm > 1e-9):
        return np.ones(3)
    return norm / norm.mean()


def grey_edge_balanced(image: Image.Image) -> Image.Image:
    """Return ``image`` (RGB) with the light estimated by :func:`edge_illuminant` divided
    out, in linear light; a photo without edges is returned as it is."""
    rgb = np.asarray(image.convert("RGB"), dtype=np.float32) / 255.0
    linear = rgb ** GAMMA
    light = edge_illuminant(linear)
    if np.allclose(light, 1.0):
        return image.convert("RGB")
    balanced = (linear / light.astype(np.float32)).clip(0, 1) ** (1 / GAMMA)
    return Image.fromarray((balanced * 255).round().astype(np.uint8))
