"""Benchmark: does the window stay responsive while it searches a visitor's photo, and how
quickly does presentation mode move on?

Run from the repository root (a script, not a test; offscreen):

    QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_photo_window.py [--photos N]

Opens the demo in the window. A 5 ms timer on the GUI thread records the longest gap
between its ticks (how long the GUI thread was busy at a stretch):

* ``idle``: 1 s of nothing: the baseline;
* ``search``: while N 640-px visitor photos are searched one after another through
  File ▸ Search with a photo (the worker thread), until each is shown;
* ``present``: while presentation mode moves through every query (a key per query, the
  images decoded in the background).

It prints the longest gap of each and its ratio to the idle baseline, and the time from
asking to the photo's matches being shown (median).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from PIL import Image
from PySide6.QtCore import QElapsedTimer, Qt, QTimer
from PySide6.QtTest import QTest

from irviewer.gui.app import application
from irviewer.gui.main_window import MainWindow
from irviewer.opening.request import demo_paths, demo_request


class GapMeter:
    """The longest gap between ticks of a 5 ms timer on the GUI thread."""

    def __init__(self) -> None:
        self.clock = QElapsedTimer()
        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._tick)
        self.longest = 0.0
        self.last = 0

    def start(self) -> None:
        self.longest = 0.0
        self.clock.start()
        self.last = 0
        self.timer.start()

    def _tick(self) -> None:
        now = self.clock.elapsed()
        self.longest = max(self.longest, (now - self.last) / 1000)
        self.last = now

    def stop(self) -> float:
        self.timer.stop()
        return self.longest


def run_until(app, done, timeout_s: float = 30.0) -> None:
    end = time.perf_counter() + timeout_s
    while not done() and time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.001)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--photos", type=int, default=5)
    args = parser.parse_args()
    app = application()
    w = MainWindow(top_k=20, keep_sessions=False)
    w.show()
    w.open_request(demo_request(), sync=True)
    meter = GapMeter()

    meter.start()
    run_until(app, lambda: False, 1.0)
    idle = meter.stop()

    gallery = sorted((Path(demo_paths()[0]).parent / "images").glob("*_g1.jpg"))
    latencies = []
    with tempfile.TemporaryDirectory() as folder:
        photos = []
        for i, source in enumerate(gallery[: args.photos]):
            image = Image.open(source).convert("RGB")
            image.thumbnail((640, 640))
            photos.append(Path(folder) / f"visit{i}.jpg")
            image.save(photos[-1], quality=80)
        meter.start()
        for photo in photos:
            t0 = time.perf_counter()
            w.photo_search.search(photo)
            run_until(app, lambda p=photo: w.photo_search.photo == p)
            latencies.append(time.perf_counter() - t0)
        search = meter.stop()

    w.photo_search.close_photo()
    w.presentation.enter()
    view = w.presentation.view
    meter.start()
    for _ in range(w.queries.proxy.rowCount()):
        QTest.keyClick(view, Qt.Key.Key_Right)
        run_until(app, lambda: False, 0.05)
    present = meter.stop()
    w.presentation.leave()
    w.close()

    print(f"GUI thread's longest busy stretch (5 ms timer), {args.photos} photos, "
          f"{w.queries.proxy.rowCount()} slides")
    print(f"{'while':>10} {'longest_s':>10} {'/idle':>8}")
    for name, value in (("idle", idle), ("search", search), ("present", present)):
        print(f"{name:>10} {value:10.4f} {value / idle:8.1f}")
    print(f"photo asked -> matches shown: median {statistics.median(latencies):.3f} s "
          f"(min {min(latencies):.3f}, max {max(latencies):.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
