"""Benchmark: does ``irviewer search`` name the right artwork, and say "not in this
collection" for a photo of anything else? And how long does it take?

Run from the repository root (a script, not a test; it needs the shared sample photos):

    python tests/benchmarks/bench_answer.py [--folds N] [--per-kind N] [--seed S]
                                            [--baseline REPO] [--keep DIR] [--shared DIR]
                                            [--plant-duplicate]

Per fold, a collection is indexed by ``irviewer index`` from 16 or 17 of the 22
public-domain paintings of ``../shared/demo-paintings`` and 11 of the 17 scikit-image
photos; the other paintings and photos are **held out**: the collection never sees them.
The calibration is the collection's own (``irviewer index`` makes it from the collection's
photos); no photo below is used to make or tune it.

* **In the collection**: for each painting of the collection, N phone photos of every kind
  of ``tests/visitor.py``'s :data:`PHONE_KINDS` (the painting in a room from the side, a
  part, a reflection, warm light, another visitor in front, several at once). Counted: the
  answer names the right artwork (target >= 90 %), names a wrong one (target <= 3 %), says
  "not in this collection".
* **Not in the collection** (target: "not in this collection" >= 90 %): phone photos of the
  held-out paintings (``other painting``, every phone kind); of the held-out photos of
  objects and animals (``object``: a cup of coffee, a rocket, a cat, a Chinese temple, a
  flower, text, framed and hung like a painting); of people (``person``: the scikit-image
  cameraman and astronaut photographed from the side, under a lamp, blurred); of an empty
  frame on the wall (``frame``); and of a museum label naming one of the collection's
  paintings (``label``: the worst case for a text-blind method would be to name it).

``--plant-duplicate`` files a second picture of one of the collection's paintings as an
artwork of its own (The Starry Night when the fold holds it: a gift-shop print, the same
picture at 93 % with a slight colour shift, ``<id> (gift shop print).jpg``), as a curator
who indexes a flat folder with an extra photo does. A photo of that painting counts as
right when the answer names it or the print (they are one picture); every other count is
as without it, so the two runs compare the other artworks' answers.

Speed: ``irviewer search COLLECTION PHOTO... --json`` over a batch of photos as a whole
process (start-up included), per photo; beside it the same batch searched by the code
given with ``--baseline REPO`` (another checkout, e.g. the main branch without
verification) in the same run, since the machine is shared and figures move with its load.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from PIL import Image, ImageDraw, ImageFont  # noqa: E402

from irviewer.collection.photo_search import Searcher, open_searcher  # noqa: E402
from irviewer.formats.collection import read_record  # noqa: E402
from tests.visitor import (  # noqa: E402
    PHONE_KINDS,
    blur,
    fit,
    light,
    perspective,
    phone_finish,
    phone_photo,
    room_view,
    tungsten,
)

SHARED = ROOT.parent / "shared"
#: Photos of objects never in any fold's collection, and those of people.
HELD_OUT_OBJECTS = ("coffee.png", "rocket.jpg", "chelsea.png", "text.png")
PEOPLE = ("camera.png", "astronaut.png")
TARGETS = {"right": 0.90, "wrong": 0.03, "not_in": 0.90, "s_per_photo": 1.0}


def load(path: Path) -> Image.Image:
    with Image.open(path) as im:
        return im.convert("RGB")


def jpeg_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


def gift_shop_print(image: Image.Image) -> Image.Image:
    """The same picture printed for the shop: 93 % of the painting's width and height
    around its centre, a slight warm shift of the inks."""
    w, h = image.size
    dx, dy = round(w * 0.035), round(h * 0.035)
    printed = np.asarray(image.crop((dx, dy, w - dx, h - dy)), np.float32)
    printed = printed * np.array([1.04, 1.0, 0.94]) + 6
    return Image.fromarray(printed.clip(0, 255).astype(np.uint8))


def person_photo(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """A photo of a person (not on a wall): from the side, under a lamp or other light,
    a phone's blur and finish."""
    photo = perspective(fit(image, 900), rng, (0, 30))
    photo = (tungsten if rng.random() < 0.5 else light)(photo, rng)
    return phone_finish(fit(blur(photo, rng) if rng.random() < 0.5 else photo), rng)


