"""Visitor-style photos of a painting, for testing search by photo (not a test module).

Each kind imitates one way a visitor's phone photo differs from the museum's reference
views; :func:`visitor_photo` applies one kind (or all of them, "combined") and returns a
640-px photo. Used by ``tests/opening/test_photo_search.py`` (one photo from a demo gallery
image) and ``tests/benchmarks/visitor_photos.py`` (every source painting, every kind).

:data:`PHONE_KINDS` are photos of the painting *hanging in a room*, taken with a phone
(:func:`phone_photo`): the framed painting on a wall seen from the side by a pinhole
camera with a real 3-D pose (the camera of ``resources/demo/build.py``), under the room's
light, then what a phone adds. They are what a curator's collection is tested with
(``tests/benchmarks/bench_index.py``): a reference photo of each painting indexed, these
photos searched.
"""

from __future__ import annotations

import importlib.util
import io
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

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


# -- photos of the painting hanging in a room, taken with a phone ---------------------------

#: What a curator's visitors do: photograph the painting from the side, photograph
#: a part of it, with the lamp's reflection on the varnish, under warm light, with another
#: visitor in front of it; "phone" does several at once.
PHONE_KINDS = ("angle", "part", "reflection", "warm light", "covered", "phone")
_BUILD = Path(__file__).resolve().parents[1] / "resources" / "demo" / "build.py"


