"""irviewer.view: the window on data held in Python, offscreen — rendered to a PNG, live
from IPython (Qt's event loop run by the prompt's input hook), blocking from a script —
with its pictures from a folder, a list of paths, a mapping or a function."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QImage

import irviewer
from irviewer.gui.widgets.thumbnails import BROKEN
from irviewer.opening.request import demo_paths
from tests.gui.conftest import (  # noqa: F401 - the window's test set-up, applied here too
    garbage_collected_in_the_gui_thread,
    isolated_settings,
    no_save_question,
    no_window_leaks,
)

ROOT = Path(__file__).resolve().parents[2]


def demo_leave_one_out() -> tuple[np.ndarray, list[str], list[str], Path]:
    """Return the demo's strong vectors, image names and instance labels (every image
    queries all the others) and its folder of images."""
    manifest, strong = demo_paths()
    with np.load(strong) as z:
        features, names = z["features"], [str(n) for n in z["names"]]
    with manifest.open(encoding="utf-8") as stream:
        label = {r["image"].rsplit(".", 1)[0]: r["instance"] for r in csv.DictReader(stream)}
    return features, names, [label[n] for n in names], manifest.parent


def small_set(n: int = 12) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2)
    labels = np.arange(n) % 3
    return rng.normal(size=(3, 6))[labels] + 0.5 * rng.normal(size=(n, 6)), labels


def test_a_screenshot_of_a_leave_one_out_set_shows_the_query_selected(tmp_path):
    x, names, labels, folder = demo_leave_one_out()
    result = irviewer.evaluate(x, labels=labels, names=names)
    worst = result.queries[int(np.nanargmin(result.per_query("AP")))]
    out = tmp_path / "shot.png"
    viewer = irviewer.view(x, labels=labels, names=names, images=folder, select=worst,
                           screenshot=out)
    assert viewer.closed and viewer.selected == worst
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1480, 900)
    assert len({image.pixel(x, 400) for x in range(500, 1000, 7)}) > 20  # pictures drawn


def test_a_live_window_shows_pictures_from_a_folder_and_can_be_shot(tmp_path):
    x, names, labels, folder = demo_leave_one_out()
    viewer = irviewer.view(x, labels=labels, names=names, images=folder, block=False,
                           select=names[5])
    try:
        assert not viewer.closed and viewer.selected == names[5]
        window = viewer._window
        shown = window.inspector.visible_thumbnails()
        window.cache.load_now(shown)
        assert shown and all(isinstance(window.cache.get(n, p), QImage) for n, p in shown)
        viewer.select(names[7])
        assert viewer.selected == names[7]
        with pytest.raises(irviewer.ArgumentError, match=r"^query: labels: no query is called "
                           r"'nope', e\.g\. "):
            viewer.select("nope")
        assert viewer.screenshot(tmp_path / "live.png").is_file()
    finally:
        viewer.close()
    assert viewer.closed


@pytest.mark.parametrize("kind", ["function", "list", "mapping"])
def test_pictures_come_from_a_function_a_list_or_a_mapping(kind, tmp_path):
    x, labels = small_set()
    names = [str(i) for i in range(len(labels))]
    calls: list[str] = []

    def picture(name: str) -> object:
        calls.append(name)
        if name == "1":
            raise RuntimeError("no such image")
        if name == "2":
            return None
        return np.full((40, 30, 3), 20 * int(name), dtype=np.uint8)

    path = tmp_path / "a.png"
    QImage(30, 40, QImage.Format.Format_RGB888).save(str(path))
    images = {"function": picture, "list": [path] * len(names),
              "mapping": {"0": path, "3": np.zeros((3, 16, 16), np.float32), "4": None}}[kind]
    viewer = irviewer.view(x, labels=labels, images=images, block=False)
    try:
        cache = viewer._window.cache
        locations = viewer._window.opened.dataset.image_paths
        cache.load_now([(n, locations.get(n)) for n in ("0", "1", "2", "3", "4")])
        got = {n: cache.get(n, locations.get(n)) for n in ("0", "1", "2", "3", "4")}
    finally:
        viewer.close()
    assert isinstance(got["0"], QImage)
    if kind == "function":
        assert got["1"] == BROKEN and got["2"] is None and isinstance(got["3"], QImage)
        assert set(calls) == {"0", "1", "2", "3", "4"}
    elif kind == "list":
        assert all(isinstance(v, QImage) for v in got.values())
    else:
        assert isinstance(got["3"], QImage) and got["1"] is None and got["4"] is None


def test_a_result_opens_as_it_was_scored_and_the_window_shows_its_numbers():
    x, labels = small_set()
    result = irviewer.evaluate(x, labels=labels, rerank="aqe:n=2")
    plain = irviewer.evaluate(x, labels=labels)
    viewer = irviewer.view(result, block=False)
    try:
        window = viewer._window
        assert list(window.opened.methods) == ["embeddings", "embeddings + aqe:n=2"]
        assert viewer.queries == result.queries
        shown = window.evaluation
        assert shown is not None and shown.protocol.name == "metric-learning"
        assert shown.summary["mAP"] == plain.summary["mAP"]
        np.testing.assert_array_equal(shown.per_query["AP"], plain.per_query("AP"))
        reranked = window.opened.evaluation("embeddings + aqe:n=2", "metric-learning")
        assert reranked.summary["mAP"] == result.summary["mAP"]
    finally:
        viewer.close()


def test_the_windows_re_ranking_of_arrays_is_evaluates():
    x, labels = small_set()
    by_evaluate = irviewer.evaluate(x, labels=labels, rerank="aqe:n=2")
    viewer = irviewer.view(x, labels=labels, block=False)
    try:
        window = viewer._window
        window.rerank.start("embeddings", "aqe:n=2", sync=True)
        made = window.opened.evaluation("embeddings + aqe:n=2", "metric-learning")
        assert made.summary["mAP"] == by_evaluate.summary["mAP"]
        np.testing.assert_array_equal(made.per_query["AP"], by_evaluate.per_query("AP"))
    finally:
        viewer.close()


def test_a_wrong_argument_is_refused_before_any_window_opens(qapp):
    x, labels = small_set()
    before = len(qapp.topLevelWidgets())
    for arguments, sentence in (
            ({"select": "nope"}, "select: labels: no query is called 'nope', e.g. 0, 1, 2, "
             "..."),
            ({"results": 5}, "results: 5 results per query; give a whole number from 10 to "
             "200"),
            ({"images": 3}, "images: a int cannot give pictures; give a folder, a list of "
             "paths, a mapping from image name to path, or a function of the image name"),
            ({"images": ["a.png"]}, "images: 1 image for 12 rows; give one per row of the "
             "arrays (the queries' rows, then the gallery's), or a mapping from image name "
             "to path")):
        with pytest.raises(irviewer.ArgumentError) as caught:
            irviewer.view(x, labels=labels, block=False, **arguments)
        assert str(caught.value) == sentence
    qapp.processEvents()
    assert len([w for w in qapp.topLevelWidgets() if w.isVisible()]) == 0
    assert len(qapp.topLevelWidgets()) >= before


def test_without_a_display_a_window_is_refused_and_a_screenshot_is_not(monkeypatch,
                                                                       tmp_path):
    x, labels = small_set()
    monkeypatch.setattr(sys, "platform", "linux")
    for name in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(irviewer.ArgumentError, match=r"^screenshot: there is no display to "
                       r"show a window on"):
        irviewer.view(x, labels=labels)
    assert irviewer.view(x, labels=labels, screenshot=tmp_path / "s.png").closed


def test_a_session_of_data_given_in_memory_is_refused_in_words(tmp_path):
    x, labels = small_set()
    viewer = irviewer.view(x, labels=labels, block=False)
    try:
        window = viewer._window
        assert not window.save_session_as(tmp_path / "s.irv")
        assert not (tmp_path / "s.irv").exists()
        assert window.statusBar().currentMessage().startswith("A session reopens files, and "
                                                              "this data was given from Python")
        kept = window.corrections.controller.path
        assert kept is not None and kept.parent.name == "in-memory"  # the user's data folder
    finally:
        viewer.close()


def test_from_ipython_the_window_stays_live_and_the_prompt_runs_qt():
    """In IPython, view returns at once with Qt's event loop integrated (%gui qt): the
    prompt's input hook runs it while it waits for the user to type."""
    pytest.importorskip("IPython")
    from IPython.terminal.interactiveshell import TerminalInteractiveShell
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    x, labels = small_set()
    shell = TerminalInteractiveShell.instance(simple_prompt=False)
    guard = QTimer()  # were view to block, this would end it: the test fails, never hangs
    guard.setSingleShot(True)
    guard.timeout.connect(lambda: [w.close() for w in QApplication.topLevelWidgets()])
    guard.start(20_000)
    try:
        shell.user_ns.update(x=x, labels=labels)
        done = shell.run_cell("import irviewer\nv = irviewer.view(x, labels=labels, "
                              "select='4')")
        assert done.success, done.error_in_exec
        viewer = shell.user_ns["v"]
        assert not viewer.closed and viewer.selected == "4"
        assert str(shell.active_eventloop).startswith("qt")
        read, write = os.pipe()
        ticks: list[str] = []

        def user_types() -> None:
            ticks.append(viewer.selected or "")
            os.write(write, b"\n")

        QTimer.singleShot(100, lambda: viewer.select("5"))  # events while the prompt waits
        QTimer.singleShot(300, user_types)

        class Prompt:
            def fileno(self) -> int:
                return read

            def input_is_ready(self) -> bool:
                return bool(ticks)

        shell._inputhook(Prompt())
        assert ticks == ["5"]
        viewer.close()
        os.close(read)
        os.close(write)
    finally:
        guard.stop()
        shell.enable_gui(None)
        TerminalInteractiveShell.clear_instance()


def test_from_a_script_view_returns_when_the_window_is_closed(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        "import numpy as np\n"
        "from PySide6.QtCore import QTimer\n"
        "from PySide6.QtWidgets import QApplication\n"
        "import irviewer\n"
        "from irviewer.gui.app import application\n"
        "app = application()\n"
        "def close_all():\n"
        "    print('closing', flush=True)\n"
        "    for w in QApplication.topLevelWidgets():\n"
        "        w.close()\n"
        "QTimer.singleShot(300, close_all)\n"
        "x = np.random.default_rng(0).normal(size=(9, 4))\n"
        "viewer = irviewer.view(x, labels=np.arange(9) % 3)\n"
        "print('returned', viewer.closed)\n")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == ["closing", "returned True"]
