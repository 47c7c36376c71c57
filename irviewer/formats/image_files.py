"""Decoding image files safely with Pillow: one rule for the thumbnails and for photo search.

An image is refused with one sentence (:class:`~irviewer.core.errors.InputError`) when the
file is missing, is not an image Pillow can identify, is truncated or damaged, or declares
more pixels than Pillow's decompression-bomb limit (``PIL.Image.MAX_IMAGE_PIXELS``, about
89 megapixels by default). Pillow only *warns* between one and two times that limit; here
the warning is an error too, so a crafted file is never decoded into gigabytes of memory.
Pillow's ``LOAD_TRUNCATED_IMAGES`` stays off: a truncated file is refused, never shown
half grey.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from irviewer.core.errors import InputError


def read_rgb(path: Path | str, reduce_to: int | None = None
             ) -> tuple[Image.Image, tuple[int, int]]:
    """Return (the fully decoded RGB image, the file's own (width, height) in pixels).

    With ``reduce_to`` the image is at most that many pixels on each side (JPEGs are
    decoded at a reduced scale first, then thumbnailed); without, it is full size.
    Raises InputError with one sentence naming the file for a missing file, a file that is
    not an image, a truncated or damaged image, or a decompression bomb (see the module
    docstring).
    """
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
