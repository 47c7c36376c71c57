"""Build irviewer's museum demo: photographed-looking views of public-domain paintings, the
CSV manifest, and two descriptor files (a strong and a weak one).

    python resources/demo/build.py [--source DIR] [--out DIR]

Modelled on the CLICIDE museum set: per painting, global views (framed, on a wall, seen from
the side of the room) and views of sub-regions (details), each with uneven lighting, a glare
spot, slight blur, sensor noise and JPEG compression. One view per painting is held out as
the query; the others form the gallery. Everything is seeded: the same sources give the same
files. Needs numpy and Pillow only.

Descriptors (no model weights, computed here):
* ``strong.npz`` — dense local descriptors (16 x 16 px, stride 8 px, three scales): a
  RootSIFT-like gradient-orientation histogram plus the opponent colours of its quadrants,
  aggregated by VLAD over a 64-word k-means codebook learnt on the gallery, with
  intra-normalisation, signed square root and L2 (Arandjelovic & Zisserman 2013), float16.
* ``weak.npz`` — an 8 x 4 x 4 HSV colour histogram, L1-normalised then square-rooted.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageFilter

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SEED = 20261122
WORDS = 64
LONG_SIDE = 384
JPEG_QUALITY = 80
GALLERY_GLOBAL = 3
GALLERY_DETAILS = 4
WALL = (178, 170, 156)
FRAME = (74, 52, 33)


@dataclass(frozen=True)
class Painting:
    """A source painting: file stem (the instance label), display title and pixels."""

    slug: str
    title: str
    image: Image.Image


def titles(source: Path) -> dict[str, str]:
    """Return file name -> "Title — Artist" parsed from the sources' SOURCE.md table."""
    out = {}
    text = (source / "SOURCE.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        m = re.match(r"^\| `([^`]+)` \| ([^|]+) \| ([^|]+) \|", line)
        if m:
            title = m.group(2).split(" (")[0].strip()
            artist = re.sub(r"\s*\([^)]*\)\s*$", "", m.group(3)).strip()
            out[m.group(1)] = f"{title} — {artist}"
    return out


def load_paintings(source: Path) -> list[Painting]:
    """Return the source paintings in name order."""
    names = titles(source)
    out = []
    for path in sorted(source.glob("*.jpg")):
        with Image.open(path) as im:
            out.append(Painting(path.stem, names.get(path.name, path.stem), im.convert("RGB")))
    return out


# -- photographing a painting -----------------------------------------------------------

def perspective_coefficients(dst: np.ndarray, src: np.ndarray) -> list[float]:
    """Return PIL PERSPECTIVE coefficients mapping output points ``dst`` to input ``src``."""
    rows = []
    for (x, y), (u, v) in zip(dst, src, strict=True):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
    return np.linalg.solve(np.array(rows, float), src.reshape(-1).astype(float)).tolist()


def framed(painting: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Return the painting in a dark frame on a wall margin."""
    w, h = painting.size
    frame = max(4, int(0.035 * max(w, h)))
    margin = int(rng.uniform(0.08, 0.16) * max(w, h))
    scene = Image.new("RGB", (w + 2 * (frame + margin), h + 2 * (frame + margin)), WALL)
    scene.paste(Image.new("RGB", (w + 2 * frame, h + 2 * frame), FRAME), (margin, margin))
    scene.paste(painting, (margin + frame, margin + frame))
    return scene


def photograph(scene: Image.Image, rng: np.random.Generator, angle: float) -> Image.Image:
    """Return ``scene`` as if photographed: perspective (``angle`` 0 frontal .. 1 strong),
    uneven light, a glare spot, blur, noise; resized to LONG_SIDE on its long side."""
    w, h = scene.size
    scale = LONG_SIDE / max(w, h)
    out_w, out_h = max(16, round(w * scale)), max(16, round(h * scale))
    squeeze = angle * rng.uniform(0.10, 0.22) * out_h
    left = rng.random() < 0.5
    jitter = rng.uniform(-0.03, 0.03, size=(4, 2)) * [out_w, out_h]
    dst = np.array([[0, 0], [out_w, 0], [out_w, out_h], [0, out_h]], float)
    if left:  # the right edge is further away: shorter
        dst[1, 1] += squeeze
        dst[2, 1] -= squeeze
    else:
        dst[0, 1] += squeeze
        dst[3, 1] -= squeeze
    dst[:, 0] = dst[:, 0] * (1 - 0.25 * angle) + (0.125 * angle * out_w)
    dst += jitter
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], float)
    coeffs = perspective_coefficients(dst, src)
    photo = scene.transform((out_w, out_h), Image.Transform.PERSPECTIVE, coeffs,
                            Image.Resampling.BICUBIC, fillcolor=WALL)
    pixels = np.asarray(photo, dtype=np.float32)
    yy, xx = np.mgrid[0:out_h, 0:out_w].astype(np.float32)
    direction = rng.uniform(0, 2 * np.pi)
    ramp = (np.cos(direction) * xx / out_w + np.sin(direction) * yy / out_h)
    light = rng.uniform(0.78, 0.9) + rng.uniform(0.15, 0.35) * (ramp - ramp.min()) / (
        np.ptp(ramp) + 1e-6)
    pixels *= light[..., None] * rng.uniform(0.95, 1.05, size=3)
    cx, cy = rng.uniform(0.15, 0.85) * out_w, rng.uniform(0.1, 0.6) * out_h
    sigma = rng.uniform(0.06, 0.14) * max(out_w, out_h)
    glare = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * sigma ** 2))
    pixels += rng.uniform(40, 110) * glare[..., None]
    pixels += rng.normal(0, rng.uniform(2, 5), size=pixels.shape)
    photo = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
    return photo.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 0.9)))


def detail(painting: Image.Image, rng: np.random.Generator, size: float) -> Image.Image:
    """Return a sub-region covering about ``size`` of each side of the painting."""
    w, h = painting.size
    cw, ch = int(w * size * rng.uniform(0.85, 1.15)), int(h * size * rng.uniform(0.85, 1.15))
    cw, ch = min(cw, w), min(ch, h)
    x0, y0 = int(rng.uniform(0, w - cw)), int(rng.uniform(0, h - ch))
    return painting.crop((x0, y0, x0 + cw, y0 + ch))


def views(p: Painting, index: int) -> list[tuple[str, Image.Image, bool]]:
    """Return (view name, image, is_query) for one painting; the query is held out."""
    rng = np.random.default_rng([SEED, index])
    out = []
    for v in range(GALLERY_GLOBAL):
        angle = (0.1, 0.55, 0.9)[v]
        out.append((f"{p.slug}_g{v + 1}", photograph(framed(p.image, rng), rng, angle), False))
    for v in range(GALLERY_DETAILS):
        region = detail(p.image, rng, rng.uniform(0.4, 0.65))
        out.append((f"{p.slug}_d{v + 1}", photograph(region, rng, rng.uniform(0, 0.5)), False))
    kind = index % 3  # a mix of easy and deliberately hard queries
    if kind == 0:  # a small detail
        query = photograph(detail(p.image, rng, rng.uniform(0.25, 0.35)), rng, 0.3)
    elif kind == 1:  # the whole painting from far to the side
        query = photograph(framed(p.image, rng), rng, 1.0)
    else:  # a medium detail
        query = photograph(detail(p.image, rng, rng.uniform(0.45, 0.6)), rng, 0.4)
    out.append((f"{p.slug}_query", query, True))
    return out


def jpeg_bytes(image: Image.Image) -> bytes:
    """Return the image as JPEG bytes (fixed settings: the same pixels give the same bytes)."""
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=JPEG_QUALITY, optimize=False, progressive=False)
    return buffer.getvalue()


# -- descriptors --------------------------------------------------------------------------

def weak_descriptor(image: Image.Image) -> np.ndarray:
    """Return the 128-d HSV histogram (8 hue x 4 saturation x 4 value), L1 then sqrt."""
    hsv = np.asarray(image.convert("HSV"), dtype=np.int32)
    h, s, v = hsv[..., 0] * 8 // 256, hsv[..., 1] * 4 // 256, hsv[..., 2] * 4 // 256
    hist = np.bincount((h * 16 + s * 4 + v).ravel(), minlength=128).astype(np.float64)
    return np.sqrt(hist / hist.sum()).astype(np.float32)


COLOUR_WEIGHT = 1.5
SCALES = (288, 192, 128)


def dense_descriptors(image: Image.Image) -> np.ndarray:
    """Return dense local descriptors at three scales (long side 288, 192, 128), stride 8 px:
    a RootSIFT-like 128-d gradient histogram (4 x 4 cells of 4 x 4 px, 8 orientations) and
    the opponent colours (O1, O2) of its four quadrants, L2-normalised and weighted by
    COLOUR_WEIGHT; the 10 % lowest-contrast patches are dropped."""
    out = []
    for long_side in SCALES:
        f = long_side / max(image.size)
        small = image.resize((max(16, round(image.size[0] * f)),
                              max(16, round(image.size[1] * f))), Image.Resampling.BILINEAR)
        rgb = np.asarray(small, dtype=np.float32) / 255.0
        g = rgb.mean(axis=2)
        gy, gx = np.gradient(g)
        mag = np.hypot(gx, gy)
        ang = (np.arctan2(gy, gx) % (2 * np.pi)) / (2 * np.pi) * 8
        lo = np.floor(ang).astype(int) % 8
        frac = ang - np.floor(ang)
        hists = np.zeros((*g.shape, 8), np.float32)
        rows, cols = np.indices(g.shape)
        np.add.at(hists, (rows, cols, lo), mag * (1 - frac))
        np.add.at(hists, (rows, cols, (lo + 1) % 8), mag * frac)
        ch, cw = g.shape[0] // 4, g.shape[1] // 4
        cells = hists[: ch * 4, : cw * 4].reshape(ch, 4, cw, 4, 8).sum(axis=(1, 3))
        win = np.lib.stride_tricks.sliding_window_view(cells, (4, 4), axis=(0, 1))[::2, ::2]
        desc = win.transpose(0, 1, 3, 4, 2).reshape(-1, 128)
        opp = np.stack([(rgb[..., 0] - rgb[..., 1]) / np.sqrt(2),
                        (rgb[..., 0] + rgb[..., 1] - 2 * rgb[..., 2]) / np.sqrt(6)], axis=-1)
        ccell = opp[: ch * 4, : cw * 4].reshape(ch, 4, cw, 4, 2).mean(axis=(1, 3))
        cwin = np.lib.stride_tricks.sliding_window_view(ccell, (4, 4), axis=(0, 1))[::2, ::2]
        quad = cwin.reshape(*cwin.shape[:3], 2, 2, 2, 2).mean(axis=(4, 6))
        colour = quad.transpose(0, 1, 3, 4, 2).reshape(-1, 8)
        energy = desc.sum(axis=1)
        keep = energy > np.percentile(energy, 10) + 1e-6
        grad = np.sqrt(desc[keep] / desc[keep].sum(axis=1, keepdims=True))
        col = colour[keep]
        col = col / (np.linalg.norm(col, axis=1, keepdims=True) + 0.05)
        out.append(np.hstack([grad, COLOUR_WEIGHT * col]))
    return np.concatenate(out).astype(np.float32)


def kmeans(data: np.ndarray, k: int, rng: np.random.Generator, iterations: int = 20) -> np.ndarray:
    """Return k centres by Lloyd's algorithm from a seeded k-means++ start."""
    centres = [data[rng.integers(len(data))]]
    for _ in range(1, k):
        d = np.min(((data[:, None, :] - np.array(centres)[None]) ** 2).sum(-1), axis=1)
        centres.append(data[rng.choice(len(data), p=d / d.sum())])
    c = np.array(centres)
    for _ in range(iterations):
        assign = np.argmin((data ** 2).sum(1)[:, None] - 2 * data @ c.T + (c ** 2).sum(1), 1)
        for j in range(k):
            members = data[assign == j]
            if len(members):
                c[j] = members.mean(axis=0)
    return c.astype(np.float32)


def vlad(desc: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Return the VLAD vector: per-word residual sums, intra-normalised, signed sqrt, L2."""
    assign = np.argmin((desc ** 2).sum(1)[:, None] - 2 * desc @ centres.T
                       + (centres ** 2).sum(1), 1)
    v = np.zeros_like(centres)
    np.add.at(v, assign, desc - centres[assign])
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    v = v / np.where(norms > 0, norms, 1)
    v = np.sign(v) * np.sqrt(np.abs(v))
    v = v.ravel()
    return (v / np.linalg.norm(v)).astype(np.float32)


# -- building -----------------------------------------------------------------------------

def build(source: Path, out: Path) -> None:
    """Write images/, demo.csv, strong.npz, weak.npz under ``out`` and print their scores."""
    paintings = load_paintings(source)
    images_dir = out / "images"
    images_dir.mkdir(parents=True, exist_ok=True)
    for old in images_dir.glob("*.jpg"):
        old.unlink()
    rows, names, decoded = [], [], []
    for i, p in enumerate(paintings):
        for view, image, is_query in views(p, i):
            data = jpeg_bytes(image)
            (images_dir / f"{view}.jpg").write_bytes(data)
            with Image.open(io.BytesIO(data)) as im:  # describe what is on disk
                decoded.append(im.convert("RGB"))
            names.append(f"images/{view}")
            rows.append((f"images/{view}.jpg", p.slug, "query" if is_query else "gallery",
                         p.title))
    with (out / "demo.csv").open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["image", "instance", "role", "title"])
        writer.writerows(rows)
    weak = np.stack([weak_descriptor(im) for im in decoded])
    dense = [dense_descriptors(im) for im in decoded]
    rng = np.random.default_rng(SEED)
    gallery = [d for d, r in zip(dense, rows, strict=True) if r[2] == "gallery"]
    pool = np.concatenate(gallery)
    sample = pool[rng.choice(len(pool), size=min(20_000, len(pool)), replace=False)]
    centres = kmeans(sample, WORDS, rng)
    strong = np.stack([vlad(d, centres) for d in dense])
    np.savez(out / "strong.npz", features=strong.astype(np.float16), names=np.array(names))
    np.savez(out / "weak.npz", features=weak.astype(np.float16), names=np.array(names))
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 2**20
    print(f"{len(rows)} images ({len(paintings)} paintings, {len(paintings)} queries), "
          f"{size:.1f} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=ROOT.parent / "shared" / "demo-paintings")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    if not (args.source / "SOURCE.md").is_file():
        print(f"build.py: {args.source} holds no SOURCE.md; give --source DIR", file=sys.stderr)
        return 2
    build(args.source, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
