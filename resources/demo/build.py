"""Build irviewer's museum demo: photographed-looking views of public-domain paintings, the
CSV manifest, and two descriptor files (a strong one and a weak one), then score both.

    python resources/demo/build.py [--source DIR] [--out DIR]

``--source`` defaults to ``../shared/demo-paintings`` beside the repository; ``--out`` to
this folder. Modelled on the CLICIDE museum set (instance search in a museum: global views
and details of each painting, photographed in the room): per painting three global views
(the framed painting on a gallery wall, seen from frontal to far to the side) and four views
of sub-regions (details), each "photographed" by a pinhole camera with a real 3-D pose
(projective warp), uneven museum lighting, a soft glare spot on the varnish, vignetting, a
colour cast, slight blur, sensor noise and JPEG compression. One more view per painting is
held out as the query; a third of the queries are small details and a third are whole
paintings seen very obliquely, so the demo shows failures as well as hits.

Everything is seeded (:data:`SEED`): the same sources, numpy and Pillow give byte-identical
files (fixed JPEG settings, no metadata, .npz members dated 1980-01-01). Needs numpy and
Pillow only; no model weights are downloaded.

Descriptors:

* ``strong.npz`` — dense local descriptors at four scales (16 x 16 px windows, stride 8 px):
  a RootSIFT-like gradient-orientation histogram (4 x 4 cells x 8 orientations, L1 then
  square root; Lowe 2004, Arandjelovic & Zisserman 2012) plus the opponent colours of its
  four quadrants; reduced to 32 dimensions by PCA and aggregated by VLAD
  (Jegou et al. 2010) over a 128-word k-means vocabulary learnt on the gallery
  (:mod:`irviewer.extract.vlad_learning`, which ``irviewer index`` uses too),
  with intra-normalisation, signed square root and L2 normalisation (Arandjelovic &
  Zisserman 2013). The descriptor itself is irviewer's extractor ``demo-vlad``
  (:mod:`irviewer.extract.vlad`, imported here: one implementation); this script learns its
  PCA and vocabulary, kept in ``strong_vocabulary.npz`` so any row can be recomputed from
  its image (``irviewer search --demo PHOTO`` describes a new photo the same way), and
  records the extractor's name in ``strong.npz`` (member ``extractor``).
* ``weak.npz`` — a joint 8 x 8 x 8 RGB colour histogram, L1-normalised then square-rooted.

Both hold ``features`` (float32, one row per image) and ``names`` (the manifest's image path
without extension, e.g. ``images/vermeer_girl-with-a-pearl-earring_query``).
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import re
import sys
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing irviewer
    sys.path.insert(0, str(ROOT))

from irviewer.extract.vlad import (  # noqa: E402  (the one implementation of the descriptor)
    DEMO_NAME,
    Vocabulary,
    dense_descriptors,
    vlad,
)
from irviewer.extract.vlad_learning import learn_vocabulary  # noqa: E402

DEFAULT_SOURCE = ROOT.parent / "shared" / "demo-paintings"
SEED = 20261122

# -- photographs
LONG_SIDE = 400  # output long side, px
JPEG_QUALITY = 80
SCENE_PAINTING_MAX = 1200  # the painting's long side in the wall scene, px (never upscaled)
FOV_DEGREES = 50.0  # camera field of view across the photo's long side
GLOBAL_YAWS = ((0, 10), (22, 34), (38, 48))  # degrees: frontal, oblique, very oblique
GALLERY_DETAILS = 4
ROOM_WALLS = ((176, 168, 154), (150, 58, 52), (62, 82, 74), (200, 198, 192))  # four rooms
FRAMES = ((168, 132, 62), (78, 54, 34), (34, 31, 29), (120, 84, 48))  # gilt, wood, black, oak
QUERY_KINDS = ("small detail", "oblique global", "medium detail")

# -- descriptors (the strong one is irviewer.extract.vlad; what is learnt here is its
# vocabulary, by irviewer.extract.vlad_learning: PCA to 32 dims, 128 words, 20,000 samples)
WEAK_BINS = 8


@dataclass(frozen=True)
class Painting:
    """A source painting: file stem (the instance label), display title and pixels."""

    slug: str
    title: str
    image: Image.Image


@dataclass(frozen=True)
class View:
    """One generated photograph: its file stem, the image, whether it is the query, and its
    kind ("global", "detail", or for the query one of :data:`QUERY_KINDS`)."""

    stem: str
    image: Image.Image
    is_query: bool
    kind: str


# -- sources ------------------------------------------------------------------------------

def titles(source: Path) -> dict[str, str]:
    """Return file name -> "Title — Artist" parsed from the sources' SOURCE.md table.

    The title is the table's Title column up to its first parenthesis or semicolon (so
    without the museum); the artist is the Artist column without the death year.
    """
    out = {}
    text = (source / "SOURCE.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        m = re.match(r"^\| `([^`]+)` \| ([^|]+) \| ([^|]+) \|", line)
        if m:
            title = re.split(r" \(|;", m.group(2))[0].strip().rstrip(",")
            artist = re.sub(r"\s*\([^)]*\)\s*$", "", m.group(3)).strip()
            out[m.group(1)] = f"{title} — {artist}"
    return out


def load_paintings(source: Path) -> list[Painting]:
    """Return the source paintings (``*.jpg`` in ``source``) in file-name order, as RGB."""
    names = titles(source)
    out = []
    for path in sorted(source.glob("*.jpg")):
        with Image.open(path) as im:
            out.append(Painting(path.stem, names.get(path.name, path.stem), im.convert("RGB")))
    return out


# -- the gallery wall ---------------------------------------------------------------------

@dataclass(frozen=True)
class Scene:
    """A painting hung on a wall: the wall image, the painting's box in it (x0, y0, x1, y1),
    a mask of the painting (where glare can fall: varnish, not the matte wall), the wall
    colour, and a small grey copy of the painting for choosing details."""

    image: Image.Image
    box: tuple[int, int, int, int]
    mask: Image.Image
    wall: tuple[int, int, int]
    thumbnail: np.ndarray


def museum_scene(painting: Image.Image, index: int, rng: np.random.Generator) -> Scene:
    """Return the painting in a moulded frame on a textured wall with a drop shadow and a
    small wall label; the wall colour is one of four "rooms" (``index`` mod 4), so paintings
    in the same room share it, as in a real museum."""
    scale = min(1.0, SCENE_PAINTING_MAX / max(painting.size))
    if scale < 1.0:
        painting = painting.resize((round(painting.width * scale), round(painting.height * scale)),
                                   Image.Resampling.LANCZOS)
    w, h = painting.size
    long_side = max(w, h)
    frame = max(6, int(rng.uniform(0.035, 0.06) * long_side))
    margin = int(1.0 * long_side)
    sw, sh = w + 2 * (frame + margin), h + 2 * (frame + margin)
    wall = ROOM_WALLS[index % len(ROOM_WALLS)]
    # wall: base colour with a faint low-frequency texture
    texture = rng.normal(0, 1, size=(sh // 64 + 2, sw // 64 + 2)).astype(np.float32)
    texture_img = Image.fromarray(((texture * 20) + 128).clip(0, 255).astype(np.uint8))
    texture = np.asarray(texture_img.resize((sw, sh), Image.Resampling.BICUBIC),
                         dtype=np.float32) / 128.0 - 1.0
    canvas = np.empty((sh, sw, 3), np.float32)
    canvas[:] = wall
    canvas *= (1 + 0.03 * texture)[..., None]
    # drop shadow: the frame's outline, blurred, below and right of the frame
    shadow = Image.new("L", (sw, sh), 0)
    off = int(0.012 * long_side)
    ImageDraw.Draw(shadow).rectangle(
        (margin + off // 2, margin + off, margin + w + 2 * frame + off // 2,
         margin + h + 2 * frame + off), fill=255)
    shadow_a = np.asarray(shadow.filter(ImageFilter.GaussianBlur(0.015 * long_side)),
                          dtype=np.float32) / 255.0
    canvas *= (1 - 0.45 * shadow_a)[..., None]
    # wall label (cartel) to the right, at about two thirds of the painting's height
    lw, lh = int(0.16 * long_side), int(0.09 * long_side)
    lx, ly = margin + w + 2 * frame + int(0.08 * long_side), margin + frame + int(0.62 * h)
    canvas[ly:ly + lh, lx:lx + lw] = (236, 233, 224)
    for k in range(4):
        y = ly + int((0.18 + 0.18 * k) * lh)
        length = int(lw * (0.8 if k == 0 else rng.uniform(0.45, 0.75)))
        canvas[y:y + max(1, lh // 14), lx + lw // 10:lx + lw // 10 + length] = (96, 94, 90)
    # frame: a rounded moulding, lit from above (top face bright, bottom face dark)
    fx0, fy0 = margin, margin
    fw, fh = w + 2 * frame, h + 2 * frame
    yy, xx = np.mgrid[0:fh, 0:fw].astype(np.float32)
    dist_out = np.minimum(np.minimum(xx, fw - 1 - xx), np.minimum(yy, fh - 1 - yy))
    t = np.clip(dist_out / frame, 0, 1)  # 0 at the outer edge, 1 at the inner edge
    profile = 0.7 + 0.45 * np.sin(np.pi * t) - 0.25 * t ** 4
    side = np.argmin(np.stack([yy, fw - 1 - xx, fh - 1 - yy, xx]), axis=0)  # top right bottom left
    face = np.array([1.15, 0.95, 0.7, 1.05], np.float32)[side]
    colour = np.array(FRAMES[int(rng.integers(len(FRAMES)))], np.float32)
    grain = 1 + 0.04 * rng.normal(0, 1, size=(fh, fw)).astype(np.float32)
    canvas[fy0:fy0 + fh, fx0:fx0 + fw] = colour * (profile * face * grain)[..., None]
    px0, py0 = margin + frame, margin + frame
    canvas[py0:py0 + h, px0:px0 + w] = np.asarray(painting, dtype=np.float32)
    image = Image.fromarray(canvas.clip(0, 255).astype(np.uint8))
    mask = Image.new("L", (sw, sh), 0)
    mask.paste(255, (px0, py0, px0 + w, py0 + h))
    thumb = painting.convert("L").resize((max(8, w // 8), max(8, h // 8)), Image.Resampling.BOX)
    return Scene(image, (px0, py0, px0 + w, py0 + h), mask, wall,
                 np.asarray(thumb, dtype=np.float32))


# -- the camera ---------------------------------------------------------------------------

def camera_homography(target: tuple[float, float], region_width: float, out_size: tuple[int, int],
                      yaw: float, pitch: float, roll: float) -> np.ndarray:
    """Return the 3 x 3 homography from output pixels to wall pixels for a pinhole camera.

    The wall is the plane z = 0 (x right, y down, in scene pixels). The camera looks at
    ``target`` from the direction given by ``yaw`` (about the vertical axis) and ``pitch``
    (degrees), rolled by ``roll``, from the distance at which ``region_width`` scene pixels
    fill the photo's width in a frontal view; its field of view is :data:`FOV_DEGREES`
    across the long side.
    """
    out_w, out_h = out_size
    focal = max(out_w, out_h) / (2 * math.tan(math.radians(FOV_DEGREES) / 2))
    distance = region_width * focal / out_w
    a, b = math.radians(yaw), math.radians(pitch)
    toward_camera = np.array([math.sin(a) * math.cos(b), math.sin(b), -math.cos(a) * math.cos(b)])
    centre = np.array([target[0], target[1], 0.0]) + distance * toward_camera
    forward = -toward_camera
    right = np.cross([0.0, 1.0, 0.0], forward)
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    r = math.radians(roll)
    right, down = (math.cos(r) * right + math.sin(r) * down,
                   -math.sin(r) * right + math.cos(r) * down)
    # ray(u, v) = M @ (u, v, 1)
    m = np.stack([right / focal, down / focal,
                  forward - right * (out_w / 2) / focal - down * (out_h / 2) / focal], axis=1)
    cx, cy, cz = centre
    return np.stack([cx * m[2] - cz * m[0], cy * m[2] - cz * m[1], m[2]])


def warp(scene: Image.Image, h: np.ndarray, out_size: tuple[int, int],
         fill: tuple[int, int, int] | int) -> Image.Image:
    """Return the photo ``out_size`` whose pixel (u, v) shows scene point ``h @ (u, v, 1)``.

    The scene is first cropped to the part the camera sees and shrunk (Lanczos) to about the
    photo's scale at its centre, so the perspective warp (bicubic) does not alias.
    """
    out_w, out_h = out_size
    corners = np.array([[0, 0, 1], [out_w, 0, 1], [out_w, out_h, 1], [0, out_h, 1],
                        [out_w / 2, out_h / 2, 1]], float) @ h.T
    pts = corners[:, :2] / corners[:, 2:3]
    span = np.linalg.norm(pts[1] - pts[0]) + np.linalg.norm(pts[2] - pts[3])
    shrink = max(1.0, 0.5 * span / out_w / 1.2)
    x0, y0 = (int(max(0, math.floor(v))) for v in pts[:4].min(axis=0))
    x1 = int(min(scene.width, math.ceil(pts[:4, 0].max())))
    y1 = int(min(scene.height, math.ceil(pts[:4, 1].max())))
    crop = scene.crop((x0, y0, x1, y1))
    small_size = (max(1, round(crop.width / shrink)), max(1, round(crop.height / shrink)))
    small = crop.resize(small_size, Image.Resampling.LANCZOS)
    to_small = np.array([[small_size[0] / crop.width, 0, -x0 * small_size[0] / crop.width],
                         [0, small_size[1] / crop.height, -y0 * small_size[1] / crop.height],
                         [0, 0, 1]])
    hs = to_small @ h
    coeffs = (hs / hs[2, 2]).ravel()[:8].tolist()
    return small.transform(out_size, Image.Transform.PERSPECTIVE, coeffs,
                           Image.Resampling.BICUBIC, fillcolor=fill)


def develop(photo: Image.Image, varnish: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Return ``photo`` with the look of a hand-held museum snapshot.

    In linear light: exposure, a lighting ramp and a ceiling spot light, vignetting, a warm
    or cool colour cast (white balance), and a soft glare spot on the ``varnish`` mask
    (screen-blended, so it washes colours out); back in sRGB: a slight Gaussian blur and
    signal-dependent sensor noise with some chroma.
    """
    w, h = photo.size
    rgb = (np.asarray(photo, dtype=np.float32) / 255.0) ** 2.2
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    xn, yn = (xx + 0.5) / w - 0.5, (yy + 0.5) / h - 0.5
    direction = rng.uniform(0, 2 * np.pi)
    ramp = np.cos(direction) * xn + np.sin(direction) * yn
    spot_x, spot_y = rng.uniform(-0.3, 0.3), rng.uniform(-0.6, -0.2)
    spot = np.exp(-((xn - spot_x) ** 2 + (yn - spot_y) ** 2) / (2 * 0.45 ** 2))
    light = rng.uniform(0.5, 1.15) * (1 + rng.uniform(0.3, 0.7) * ramp) * (0.75 + 0.35 * spot)
    light *= 1 - rng.uniform(0.15, 0.35) * (xn ** 2 + yn ** 2) * 2  # vignetting
    warm = rng.uniform(-0.14, 0.22)
    cast = np.array([1 + warm, 1 + 0.2 * warm, 1 - warm], np.float32) * rng.uniform(0.94, 1.06, 3)
    rgb = rgb * light[..., None] * cast
    gx, gy = rng.uniform(-0.35, 0.35), rng.uniform(-0.4, 0.2)
    sx, sy = rng.uniform(0.05, 0.12), rng.uniform(0.05, 0.12)
    glare = np.exp(-((xn - gx) ** 2 / (2 * sx ** 2) + (yn - gy) ** 2 / (2 * sy ** 2)))
    glare *= np.asarray(varnish, dtype=np.float32) / 255.0
    strength = rng.uniform(0.2, 0.55)
    rgb = 1 - (1 - rgb.clip(0, 1)) * (1 - strength * glare[..., None])
    srgb = (rgb.clip(0, 1) ** (1 / 2.2) * 255).astype(np.float32)
    blurred = Image.fromarray(srgb.round().astype(np.uint8)).filter(
        ImageFilter.GaussianBlur(rng.uniform(0.35, 0.95)))
    pixels = np.asarray(blurred, dtype=np.float32)
    luma_sigma = rng.uniform(1.0, 2.5) + rng.uniform(0.15, 0.3) * np.sqrt(pixels.mean(axis=2))
    noise = rng.normal(0, 1, size=(h, w, 1)) * luma_sigma[..., None]
    noise = noise + rng.normal(0, rng.uniform(0.8, 2.0), size=(h, w, 3))
    return Image.fromarray((pixels + noise).round().clip(0, 255).astype(np.uint8))


