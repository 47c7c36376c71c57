"""Build the desktop app and check that the built program works (too slow for every CI
run: a build takes minutes):

    python packaging/check_build.py [--app DIR] [--keep DIR]

``--app`` checks an app already built (``dist/irviewer``) instead of building one. The
built program, run as a curator would run it (its own folder, no Python of ours, the
offscreen Qt platform):

1. starts on the museum demo and renders the window to a PNG (``--screenshot``): the PNG
   must be the window's size, not blank, and show the demo's green (right) and orange
   (wrong) result frames;
2. indexes a folder of photos (``irviewer index``, with its worker processes: the same
   program started again) into a collection;
3. answers two photos (``irviewer search COLLECTION PHOTO... --json``): another view of a
   painting of the collection, which must be named with its verification's inliers
   (OpenCV bundled and working), and a view of a painting it does not hold, which must be
   answered "not in this collection";
4. opens the collection and renders it (``irviewer COLLECTION --screenshot``);
5. scores an approximate method (``irviewer eval --demo --ann IVF4,Flat:nprobe=1``: FAISS
   bundled), and says in one line that a vector engine needs the Milvus client, which the
   app leaves out (exit 2, no traceback).

Prints each step, the app's size and the time each step took; exit 1 when one fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _load_build():  # type: ignore[no-untyped-def]
    """Return packaging/build.py as a module (the folder is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("irviewer_packaging_build",
                                                  ROOT / "packaging" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_BUILD = _load_build()
build, folder_size = _BUILD.build, _BUILD.folder_size

GREEN, ORANGE = np.array([0, 158, 115]), np.array([213, 94, 0])
#: The paintings of the collection the built app indexes (one demo view each).
HELD = ("bruegel_the-harvesters", "leonardo_mona-lisa", "van-gogh_the-starry-night",
        "hokusai_great-wave-off-kanagawa", "vermeer_girl-with-a-pearl-earring",
        "turner_wreck-of-a-transport-ship")


def run(program: Path, *args: str, timeout: float = 300) -> tuple[float, str]:
    """Run the built program; return (seconds, stdout); fail with its stderr."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    start = time.perf_counter()
    done = subprocess.run([str(program), *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=tempfile.gettempdir())
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"FAILED: {program.name} {' '.join(args)} -> exit "
                         f"{done.returncode}\n{done.stderr}")
    return elapsed, done.stdout


def has_colour(pixels: np.ndarray, colour: np.ndarray, at_least: int = 200) -> bool:
    """Return whether at least ``at_least`` pixels are within 30 levels of ``colour``."""
    return int((np.abs(pixels - colour).max(axis=2) < 30).sum()) >= at_least


def check_png(path: Path, frames: bool) -> str:
    """Return a line describing the PNG; fail when it is missing, small or blank, or (with
    ``frames``) lacks the green and orange result frames."""
    with Image.open(path) as im:
        im.load()
        pixels = np.asarray(im.convert("RGB")).astype(int)
    h, w = pixels.shape[:2]
    if w < 800 or h < 500:
        raise SystemExit(f"FAILED: {path.name} is {w} x {h} px")
    if pixels.std() < 10:
        raise SystemExit(f"FAILED: {path.name} is blank")
    if frames and not (has_colour(pixels, GREEN) and has_colour(pixels, ORANGE)):
        raise SystemExit(f"FAILED: {path.name} shows no green and orange result frames")
    return f"{w} x {h} px, {path.stat().st_size / 1024:.0f} KiB"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--app", type=Path, help="an app already built (dist/irviewer)")
    parser.add_argument("--keep", type=Path, help="keep the screenshots in this folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        app = args.app or build(work / "dist", work / "build")
        program = app / ("irviewer.exe" if sys.platform == "win32" else "irviewer")
        print(f"app: {app} — {folder_size(app) / 2**20:.0f} MiB")
        shots = args.keep or work
        shots.mkdir(parents=True, exist_ok=True)
        seconds, _ = run(program, "--screenshot", str(shots / "demo.png"))
        print(f"1. starts on the demo: {check_png(shots / 'demo.png', frames=True)} "
              f"({seconds:.1f} s)")
        views = ROOT / "resources" / "demo" / "images"  # the demo's public-domain views
        (work / "photos").mkdir()
        for name in HELD:
            shutil.copy(views / f"{name}_g1.jpg", work / "photos" / f"{name}.jpg")
        seconds, out = run(program, "index", str(work / "photos"), "--out",
                           str(work / "coll"))
        print(f"2. indexes 6 photos with worker processes: {out.splitlines()[0]} "
              f"({seconds:.1f} s)")
        seconds, out = run(program, "search", str(work / "coll"),
                           str(views / "leonardo_mona-lisa_g2.jpg"),
                           str(views / "rembrandt_storm-on-the-sea-of-galilee_g1.jpg"),
                           "--top", "1", "--json", str(work / "answers.json"))
        named, other = json.loads((work / "answers.json").read_text("utf-8"))["results"]
        if named["answer"] != "leonardo_mona-lisa" or not named["matches"][0]["inliers"]:
            raise SystemExit(f"FAILED: another view of the Mona Lisa was answered "
                             f"{named['sentence']}")
        if other["answer"] is not None:
            raise SystemExit(f"FAILED: a painting not held was answered {other['sentence']}")
        print(f"3. answers photos: {named['sentence']} ({named['evidence']}); "
              f"{other['sentence'][:60]}… ({seconds:.1f} s)")
        seconds, _ = run(program, str(work / "coll"), "--screenshot",
                         str(shots / "collection.png"))
        print(f"4. opens the collection: {check_png(shots / 'collection.png', frames=False)} "
              f"({seconds:.1f} s)")
        seconds, out = run(program, "eval", "--demo", "--ann", "IVF4,Flat:nprobe=1")
        if "approximate search IVF4,Flat:nprobe=1" not in out or "recall (" not in out:
            raise SystemExit(f"FAILED: the approximate method was not scored:\n{out}")
        engine = subprocess.run(
            [str(program), "eval", "--demo", "--engine", str(work / "g.db"), "--collection",
             "paintings"], capture_output=True, text=True, timeout=120,
            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
        said = engine.stderr.strip().splitlines()
        if engine.returncode != 2 or len(said) != 1 or "this desktop app does not include" \
                not in said[0]:
            raise SystemExit(f"FAILED: --engine in the app -> exit {engine.returncode}: "
                             f"{engine.stderr}")
        print(f"5. scores an approximate method (FAISS bundled, {seconds:.1f} s); a vector "
              f"engine is one line: {said[0]}")
    print("the built app works")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
