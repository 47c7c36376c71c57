"""Photos made for the collection tests (not a test module): seeded, textured, distinct
images the demo's extractor can tell apart, written as real image files, and folders of
them in both layouts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image, ImageDraw

if TYPE_CHECKING:
    from irviewer.collection.indexing import Indexed, IndexRequest


def artwork_image(seed: int, size: tuple[int, int] = (200, 150)) -> Image.Image:
    """Return a distinct "painting": a seeded colour gradient with seeded shapes on it."""
    rng = np.random.default_rng(seed)
    w, h = size
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    base = np.stack([rng.uniform(40, 215) + rng.uniform(-60, 60) * np.sin(
        xx / rng.uniform(8, 30) + rng.uniform(0, 6)) * np.cos(yy / rng.uniform(8, 30))
        for _ in range(3)], axis=-1)
    image = Image.fromarray(base.clip(0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(image)
    for _ in range(6):
        x0, y0 = int(rng.integers(0, w - 20)), int(rng.integers(0, h - 20))
        box = (x0, y0, x0 + int(rng.integers(10, w // 2)), y0 + int(rng.integers(10, h // 2)))
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)(box, fill=colour)
    return image


def view_of(image: Image.Image, seed: int) -> Image.Image:
    """Return another photo of the same artwork: a crop of 75-95 % and a brightness change."""
    rng = np.random.default_rng(seed)
    w, h = image.size
    f = rng.uniform(0.75, 0.95)
    x, y = int(rng.integers(0, w - int(w * f) + 1)), int(rng.integers(0, h - int(h * f) + 1))
    crop = image.crop((x, y, x + int(w * f), y + int(h * f))).resize(image.size)
    pixels = np.asarray(crop, np.float32) * rng.uniform(0.85, 1.15)
    return Image.fromarray(pixels.clip(0, 255).astype(np.uint8))


def flat_folder(folder: Path, n: int, first_seed: int = 0) -> list[str]:
    """Write ``n`` artworks as one JPEG each (``art00.jpg``...); return their ids."""
    folder.mkdir(parents=True, exist_ok=True)
    ids = []
    for i in range(n):
        artwork_image(first_seed + i).save(folder / f"art{i:02d}.jpg", quality=92)
        ids.append(f"art{i:02d}")
    return ids


def folder_of_subfolders(folder: Path, views: dict[str, int]) -> None:
    """Write one subfolder per artwork with ``views[artwork]`` photos (``1.jpg``...)."""
    for a, (artwork, n) in enumerate(views.items()):
        (folder / artwork).mkdir(parents=True, exist_ok=True)
        image = artwork_image(100 + a)
        for v in range(n):
            photo = image if v == 0 else view_of(image, 1000 * a + v)
            photo.save(folder / artwork / f"{v + 1}.jpg", quality=92)


def index_now(request: IndexRequest) -> Indexed:
    """Return the collection ``request`` indexes, in this process, without its progress."""
    from irviewer.collection.indexing import iter_index
    from irviewer.core.progress import result_of

    return result_of(iter_index(request))


def indexed(photos: Path, out: Path, views: dict[str, int] | None = None,
            artworks: int = 3) -> Path:
    """Return a collection indexed (in this process) from photos written to ``photos``: one
    subfolder per artwork with ``views`` (artwork -> number of photos), or a flat folder of
    ``artworks`` photos."""
    from irviewer.collection.describing import SERIAL
    from irviewer.collection.indexing import IndexRequest

    if views is None:
        flat_folder(photos, artworks)
    else:
        folder_of_subfolders(photos, views)
    return index_now(IndexRequest(photos, out, mode=SERIAL)).collection