def output_size(aspect: float) -> tuple[int, int]:
    """Return (width, height) with long side :data:`LONG_SIDE` for width / height ``aspect``."""
    if aspect >= 1:
        return LONG_SIDE, max(16, round(LONG_SIDE / aspect))
    return max(16, round(LONG_SIDE * aspect)), LONG_SIDE


def global_view(scene: Scene, rng: np.random.Generator, yaw: float) -> Image.Image:
    """Return a photo of the whole framed painting with some wall, from ``yaw`` degrees."""
    x0, y0, x1, y1 = scene.box
    pw, ph = x1 - x0, y1 - y0
    aspect = 4 / 3 if pw >= ph else 3 / 4
    size = output_size(aspect)
    # fit painting + frame + some wall in the frame, whichever side is tighter
    fill = rng.uniform(1.3, 1.55)
    region_width = max(pw * fill, ph * fill * size[0] / size[1])
    target = ((x0 + x1) / 2 + rng.uniform(-0.05, 0.05) * pw,
              (y0 + y1) / 2 + rng.uniform(-0.05, 0.05) * ph)
    pitch = rng.uniform(-4, 9)
    h = camera_homography(target, region_width, size, yaw, pitch, rng.uniform(-2.5, 2.5))
    return develop(warp(scene.image, h, size, scene.wall), warp(scene.mask, h, size, 0), rng)


