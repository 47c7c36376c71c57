"""Decoding image files safely with Pillow: one rule for the thumbnails and for photo search.

An image is refused with one sentence (:class:`~irviewer.core.errors.InputError`) when the
file is missing, is not an image Pillow can identify, is truncated or damaged, or declares
more pixels than Pillow's decompression-bomb limit (``PIL.Image.MAX_IMAGE_PIXELS``, about
89 megapixels by default). Pillow only *warns* between one and two times that limit; here
the warning is an error too, so a crafted file is never decoded into gigabytes of memory.
Pillow's ``LOAD_TRUNCATED_IMAGES`` stays off: a truncated file is refused, never shown
half grey.

An image made in Python (:class:`~irviewer.core.made_images.MadeImage`: a function given to
``irviewer.view``) is read by the same rule: its function is called (one call at a time),
and what it returns — a PIL image, an array, or a path — becomes the RGB picture
(:func:`made_rgb`), refused with one sentence when it is none of these.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from irviewer.core.errors import InputError
from irviewer.core.made_images import ImageLocation, MadeImage

#: What a made image's function is said to return, in the sentences that refuse another
#: value.
MADE_KINDS = ("a PIL image, an array (H x W, H x W x 3 or 4, or 3 x H x W) or the path of an "
              "image file")


def read_rgb(path: ImageLocation | str, reduce_to: int | None = None
             ) -> tuple[Image.Image, tuple[int, int]]:
    """Return (the fully decoded RGB image, the file's own (width, height) in pixels).

    With ``reduce_to`` the image is at most that many pixels on each side (JPEGs are
    decoded at a reduced scale first, then thumbnailed); without, it is full size.
    Raises InputError with one sentence naming the file for a missing file, a file that is
    not an image, a truncated or damaged image, or a decompression bomb (see the module
    docstring); for a made image, as :func:`made_rgb` (and for no picture at all).
    """
    if isinstance(path, MadeImage):
        made = made_rgb(path, reduce_to)
        if made is None:
            raise InputError(f"images: the function gave no picture for {path.name}")
        return made
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file" if not path.exists() else
                         f"{path}: is a folder, not an image file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as im:
                size = im.size
                if reduce_to is not None:  # JPEG: decoded at a reduced scale that keeps
                    f = reduce_to / max(size)  # the long side at least reduce_to
                    im.draft("RGB", (max(1, round(size[0] * f)), max(1, round(size[1] * f))))
                rgb = im.convert("RGB")
        if reduce_to is not None:
            rgb.thumbnail((reduce_to, reduce_to))
        return rgb, size
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        limit = Image.MAX_IMAGE_PIXELS
        raise InputError(f"{path.name}: declares more pixels than the decompression-bomb limit "
                         f"of {limit or 0:,} pixels; refusing to decode it (shrink the "
                         "image if it is genuine)") from None
    except UnidentifiedImageError:
        raise InputError(f"{path.name}: is not a picture irviewer can read; save it as a JPEG "
                         "or PNG") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except (OSError, ValueError, SyntaxError, EOFError):
        raise InputError(f"{path.name}: the file is damaged or cut short, so the picture "
                         "cannot be read; copy the photo again from the camera or the "
                         "original") from None


def made_rgb(image: MadeImage, reduce_to: int | None = None
             ) -> tuple[Image.Image, tuple[int, int]] | None:
    """Return (the RGB picture the function of ``image`` makes, its own (width, height)),
    at most ``reduce_to`` pixels on each side when given; None when the function returns
    None (no picture). A path it returns is read as any file (:func:`read_rgb`); an array
    of floats within [0, 1] is scaled by 255, other floats stretched from their minimum to
    their maximum (a normalised tensor); integers are clipped to [0, 255]. InputError with
    one sentence for what the function raises or for a value that is not a picture."""
    with image.lock:
        try:
            value = image.make(image.name)
        except Exception as e:  # the caller's function: said, never a crash
            raise InputError(f"images: the function raised {type(e).__name__} for "
                             f"{image.name} ({e})") from None
    if value is None:
        return None
    if isinstance(value, str | os.PathLike):
        return read_rgb(Path(value), reduce_to)
    if isinstance(value, Image.Image):
        rgb = value.convert("RGB")
    else:
        rgb = Image.fromarray(_pixels(value, image.name)).convert("RGB")
    size = rgb.size
    if reduce_to is not None:
        rgb.thumbnail((reduce_to, reduce_to))
    return rgb, size


def _pixels(value: object, name: str) -> np.ndarray:
    """Return an array the function of a made image gave as H x W (x 3) uint8 pixels;
    InputError for anything else."""
    refused = InputError(f"images: the function gave a {type(value).__name__} for {name}; "
                         f"return {MADE_KINDS}")
    detach = getattr(value, "detach", None)  # a tensor that requires its gradient
    value = detach() if callable(detach) else value
    a = None
    for host in (np.asarray, lambda v: np.asarray(v.cpu()), lambda v: np.asarray(v.get())):
        try:  # on the host as it is; else a GPU tensor's (torch) or array's (cupy) copy
            a = host(value)
            break
        except (TypeError, ValueError, RuntimeError, BufferError, AttributeError):
            continue
    if a is None:
        raise refused
    if a.ndim == 3 and a.shape[0] in (1, 3, 4) and a.shape[-1] not in (1, 3, 4):
        a = np.moveaxis(a, 0, -1)  # channels first (a tensor's C x H x W)
    if a.ndim == 3 and a.shape[-1] == 1:
        a = a[..., 0]
    if a.dtype.kind not in "biuf" or a.ndim not in (2, 3) or (a.ndim == 3
                                                                and a.shape[-1] not in (3, 4)):
        raise refused
    limit = Image.MAX_IMAGE_PIXELS
    if limit and a.shape[0] * a.shape[1] > limit:
        raise InputError(f"images: the picture of {name} has more pixels than the "
                         f"decompression-bomb limit of {limit:,} pixels")
    if a.dtype.kind == "f":
        a = a.astype(np.float64)
        finite = a[np.isfinite(a)]
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if low >= 0 and high <= 1:
            a = a * 255
        elif high > low:
            a = (a - low) * (255 / (high - low))
        a = np.nan_to_num(a, nan=0.0, posinf=255.0, neginf=0.0)
    elif a.dtype.kind == "b":
        a = a.astype(np.uint8) * 255
    pixels = np.clip(a, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(pixels[..., :3] if pixels.ndim == 3 else pixels)
