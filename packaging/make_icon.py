"""Draw irviewer's icon with Pillow: a framed painting and a magnifying glass on a dark
rounded square (retrieval: which painting is this?). Writes ``resources/icons/irviewer.png``
(256 px, what the window and the Linux .desktop entry show) and ``irviewer.ico`` beside it
(Windows builds):

    python packaging/make_icon.py

Seeded by nothing: the drawing is fixed, so the same Pillow gives the same bytes.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "resources" / "icons"
SIZE = 1024  # drawn large, reduced with Lanczos: smooth edges


def draw() -> Image.Image:
    """Return the icon at :data:`SIZE` px, RGBA."""
    s = SIZE
    im = Image.new("RGBA", (s, s), (0, 0, 0, 0))
    d = ImageDraw.Draw(im)
    d.rounded_rectangle((24, 24, s - 24, s - 24), radius=190, fill=(28, 43, 66, 255))
    # the frame (gilt) and the painting: sky, sun, two hills
    x0, y0, x1, y1 = 170, 190, 800, 700
    d.rectangle((x0, y0, x1, y1), fill=(196, 154, 72, 255))
    d.rectangle((x0 + 22, y0 + 22, x1 - 22, y1 - 22), fill=(150, 110, 44, 255))
    px0, py0, px1, py1 = x0 + 48, y0 + 48, x1 - 48, y1 - 48
    d.rectangle((px0, py0, px1, py1), fill=(116, 172, 214, 255))
    d.ellipse((px1 - 170, py0 + 50, px1 - 70, py0 + 150), fill=(248, 210, 90, 255))
    d.polygon([(px0, py1), (px0, py0 + 250), (px0 + 230, py0 + 170), (px0 + 420, py1)],
              fill=(62, 128, 84, 255))
    d.polygon([(px0 + 180, py1), (px0 + 380, py0 + 230), (px1, py0 + 290), (px1, py1)],
              fill=(38, 96, 64, 255))
    # the magnifying glass over the painting's corner
    cx, cy, r = 700, 680, 165
    d.line((cx + 110, cy + 110, cx + 250, cy + 250), fill=(235, 235, 235, 255), width=70)
    d.ellipse((cx - r - 28, cy - r - 28, cx + r + 28, cy + r + 28), fill=(235, 235, 235, 255))
    d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=(0, 114, 178, 255))
    # inside the glass: the green tick irviewer marks a right match with
    d.line([(cx - 80, cy + 5), (cx - 20, cy + 70), (cx + 90, cy - 65)], fill=(255, 255, 255, 255),
           width=48, joint="curve")
    return im


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    icon = draw()
    icon.resize((256, 256), Image.Resampling.LANCZOS).save(OUT / "irviewer.png", optimize=True)
    icon.save(OUT / "irviewer.ico", sizes=[(16, 16), (32, 32), (48, 48), (64, 64), (128, 128),
                                          (256, 256)])
    print(f"wrote {OUT / 'irviewer.png'} and {OUT / 'irviewer.ico'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