def contrast(scene: Scene, cx: float, cy: float, half_w: float, half_h: float) -> float:
    """Return the grey-level standard deviation of the painting inside a box (scene px)."""
    x0, y0, x1, y1 = scene.box
    th, tw = scene.thumbnail.shape
    fx, fy = tw / (x1 - x0), th / (y1 - y0)
    c0, c1 = int((cx - half_w - x0) * fx), math.ceil((cx + half_w - x0) * fx)
    r0, r1 = int((cy - half_h - y0) * fy), math.ceil((cy + half_h - y0) * fy)
    patch = scene.thumbnail[max(0, r0):max(r0 + 1, r1), max(0, c0):max(c0 + 1, c1)]
    return float(patch.std()) if patch.size else 0.0


def detail_view(scene: Scene, rng: np.random.Generator, fraction: float,
                yaw: float) -> Image.Image:
    """Return a photo of a sub-region about ``fraction`` of the painting's width (or height,
    whichever is shorter) wide, centred somewhere inside the painting, from ``yaw`` degrees."""
    x0, y0, x1, y1 = scene.box
    pw, ph = x1 - x0, y1 - y0
    aspect = float(rng.choice([4 / 3, 3 / 4, 1.0]))
    size = output_size(aspect)
    region_width = fraction * min(pw, ph) * max(1.0, aspect)
    half_w, half_h = region_width / 2, region_width / aspect / 2
    best = (-1.0, 0.0, 0.0)
    for _ in range(4):  # a visitor photographs something, not a plain patch: best of four
        cx = rng.uniform(x0 + min(half_w, pw / 2), x1 - min(half_w, pw / 2))
        cy = rng.uniform(y0 + min(half_h, ph / 2), y1 - min(half_h, ph / 2))
        best = max(best, (contrast(scene, cx, cy, half_w, half_h), cx, cy))
    _, cx, cy = best
    h = camera_homography((cx, cy), region_width, size, yaw, rng.uniform(-6, 8),
                          rng.uniform(-4, 4))
    return develop(warp(scene.image, h, size, scene.wall), warp(scene.mask, h, size, 0), rng)


