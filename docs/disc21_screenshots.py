"""Make the DISC21 screenshot of docs/metrics.md (copy detection) from the museum demo's
images (``resources/demo``; their provenance is in its SOURCE.md), offscreen:

    python docs/disc21_screenshots.py [--out DIR]

It builds a DISC21-style set in a temporary folder, as the Image Similarity Challenge is
made: the references are the demo's 154 gallery photos (``R000000.jpg`` ...); 10 queries are
*copies* of references, edited as DISC21's queries are (cropped, rotated, recoloured, a
caption pasted on, re-encoded); 12 queries are the demo's visitor photos, edited the same
way, which show a painting of the collection but copy no reference (a different photo of
the same painting is no copy in DISC21's sense). Its descriptors are the demo extractor's
(``demo-vlad``) reduced to 128 dimensions by PCA fitted on the references (the descriptor
track accepts at most 256), with the ground truth in ``public_ground_truth.csv``. Then it
opens the set in the window with the pairs capped at 220, ten per query as the challenge's
500,000 are for its 50,000 queries (``--copy-pairs cap=220``), sorts the queries by their best answer (the Top column), shows
the query without a copy whose answer scores highest, and writes ``disc21-window.png``.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))

import numpy as np  # noqa: E402
from PIL import Image, ImageDraw, ImageEnhance  # noqa: E402

from collection_screenshots import save  # noqa: E402

COPIES, VISITORS, DIMS, CAP = 10, 12, 128, 220


def edited(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Return ``image`` edited as a DISC21 query is: cropped, rotated, recoloured, a caption
    pasted on, sometimes mirrored."""
    w, h = image.size
    keep = rng.uniform(0.7, 0.9)
    x0, y0 = rng.uniform(0, 1 - keep) * w, rng.uniform(0, 1 - keep) * h
    out = image.crop((int(x0), int(y0), int(x0 + keep * w), int(y0 + keep * h)))
    out = out.rotate(float(rng.uniform(-8, 8)), expand=False, fillcolor=(240, 240, 240))
    out = ImageEnhance.Color(out).enhance(float(rng.uniform(0.4, 1.6)))
    out = ImageEnhance.Brightness(out).enhance(float(rng.uniform(0.8, 1.2)))
    draw = ImageDraw.Draw(out)
    draw.rectangle((0, out.height - 26, out.width, out.height), fill=(20, 20, 20))
    draw.text((8, out.height - 22), "shared 3 h ago  #art", fill=(255, 255, 255))
    return out.transpose(Image.Transpose.FLIP_LEFT_RIGHT) if rng.random() < 0.3 else out


def build(folder: Path) -> tuple[Path, Path, Path]:
    """Write the set (images, ground truth, descriptors) into ``folder``; return (ground
    truth, descriptor file, image folder)."""
    from irviewer.extract.registry import get_extractor

    rng = np.random.default_rng(20210611)
    with (ROOT / "resources" / "demo" / "demo.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    gallery = [r["image"] for r in rows if r["role"] == "gallery"]
    visitors = [r["image"] for r in rows if r["role"] == "query"][:VISITORS]
    images = folder / "images"
    images.mkdir()
    refs = [f"R{i:06d}" for i in range(len(gallery))]
    for name, source in zip(refs, gallery, strict=True):
        Image.open(ROOT / "resources" / "demo" / source).convert("RGB").save(
            images / f"{name}.jpg", quality=85)
    copied = rng.choice(len(gallery), COPIES, replace=False)
    sources = [(refs[i], ROOT / "resources" / "demo" / gallery[i]) for i in copied]
    sources += [("", ROOT / "resources" / "demo" / v) for v in visitors]
    order = rng.permutation(len(sources))
    truth = []
    for q, at in enumerate(order):
        ref, source = sources[at]
        name = f"Q{q:05d}"
        edited(Image.open(source).convert("RGB"), rng).save(images / f"{name}.jpg", quality=70)
        truth.append((name, ref))
    gt = folder / "public_ground_truth.csv"
    gt.write_text("query_id,reference_id\n" + "".join(f"{q},{r}\n" for q, r in truth),
                  encoding="utf-8")
    extractor = get_extractor("demo-vlad")
    describe = [extractor(Image.open(images / f"{n}.jpg").convert("RGB")) for n in refs]
    queries = [extractor(Image.open(images / f"{q}.jpg").convert("RGB")) for q, _ in truth]
    g = np.asarray(describe, dtype=np.float64)
    mean = g.mean(axis=0)
    _, _, vt = np.linalg.svd(g - mean, full_matrices=False)
    project = vt[:DIMS].T
    npz = folder / "descriptors.npz"
    np.savez(npz, gallery=((g - mean) @ project).astype(np.float32),
             queries=((np.asarray(queries) - mean) @ project).astype(np.float32),
             gallery_names=np.array(refs), query_names=np.array([q for q, _ in truth]))
    return gt, npz, images


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    from PySide6.QtCore import Qt

    from irviewer.formats.base import ReadOptions
    from irviewer.gui.app import application
    from irviewer.gui.main_window import MainWindow
    from irviewer.gui.results.query_model import TOP
    from irviewer.opening.request import OpenRequest

    with tempfile.TemporaryDirectory() as tmp:
        gt, npz, images = build(Path(tmp))
        app = application()
        window = MainWindow(top_k=12, keep_sessions=False)
        window.resize(1480, 900)
        window.show()
        options = ReadOptions(images=images, copy_pairs=f"cap={CAP}")
        window.open_request(OpenRequest(gt, (npz,), options=options), sync=True)
        ev = window.inspector.evaluation
        assert ev is not None
        window.queries.table.sortByColumn(TOP, Qt.SortOrder.DescendingOrder)
        no_copy = np.flatnonzero(ev.positives.n_positives == 0)
        worst = int(no_copy[np.nanargmax(ev.per_query["top_score"][no_copy])])
        window.inspector.select(worst)
        app.processEvents()
        window.cache.load_now(window.inspector.visible_thumbnails())
        app.processEvents()
        save(window.grab(), args.out / "disc21-window.png")
        print(f"microAP {100 * ev.summary['microAP']:.2f}, shown "
              f"{ev.dataset.queries[worst].name}; wrote {args.out / 'disc21-window.png'} "
              f"({app.platformName()})")
        window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
