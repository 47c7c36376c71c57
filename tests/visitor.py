"""Visitor-style photos of a painting, for testing search by photo (not a test module).

Each kind imitates one way a visitor's phone photo differs from the museum's reference
views; :func:`visitor_photo` applies one kind (or all of them, "combined") and returns a
640-px photo. Used by ``tests/opening/test_photo_search.py`` (one photo from a demo gallery
image) and ``tests/benchmarks/visitor_photos.py`` (every source painting, every kind).
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image, ImageFilter

#: Mild kinds first (one change each), then hard ones (what makes real visitor photos fail).
KINDS = ("crop", "perspective", "light", "blur", "jpeg", "combined",
         "small detail", "oblique", "dim", "glare")
LONG_SIDE = 640
WALL = (168, 160, 146)


def fit(image: Image.Image, long_side: int = LONG_SIDE) -> Image.Image:
    """Return ``image`` resized (Lanczos) to ``long_side`` px on its long side."""
    f = long_side / max(image.size)
    return image.resize((max(1, round(image.width * f)), max(1, round(image.height * f))),
                        Image.Resampling.LANCZOS)


def crop(image: Image.Image, rng: np.random.Generator,
         fraction: tuple[float, float] = (0.4, 0.7)) -> Image.Image:
    """Return a detail: ``fraction`` (40-70 %) of each side, somewhere in the painting."""
    w, h = image.size
    fw, fh = rng.uniform(*fraction), rng.uniform(*fraction)
    cw, ch = round(w * fw), round(h * fh)
    x0, y0 = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
    return image.crop((x0, y0, x0 + cw, y0 + ch))


def small_detail(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Return a small detail: 15-25 % of each side (a face, a boat, a signature)."""
    return crop(image, rng, (0.15, 0.25))


def perspective(image: Image.Image, rng: np.random.Generator,
                yaw: tuple[float, float] = (25, 45)) -> Image.Image:
    """Return the painting on a wall seen from ``yaw`` degrees to the side (25-45°): the far
    side shorter (keystone, growing with the angle), the width foreshortened by cos(yaw),
    the camera a little above or below, as a homography of the whole photo."""
    w, h = image.size
    margin = 0.12
    canvas = Image.new("RGB", (round(w * (1 + 2 * margin)), round(h * (1 + 2 * margin))), WALL)
    canvas.paste(image, (round(w * margin), round(h * margin)))
    cw, ch = canvas.size
    angle = np.radians(rng.uniform(*yaw))
    a = 0.5 * np.sin(angle) * ch / 2  # the far side looks shorter: the source quad taller
    b = rng.uniform(-0.05, 0.05) * ch
    left_far = rng.random() < 0.5
    # source corners for output (upper-left, lower-left, lower-right, upper-right)
    near, far = (0.0, 0.0), (-a + b, a + b)
    ul, ll = (far if left_far else near)
    ur, lr = (near if left_far else far)
    quad = (0, ul, 0, ch + ll, cw, ch + lr, cw, ur)
    out_w = max(16, round(cw * np.cos(angle)))
    return canvas.transform((out_w, ch), Image.Transform.QUAD, quad, Image.Resampling.BICUBIC,
                            fillcolor=WALL)


def oblique(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Return the painting seen very obliquely: 55-65° to the side."""
    return perspective(image, rng, (55, 65))


def light(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Return the photo under other light: exposure x0.45-1.5, a warm or cool cast and a
    lighting ramp across the picture, in linear light."""
    rgb = (np.asarray(image, dtype=np.float32) / 255.0) ** 2.2
    h, w = rgb.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    angle = rng.uniform(0, 2 * np.pi)
    ramp = np.cos(angle) * (xx / w - 0.5) + np.sin(angle) * (yy / h - 0.5)
    gain = rng.choice([rng.uniform(0.45, 0.75), rng.uniform(1.2, 1.5)])
    warm = rng.uniform(-0.2, 0.25)
    cast = np.array([1 + warm, 1 + 0.2 * warm, 1 - warm], np.float32)
    rgb = rgb * (gain * (1 + rng.uniform(0.4, 0.8) * ramp))[..., None] * cast
    return Image.fromarray((rgb.clip(0, 1) ** (1 / 2.2) * 255).round().astype(np.uint8))


def blur(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Return the photo out of focus: a Gaussian blur of 1.5-3 px at 640 px."""
    return fit(image).filter(ImageFilter.GaussianBlur(rng.uniform(1.5, 3.0)))


def jpeg(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Return the photo after strong JPEG compression (quality 12-30)."""
    buffer = io.BytesIO()
    fit(image).save(buffer, "JPEG", quality=int(rng.integers(12, 31)))
    buffer.seek(0)
    with Image.open(buffer) as im:
        return im.convert("RGB")


def dim(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Return a photo in a dark room: exposure x0.12-0.25 in linear light, then sensor noise
    (sigma 6-12 grey levels, some of it in colour) and a slight blur, at 640 px."""
    rgb = (np.asarray(fit(image), dtype=np.float32) / 255.0) ** 2.2 * rng.uniform(0.12, 0.25)
    srgb = rgb.clip(0, 1) ** (1 / 2.2) * 255
    sigma = rng.uniform(6, 12)
    noise = rng.normal(0, sigma, srgb.shape[:2])[..., None] + rng.normal(0, sigma / 2,
                                                                          srgb.shape)
    noisy = Image.fromarray((srgb + noise).round().clip(0, 255).astype(np.uint8))
    return noisy.filter(ImageFilter.GaussianBlur(0.8))


def glare(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Return a photo with a lamp's reflection on the varnish: a bright spot covering about
    a fifth to a third of the picture, screen-blended (it washes the colours out)."""
    rgb = np.asarray(fit(image), dtype=np.float32) / 255.0
    h, w = rgb.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    cx, cy = rng.uniform(0.25, 0.75) * w, rng.uniform(0.2, 0.6) * h
    radius = rng.uniform(0.18, 0.3) * max(w, h)
    spot = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * radius ** 2)) * rng.uniform(0.7, 0.95)
    out = 1 - (1 - rgb) * (1 - spot[..., None])
    return Image.fromarray((out * 255).round().astype(np.uint8))


def visitor_photo(painting: Image.Image, kind: str, rng: np.random.Generator) -> Image.Image:
    """Return a 640-px visitor photo of ``painting`` of one of :data:`KINDS` ("combined":
    a milder crop, then perspective, light, blur and JPEG; the others one change each)."""
    painting = fit(painting.convert("RGB"), 1024)
    if kind == "combined":
        w, h = painting.size
        f = rng.uniform(0.7, 0.9)
        x0, y0 = int(rng.integers(0, round(w * (1 - f)) + 1)), int(
            rng.integers(0, round(h * (1 - f)) + 1))
        photo = painting.crop((x0, y0, x0 + round(w * f), y0 + round(h * f)))
        for step in (perspective, light, blur, jpeg):
            photo = step(photo, rng)
        return fit(photo)
    steps = {"crop": crop, "perspective": perspective, "light": light, "blur": blur,
             "jpeg": jpeg, "small detail": small_detail, "oblique": oblique, "dim": dim,
             "glare": glare}
    return fit(steps[kind](painting, rng))