def views(p: Painting, index: int) -> list[View]:
    """Return the eight photos of painting number ``index``: three global views (frontal,
    oblique, very oblique), four details, and the held-out query, whose kind cycles through
    :data:`QUERY_KINDS` (small detail, oblique global view, medium detail) with ``index``."""
    rng = np.random.default_rng([SEED, index])
    scene = museum_scene(p.image, index, rng)

    def sign() -> float:
        return 1.0 if rng.random() < 0.5 else -1.0

    out = []
    for v, (lo, hi) in enumerate(GLOBAL_YAWS):
        image = global_view(scene, rng, sign() * rng.uniform(lo, hi))
        out.append(View(f"{p.slug}_g{v + 1}", image, False, "global"))
    for v in range(GALLERY_DETAILS):
        image = detail_view(scene, rng, rng.uniform(0.35, 0.65), sign() * rng.uniform(0, 30))
        out.append(View(f"{p.slug}_d{v + 1}", image, False, "detail"))
    kind = QUERY_KINDS[index % len(QUERY_KINDS)]
    if kind == "small detail":
        query = detail_view(scene, rng, rng.uniform(0.1, 0.16), sign() * rng.uniform(20, 40))
    elif kind == "oblique global":
        query = global_view(scene, rng, sign() * rng.uniform(50, 56))
    else:
        query = detail_view(scene, rng, rng.uniform(0.4, 0.6), sign() * rng.uniform(5, 25))
    out.append(View(f"{p.slug}_query", query, True, kind))
    return out