@cache
def demo_build() -> ModuleType:
    """Return ``resources/demo/build.py`` imported from its path (its camera and room)."""
    spec = importlib.util.spec_from_file_location("irviewer_demo_build_camera", _BUILD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def room_view(painting: Image.Image, rng: np.random.Generator, yaw: tuple[float, float],
              fraction: float | None = None) -> Image.Image:
    """Return a 640-px photo of ``painting`` framed on a wall (one of the demo's four room
    colours), taken from ``yaw`` degrees to the side (either side) by the demo's pinhole
    camera: the whole framed painting with some wall when ``fraction`` is None, else a part
    ``fraction`` of the painting's short side wide. The room's light (exposure, ramp,
    vignetting, a colour cast, a soft glare spot on the varnish, blur, sensor noise) is the
    demo's :func:`develop`."""
    build = demo_build()
    scene = build.museum_scene(fit(painting, 900), int(rng.integers(4)), rng)
    side = 1.0 if rng.random() < 0.5 else -1.0
    angle = side * rng.uniform(*yaw)
    if fraction is None:
        photo = build.global_view(scene, rng, angle)
    else:
        photo = build.detail_view(scene, rng, fraction, angle)
    return fit(photo)


def tungsten(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Return the photo under a warm lamp (about 2,700-3,200 K, not white-balanced): red
    raised, blue lowered by 35-55 %, exposure x0.5-0.9 and a lighting ramp, in linear
    light."""
    rgb = (np.asarray(image, dtype=np.float32) / 255.0) ** 2.2
    h, w = rgb.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    angle = rng.uniform(0, 2 * np.pi)
    ramp = np.cos(angle) * (xx / w - 0.5) + np.sin(angle) * (yy / h - 0.5)
    blue = rng.uniform(0.45, 0.65)
    cast = np.array([rng.uniform(1.1, 1.3), rng.uniform(0.85, 0.95), blue], np.float32)
    gain = rng.uniform(0.5, 0.9) * (1 + rng.uniform(0.2, 0.5) * ramp)
    rgb = rgb * gain[..., None] * cast
    return Image.fromarray((rgb.clip(0, 1) ** (1 / 2.2) * 255).round().astype(np.uint8))


def reflection(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Return the photo with a lamp's or a window's reflection on the varnish: a hard bright
    core (clipped to white) inside a soft halo, or a slanted band, covering a tenth to a
    quarter of the picture, screen-blended."""
    rgb = np.asarray(image, dtype=np.float32) / 255.0
    h, w = rgb.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32) / max(w, h)
    cx, cy = rng.uniform(0.2, 0.8) * w / max(w, h), rng.uniform(0.2, 0.7) * h / max(w, h)
    if rng.random() < 0.5:  # a lamp: hard core, soft halo
        r = rng.uniform(0.06, 0.12)
        d2 = (xx - cx) ** 2 + (yy - cy) ** 2
        spot = np.clip(1.3 * np.exp(-d2 / (2 * r ** 2)), 0, 1) ** 0.7
    else:  # a window: a slanted band
        a = rng.uniform(-1.2, 1.2)
        d = np.abs(np.cos(a) * (xx - cx) + np.sin(a) * (yy - cy))
        spot = np.clip(1.2 - d / rng.uniform(0.05, 0.1), 0, 1) * rng.uniform(0.7, 0.95)
    out = 1 - (1 - rgb) * (1 - spot[..., None])
    return Image.fromarray((out * 255).round().astype(np.uint8))


def covered(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Return the photo with another visitor in front of the painting: a dark, slightly
    blurred head-and-shoulders silhouette rising from the bottom edge somewhere along it,
    covering 15-30 % of the picture."""
    w, h = image.size
    mask = Image.new("L", (w, h), 0)
    draw = ImageDraw.Draw(mask)
    share = rng.uniform(0.15, 0.3)
    width = rng.uniform(0.4, 0.6) * w  # shoulders
    body = 0.8 * share * w * h / width  # the shoulders' height above the bottom edge
    head = 0.22 * width  # head radius
    cx = rng.uniform(0.1, 0.9) * w
    top = h - body
    draw.rounded_rectangle((cx - width / 2, top, cx + width / 2, h + head),
                           radius=int(0.8 * head), fill=255)
    draw.ellipse((cx - 0.85 * head, top - 1.8 * head, cx + 0.85 * head, top + 0.4 * head),
                 fill=255)
    mask = mask.filter(ImageFilter.GaussianBlur(2.5))
    tone = tuple(int(v) for v in rng.integers(15, 70, 3))
    person = Image.new("RGB", (w, h), tone)
    return Image.composite(person, image.convert("RGB"), mask)


def phone_finish(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Return the photo as a phone delivers it: sharpened (unsharp mask), a little noise,
    JPEG at quality 70-90."""
    sharp = image.filter(ImageFilter.UnsharpMask(radius=2, percent=int(rng.integers(60, 140)),
                                                 threshold=2))
    noisy = np.asarray(sharp, dtype=np.float32) + rng.normal(0, rng.uniform(1, 3),
                                                             (sharp.height, sharp.width, 1))
    buffer = io.BytesIO()
    Image.fromarray(noisy.round().clip(0, 255).astype(np.uint8)).save(
        buffer, "JPEG", quality=int(rng.integers(70, 91)))
    buffer.seek(0)
    with Image.open(buffer) as im:
        return im.convert("RGB")


def phone_photo(painting: Image.Image, kind: str, rng: np.random.Generator) -> Image.Image:
    """Return a 640-px phone photo of ``painting`` hanging in a room, of one of
    :data:`PHONE_KINDS`:

    * ``angle``: the whole framed painting from 25-50° to the side;
    * ``part``: a part 45-75 % of the painting's short side wide, from 0-30°;
    * ``reflection``: from 0-20°, with a lamp's or a window's reflection (:func:`reflection`);
    * ``warm light``: from 0-20°, under a warm lamp (:func:`tungsten`);
    * ``covered``: from 0-20°, another visitor's head and shoulders in front (:func:`covered`);
    * ``phone``: a part 55-90 % wide from 10-35°, with two of reflection, warm light and
      covered.

    Every photo ends as a phone delivers it (:func:`phone_finish`).
    """
    painting = painting.convert("RGB")
    if kind == "angle":
        photo = room_view(painting, rng, (25, 50))
    elif kind == "part":
        photo = room_view(painting, rng, (0, 30), rng.uniform(0.45, 0.75))
    elif kind in ("reflection", "warm light", "covered"):
        photo = room_view(painting, rng, (0, 20))
        photo = {"reflection": reflection, "warm light": tungsten, "covered": covered}[kind](
            photo, rng)
    elif kind == "phone":
        photo = room_view(painting, rng, (10, 35), rng.uniform(0.55, 0.9))
        steps = [reflection, tungsten, covered]
        for i in sorted(rng.choice(3, size=2, replace=False)):
            photo = steps[i](photo, rng)
    else:
        raise ValueError(f"unknown phone photo kind {kind!r}; one of {PHONE_KINDS}")
    return phone_finish(photo, rng)
