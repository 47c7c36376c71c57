"""Make the screenshots of docs/collections.md and the README's "For curators" section from
the 22 public-domain paintings (``../shared/demo-paintings``; their provenance is in its
SOURCE.md and in ``resources/demo/SOURCE.md``):

    python docs/collection_screenshots.py [--source DIR] [--out DIR]

It writes a titles file from the paintings' SOURCE.md table (title, artist, and the
year as a detail), indexes the paintings with ``irviewer index`` into a temporary
collection, makes a visitor's phone photo of one painting (``tests/visitor.py``: the
painting on a wall, from the side, under warm light), and renders offscreen:

* ``collection-present.png``: presentation mode answering that photo;
* ``collection-curator.png``: the curator's window on the collection (no ground truth: the
  artworks and their titles, an artwork with the artworks most like it);
* ``collection-window.png``: the curator's window with the photo's matches.

Needs the window's dependencies (PySide6); nothing is downloaded.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from irviewer.cli import main as irviewer  # noqa: E402
from tests.visitor import phone_photo  # noqa: E402

VISITOR_OF = "vermeer_girl-with-a-pearl-earring"


def titles_csv(source: Path, out: Path) -> None:
    """Write id,title,artist,year for every painting of the source's SOURCE.md table (the
    title up to its first parenthesis, the year split off its end where it has one)."""
    rows = []
    for line in (source / "SOURCE.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\| `([^`]+)\.jpg` \| ([^|]+) \| ([^|]+) \|", line)
        if m:
            title = re.split(r" \(|;", m.group(2))[0].strip().rstrip(",")
            dated = re.match(r"^(.*?),\s*((?:c\.\s*)?\d{4}(?:[–-]\d{2,4})?)$", title)
            title, year = (dated.group(1), dated.group(2)) if dated else (title, "")
            artist = re.sub(r"\s*\([^)]*\)\s*$", "", m.group(3)).strip()
            rows.append((m.group(1), title, artist, year))
    with out.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "title", "artist", "year"])
        writer.writerows(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--source", type=Path, default=ROOT.parent / "shared" / "demo-paintings")
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    from irviewer.gui.app import application
    from irviewer.gui.main_window import MainWindow
    from irviewer.opening.request import OpenRequest

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        titles_csv(args.source, work / "titles.csv")
        if irviewer(["index", str(args.source), "--out", str(work / "Our collection"),
                     "--titles", str(work / "titles.csv")]) != 0:
            return 1
        with Image.open(args.source / f"{VISITOR_OF}.jpg") as im:
            photo = phone_photo(im.convert("RGB"), "warm light", np.random.default_rng(3))
        photo.save(work / "visitor.jpg", quality=90)
        app = application()
        window = MainWindow(top_k=20, keep_sessions=False)
        window.resize(1480, 900)
        window.show()
        window.open_request(OpenRequest(work / "Our collection"), sync=True)
        app.processEvents()
        window.cache.load_now(window.inspector.visible_thumbnails())
        app.processEvents()
        save(window.grab(), args.out / "collection-curator.png")
        window.photo_search.search(work / "visitor.jpg", sync=True)
        app.processEvents()
        window.cache.load_now(window.inspector.visible_thumbnails())
        app.processEvents()
        save(window.grab(), args.out / "collection-window.png")
        window.presentation.enter()
        window.presentation.view.resize(1480, 900)
        window.photo_search.show()
        window.presentation.view.load_now()
        app.processEvents()
        save(window.presentation.view.grab(), args.out / "collection-present.png")
        window.presentation.leave()
        window.close()
    print(f"wrote {args.out / 'collection-present.png'}, {args.out / 'collection-curator.png'} "
          f"and {args.out / 'collection-window.png'}")
    return 0


def save(image, path: Path) -> None:  # type: ignore[no-untyped-def]
    """Write the grabbed ``image`` to ``path``; stop with the path when Qt cannot."""
    if not image.save(str(path)):
        raise SystemExit(f"{path}: cannot write the screenshot there")


if __name__ == "__main__":
    raise SystemExit(main())