def jpeg_bytes(image: Image.Image) -> bytes:
    """Return the image as baseline JPEG bytes: quality :data:`JPEG_QUALITY`, 4:2:0, no
    optimisation, no metadata, so the same pixels always give the same bytes."""
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=JPEG_QUALITY, subsampling=2, optimize=False,
               progressive=False)
    return buffer.getvalue()


# -- descriptors --------------------------------------------------------------------------

def weak_descriptor(image: Image.Image) -> np.ndarray:
    """Return the 512-d joint RGB colour histogram (8 x 8 x 8 bins), L1-normalised then
    square-rooted (the Hellinger kernel becomes a dot product), as float32."""
    rgb = np.asarray(image.convert("RGB"), dtype=np.int32) * WEAK_BINS // 256
    index = (rgb[..., 0] * WEAK_BINS + rgb[..., 1]) * WEAK_BINS + rgb[..., 2]
    hist = np.bincount(index.ravel(), minlength=WEAK_BINS ** 3).astype(np.float64)
    return np.sqrt(hist / hist.sum()).astype(np.float32)


# -- files --------------------------------------------------------------------------------

def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as an uncompressed .npz whose members carry a fixed date
    (1980-01-01), so equal arrays give equal bytes with any numpy version."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for key, value in arrays.items():
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.ascontiguousarray(value), allow_pickle=False)
            zf.writestr(info, buffer.getvalue())