def empty_frame(rng: np.random.Generator) -> Image.Image:
    """An empty frame on the wall: the room's frame around a plain, slightly mottled
    canvas."""
    h, w = int(rng.integers(500, 800)), int(rng.integers(500, 800))
    tone = rng.uniform(120, 230, 3)
    canvas = np.broadcast_to(tone, (h, w, 3)) + rng.normal(0, 3, (h, w, 1))
    return phone_finish(room_view(Image.fromarray(canvas.clip(0, 255).astype(np.uint8)),
                                  rng, (0, 40)), rng)


def label_photo(text: list[str], rng: np.random.Generator) -> Image.Image:
    """A museum label: lines of dark text on a white card, photographed from the side under
    the room's light."""
    card = Image.new("RGB", (900, 420), (246, 244, 238))
    draw = ImageDraw.Draw(card)
    try:
        font = ImageFont.truetype("DejaVuSans.ttf", 40)
        small = ImageFont.truetype("DejaVuSans.ttf", 28)
    except OSError:
        font = small = ImageFont.load_default()
    y = 40
    for i, line in enumerate(text):
        draw.text((50, y), line, fill=(30, 30, 30), font=font if i < 2 else small)
        y += 60 if i < 2 else 44
    photo = perspective(card, rng, (0, 35))
    return phone_finish(fit(light(photo, rng)), rng)


@dataclass
class Fold:
    """One fold's searcher, where its photos go, the timed batch, and the counts."""

    searcher: Searcher
    out: Path
    batch: list[Path]
    batch_size: int
    counts: dict[tuple[str, str], list[int]]
    wrongs: list[str]
    same: dict[str, str]  # a planted duplicate's artwork -> the painting it shows
    answers: dict[str, list[str]]  # photo -> the artworks named (as the same paintings)

    def ask(self, image: Image.Image, group: str, kind: str, truth: str | None,
            name: str) -> None:
        """Save the photo, ask for its answer, count it (right, wrong, none, photos)."""
        path = self.out / f"{name}.jpg"
        path.write_bytes(jpeg_bytes(image))
        if len(self.batch) < self.batch_size and \
                (len(self.batch) % 2 == 0) == (truth is None):
            self.batch.append(path)
        answer = self.searcher.answer(path, 5)
        row = self.counts.setdefault((group, kind), [0, 0, 0, 0])
        artworks = getattr(answer, "artworks", (answer.artwork,))  # an older irviewer: one
        named = {self.same.get(a, a) for a in artworks if a is not None}
        self.answers[f"{self.out.parent.name}/{name}"] = sorted(named)
        if answer.artwork is None:
            row[2] += 1
        elif named == {truth}:
            row[0] += 1
        else:
            row[1] += 1
            self.wrongs.append(f"{group} {kind}: {name} named {answer.artwork} "
                               f"({answer.named.inliers if answer.named else 0} inliers)")
        row[3] += 1


def folds(paintings: list[Path], n: int) -> list[list[Path]]:
    """Return the held-out paintings of each of ``n`` folds (every fourth painting, from
    a different start)."""
    return [paintings[k::4] for k in range(min(n, 4))]