def descriptor_file(path: Path, features: np.ndarray, names: Sequence[str],
                    extractor: str | None = None) -> None:
    """Write an irviewer descriptor file: ``features`` (float32), ``names`` (unicode) and,
    when given, ``extractor``: the name of the extractor that computes a row from an image
    (what lets ``irviewer search`` describe a new photo the same way)."""
    arrays = {"features": features.astype(np.float32), "names": np.array(names)}
    if extractor is not None:
        arrays["extractor"] = np.array(extractor)
    write_npz(path, arrays)


# -- scoring ------------------------------------------------------------------------------

def evaluate(features: np.ndarray, labels: Sequence[str],
             is_query: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    """Return per-query (AP, P@1) for cosine ranking of the gallery (the non-query rows).

    AP is the finite-sum (non-interpolated) average precision: the mean over the query's
    positives (gallery images with its label) of the precision at each positive's rank, as
    in the CLICIDE / GaRoFou instance-search evaluations. Queries are not in the gallery,
    so no self-match needs removing; ties keep gallery order (stable sort).
    """
    x = features.astype(np.float64)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    q_mask = np.asarray(is_query, bool)
    labels_arr = np.asarray(labels)
    gallery, gallery_labels = x[~q_mask], labels_arr[~q_mask]
    aps, p1 = [], []
    for q, label in zip(x[q_mask], labels_arr[q_mask], strict=True):
        order = np.argsort(-(gallery @ q), kind="stable")
        relevant = gallery_labels[order] == label
        ranks = np.flatnonzero(relevant) + 1
        aps.append(float(np.mean(np.arange(1, len(ranks) + 1) / ranks)))
        p1.append(float(relevant[0]))
    return np.array(aps), np.array(p1)


# -- building -----------------------------------------------------------------------------

def build(source: Path, out: Path) -> dict[str, tuple[float, float]]:
    """Write images/, demo.csv, strong.npz, strong_vocabulary.npz and weak.npz under ``out``,
    print what was made and the scores; return descriptor name -> (mAP, mP@1)."""
    start = time.perf_counter()
    paintings = load_paintings(source)
    images_dir = out / "images"
    images_dir.mkdir(parents=True, exist_ok=True)
    for old in images_dir.glob("*.jpg"):
        old.unlink()
    rows, names, labels, is_query, kinds, decoded = [], [], [], [], [], []
    for i, p in enumerate(paintings):
        for view in views(p, i):
            data = jpeg_bytes(view.image)
            (images_dir / f"{view.stem}.jpg").write_bytes(data)
            with Image.open(io.BytesIO(data)) as im:  # describe exactly what is on disk
                decoded.append(im.convert("RGB"))
            names.append(f"images/{view.stem}")
            labels.append(p.slug)
            is_query.append(view.is_query)
            kinds.append(view.kind)
            rows.append((f"images/{view.stem}.jpg", p.slug,
                         "query" if view.is_query else "gallery", p.title))
    with (out / "demo.csv").open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["image", "instance", "role", "title"])
        writer.writerows(rows)
    made = time.perf_counter()
    weak = np.stack([weak_descriptor(im) for im in decoded])
    local = [dense_descriptors(im) for im in decoded]
    gallery_local = [d for d, q in zip(local, is_query, strict=True) if not q]
    vocabulary = Vocabulary.of(learn_vocabulary(gallery_local, np.random.default_rng([SEED, 1000])),
                               "the demo's vocabulary")
    write_npz(out / "strong_vocabulary.npz", vocabulary.arrays())
    strong = np.stack([vlad(d, vocabulary) for d in local])
    descriptor_file(out / "strong.npz", strong, names, extractor=DEMO_NAME)
    descriptor_file(out / "weak.npz", weak, names)
    done = time.perf_counter()
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file() and
               "__pycache__" not in p.parts)
    n_query = sum(is_query)
    print(f"{len(rows)} images: {len(paintings)} paintings, {n_query} queries, "
          f"{len(rows) - n_query} gallery; {size / 2**20:.2f} MiB in {out}")
    print(f"time: images {made - start:.1f} s, descriptors {done - made:.1f} s")
    scores = {}
    query_labels = [lab for lab, q in zip(labels, is_query, strict=True) if q]
    query_kinds = [k for k, q in zip(kinds, is_query, strict=True) if q]
    for name, features in (("strong", strong), ("weak", weak)):
        ap, p1 = evaluate(features, labels, is_query)
        scores[name] = (float(ap.mean()), float(p1.mean()))
        print(f"{name:6s} dim {features.shape[1]:5d}  mAP {100 * ap.mean():6.2f}  "
              f"mP@1 {100 * p1.mean():6.2f}  (finite-sum AP, queries not in the gallery)")
        for kind in QUERY_KINDS:
            sel = np.array([k == kind for k in query_kinds])
            print(f"         {kind:15s} ({sel.sum():2d} queries) mAP {100 * ap[sel].mean():6.2f}"
                  f"  mP@1 {100 * p1[sel].mean():6.2f}")
        misses = [lab for lab, hit in zip(query_labels, p1, strict=True) if not hit]
        print(f"         wrong first match: {', '.join(misses) or 'none'}")
    return scores


def main(argv: Sequence[str] | None = None) -> int:
    """Run the build from the command line; return the exit status (2: no sources)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE,
                        help="folder with the source paintings and their SOURCE.md "
                        "(default: ../shared/demo-paintings beside the repository)")
    parser.add_argument("--out", type=Path, default=HERE,
                        help="where to write the demo (default: this folder)")
    args = parser.parse_args(argv)
    if not (args.source / "SOURCE.md").is_file():
        print(f"build.py: {args.source} holds no SOURCE.md; give --source DIR", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    build(args.source, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