def run(command: list[str], pythonpath: Path) -> tuple[float, float]:
    """Run ``command`` with ``pythonpath``; return (wall seconds, CPU seconds of the
    process: user + system, which the machine's other load moves much less)."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env,
                          cwd=pythonpath)  # `python -m` looks in the working folder first
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0,):
        raise SystemExit(f"{' '.join(command[:4])}...: exit {done.returncode}: "
                         f"{done.stderr.strip()[-400:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--per-kind", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20261127)
    parser.add_argument("--batch", type=int, default=24, help="photos in the timed batch")
    parser.add_argument("--baseline", type=Path, help="another checkout to time beside")
    parser.add_argument("--keep", type=Path, help="keep the photos in this folder")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--speed-only", action="store_true",
                        help="one fold, the timed batch only (no table of answers)")
    parser.add_argument("--shared", type=Path, default=SHARED,
                        help="the shared folder (demo-paintings, samples)")
    parser.add_argument("--plant-duplicate", action="store_true",
                        help="file a gift-shop print of one painting as its own artwork")
    args = parser.parse_args()
    painting_dir = args.shared / "demo-paintings"
    object_dir = args.shared / "samples" / "scikit-image-cc0-photos"
    more_dir = args.shared / "samples" / "scikit-learn-sample-images"
    if not painting_dir.is_dir() or not object_dir.is_dir():
        print(f"bench_answer.py: skipped: needs {painting_dir} and {object_dir}",
              file=sys.stderr)
        return 0
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the start "
          "(shared: figures move with the load)")
    paintings = sorted(painting_dir.glob("*.jpg"))
    objects = sorted(p for p in object_dir.iterdir() if p.suffix in (".png", ".jpg"))
    held_objects = [object_dir / n for n in HELD_OUT_OBJECTS] + sorted(more_dir.glob("*.jpg"))
    in_objects = [p for p in objects if p.name not in HELD_OUT_OBJECTS and p.name not in PEOPLE]
    titles = {p.stem: p.stem.split("_", 1)[1].replace("-", " ").title() for p in paintings}
    counts: dict[tuple[str, str], list[int]] = {}  # (group, kind) -> right, wrong, none, n
    answers: dict[str, list[str]] = {}
    wrongs: list[str] = []
    timing: dict[str, tuple[float, float]] = {}
    batch_size = 0
    inprocess: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        for f, held in enumerate(folds(paintings, 1 if args.speed_only else args.folds)):
            photos = work / f"fold{f}" / "photos"
            photos.mkdir(parents=True, exist_ok=True)
            for p in [*(p for p in paintings if p not in held), *in_objects]:
                shutil.copy(p, photos / p.name)
            same = {}
            if args.plant_duplicate:
                kept = [p for p in paintings if p not in held]
                original = next((p for p in kept if "starry-night" in p.stem), kept[0])
                planted = f"{original.stem} (gift shop print)"
                gift_shop_print(load(original)).save(photos / f"{planted}.jpg", quality=90)
                same[planted] = original.stem
            collection = work / f"fold{f}" / "collection"
            shutil.rmtree(collection, ignore_errors=True)
            elapsed, _cpu = run([sys.executable, "-m", "irviewer", "index", str(photos), "--out",
                              str(collection)], ROOT)
            print(f"fold {f + 1}: collection of {len(paintings) - len(held)} paintings and "
                  f"{len(in_objects)} photos of objects indexed in {elapsed:.1f} s; held out: "
                  f"{', '.join(p.stem for p in held)}"
                  + (f"; planted: {', '.join(same)}" if same else ""))
            fold = Fold(open_searcher(collection), work / f"fold{f}" / "visitors", [],
                        args.batch, counts, wrongs, same, answers)
            calibration = fold.searcher.verifier.calibration
            pairs = ", ".join(f"{a} ~ {b} ({n} points)"
                              for a, b, n in read_record(collection).lookalikes)
            print(f"  the answers' rule: {calibration.threshold()} matched points (normal); "
                  f"lookalike pairs found: {pairs or 'none'}")
            fold.out.mkdir(exist_ok=True)
            ask, batch = fold.ask, fold.batch

            if args.speed_only:  # the timed batch alone: phone photos, in and not in
                in_collection = [p for p in paintings if p not in held]
                for i in range(args.batch):
                    path = in_collection[i // 2] if i % 2 == 0 else held[(i // 2) % len(held)]
                    photo = fold.out / f"speed_{i}_{path.stem}.jpg"
                    photo.write_bytes(jpeg_bytes(phone_photo(
                        load(path), "phone", np.random.default_rng([args.seed, i]))))
                    batch.append(photo)
            for p, path in enumerate([] if args.speed_only else paintings):
                painting = load(path)
                group = "not in collection" if path in held else "in collection"
                for k, kind in enumerate(PHONE_KINDS):
                    for n in range(args.per_kind):
                        rng = np.random.default_rng([args.seed, f, p, k, n])
                        ask(phone_photo(painting, kind, rng), group,
                            "other painting" if path in held else kind,
                            None if path in held else path.stem, f"{path.stem}_{kind}_{n}")
            for o, path in enumerate([] if args.speed_only else held_objects):
                image = load(path)
                for k, kind in enumerate(("angle", "warm light", "phone")):
                    rng = np.random.default_rng([args.seed, f, 100 + o, k])
                    ask(phone_photo(image, kind, rng), "not in collection", "object", None,
                        f"{path.stem}_{kind}")
            for o, name in enumerate([] if args.speed_only else PEOPLE):
                image = load(object_dir / name)
                for n in range(3 * args.per_kind):
                    rng = np.random.default_rng([args.seed, f, 200 + o, n])
                    ask(person_photo(image, rng), "not in collection", "person", None,
                        f"person_{Path(name).stem}_{n}")
            extra = 0 if args.speed_only else 3 * args.per_kind
            for n in range(extra):
                rng = np.random.default_rng([args.seed, f, 300, n])
                ask(empty_frame(rng), "not in collection", "frame", None, f"frame_{n}")
            in_collection = [p for p in paintings if p not in held]
            for n in range(extra):
                rng = np.random.default_rng([args.seed, f, 400, n])
                stem = in_collection[int(rng.integers(len(in_collection)))].stem
                artist = stem.split("_")[0].replace("-", " ").title()
                text = [titles[stem], artist, "Oil on canvas", "Gift of a friend of the museum"]
                ask(label_photo(text, rng), "not in collection", "label", None, f"label_{n}")
            if f == 0:
                per = {"search only (descriptor)": [], "answer (descriptor + verification)": []}
                for path in batch:  # in this process, interleaved: the same load for both
                    for label, call in (("search only (descriptor)", fold.searcher.search),
                                        ("answer (descriptor + verification)",
                                         fold.searcher.answer)):
                        start = time.perf_counter()
                        call(path, 5)
                        per[label].append(time.perf_counter() - start)
                inprocess = {k: float(np.median(v)) for k, v in per.items()}
                command = ["-m", "irviewer", "search", str(collection), *map(str, batch),
                           "--json", str(work / "answers.json")]
                runs = [("this checkout", ROOT, command)]
                if args.baseline is not None:  # again after it: the load moves
                    base = work / f"fold{f}" / "baseline collection"  # its own format
                    shutil.rmtree(base, ignore_errors=True)
                    run([sys.executable, "-m", "irviewer", "index", str(photos), "--out",
                         str(base)], args.baseline)
                    runs += [(f"baseline {args.baseline}", args.baseline,
                              ["-m", "irviewer", "search", str(base), *map(str, batch)]),
                             ("this checkout, again", ROOT, command)]
                for label, where, line in runs:
                    elapsed, cpu = run([sys.executable, *line], where)
                    timing[label] = (elapsed / len(batch), cpu / len(batch))
                batch_size = len(batch)
    print(f"\nanswers, {args.per_kind} photos per painting and kind, seed {args.seed}, "
          f"{args.folds} folds")
    print(f"  {'':18s} {'kind':15s} {'photos':>6s} {'right':>14s} {'wrong':>14s} "
          f"{'not in coll.':>14s}")
    report: dict = {"targets": TARGETS, "rows": []}
    for group in ("in collection", "not in collection"):
        rows = [(k, v) for (g, k), v in counts.items() if g == group]
        if not rows:
            continue
        total = [sum(v[i] for _, v in rows) for i in range(4)]
        for kind, (right, wrong, none, n) in [*rows, ("all", total)]:
            print(f"  {group:18s} {kind:15s} {n:6d} {right:5d} ({100 * right / n:5.1f} %) "
                  f"{wrong:5d} ({100 * wrong / n:5.1f} %) {none:5d} ({100 * none / n:5.1f} %)")
            report["rows"].append({"group": group, "kind": kind, "photos": n, "right": right,
                                   "wrong": wrong, "not_in_collection": none})
    if wrongs:
        print("  wrong answers: " + "; ".join(wrongs))
    if timing:
        print("\nin one process, median seconds per photo of the timed batch (interleaved):")
        for label, seconds in inprocess.items():
            print(f"  {label:40s} {seconds:6.3f} s")
        ratio = inprocess["answer (descriptor + verification)"] / \
            inprocess["search only (descriptor)"]
        print(f"  answer / search only: {ratio:.2f}")
        report["in_process_s"] = inprocess
        print(f"\nwhole process: `irviewer search COLLECTION PHOTO... --json`, {batch_size} "
              "photos (half in the collection), per photo (target <= 1.0 s):")
        print(f"  {'':40s} {'wall':>8s} {'CPU':>8s}")
        for label, (wall, cpu) in timing.items():
            print(f"  {label:40s} {wall:6.3f} s {cpu:6.3f} s")
        report["s_per_photo"] = timing
    report["answers"] = answers  # per photo: compare two runs photo by photo
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
