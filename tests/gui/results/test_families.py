"""Each benchmark family in the window, as its own files open it: the protocols offered, the
tiles' relevance against the core's, and what the family adds (Oxford's query box and
junk, re-identification's same-camera badge, HPatches' two tasks)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from irviewer.core.evaluation import IGNORED, POSITIVE
from irviewer.gui.main_window import MainWindow
from irviewer.gui.theme import SAME_CAMERA
from irviewer.opening.request import OpenRequest
from tests.formats.test_hpatches import PATCHES
from tests.formats.test_hpatches import write as write_hpatches
from tests.formats.test_oxford import NAMES as OXFORD_NAMES
from tests.formats.test_oxford import write_gt
from tests.formats.test_reid import market


def descriptors(path, names, seed=0):
    """Write random descriptors for ``names``; return the file."""
    rng = np.random.default_rng(seed)
    np.savez(path, features=rng.standard_normal((len(names), 16)).astype(np.float32),
             names=np.array(names))
    return path


def open_window(qtbot, request: OpenRequest) -> MainWindow:
    w = MainWindow(top_k=10)
    qtbot.addWidget(w)
    w.show()
    w.open_request(request, sync=True)
    assert w.last_error is None, w.last_error
    return w


def assert_tiles_match_the_core(w: MainWindow) -> None:
    for q in range(w.opened.dataset.n_queries):
        w.inspector.show_query(q)
        shown = np.array([t.index for t in w.results.grid.tiles])
        core = w.evaluation.relevance(q, shown)
        display = np.array([IGNORED if t.relevance == SAME_CAMERA else t.relevance
                            for t in w.results.grid.tiles])
        assert display.tolist() == core.tolist()


def test_oxford_gt_files_with_images_show_the_query_box(qtbot, tmp_path):
    gt = write_gt(tmp_path / "gt_files")
    images = tmp_path / "jpg"
    images.mkdir()
    for name in OXFORD_NAMES:
        Image.new("RGB", (640, 480), (90, 120, 150)).save(images / f"{name}.jpg")
    d = descriptors(tmp_path / "d.npz", OXFORD_NAMES)
    w = open_window(qtbot, OpenRequest(gt, (d,), options=_images(images)))
    assert [w.bar.protocol_box.itemText(i) for i in range(w.bar.protocol_box.count())] == ["oxford"]
    assert "trapezoid AP" in w.bar.summary.text()
    w.select_query("tower_1")
    pixmap = w.results.query_image.pixmap().toImage()
    f = pixmap.width() / 640
    box_pixel = pixmap.pixelColor(int(10.5 * f) + 1, int(200 * f))  # the box's left edge
    assert box_pixel.name() == "#0072b2"
    w.results.ignored_box.setChecked(True)
    shown = {t.name: t.relevance for t in w.results.grid.tiles}
    assert shown["tower_000001"] == IGNORED  # junk, shown where it ranked
    assert_tiles_match_the_core(w)


def _images(folder):
    from irviewer.formats.base import ReadOptions

    return ReadOptions(images=folder)


def test_reid_marks_same_camera_items_with_their_own_badge(qtbot, tmp_path):
    root = market(tmp_path)
    from irviewer.formats.reid import read_reid

    ds = read_reid(root)
    d = descriptors(tmp_path / "d.npz", [*ds.gallery, *(q.name for q in ds.queries)])
    w = open_window(qtbot, OpenRequest(root, (d,)))
    assert w.bar.protocol_box.currentText() == "market1501"
    assert "CMC@1" in w.bar.summary.text() and "mINP" in w.bar.summary.text()
    assert "same camera" in w.results.legend.text()
    w.results.ignored_box.setChecked(True)
    w.select_query("0002_c1s1_000200_00")
    badges = {t.name: t.badge for t in w.results.grid.tiles}
    assert badges["0002_c1s1_000201_01"] == SAME_CAMERA  # same id, camera 1
    assert badges["0002_c4s1_000203_01"] == POSITIVE
    assert "-1_c1s1_000001_00" not in badges  # id -1 is removed from every ranking
    assert_tiles_match_the_core(w)


@pytest.mark.parametrize("protocol", ["hpatches-patch", "hpatches-image"])
def test_hpatches_benchmark_offers_both_tasks(qtbot, tmp_path, protocol):
    bench = write_hpatches(tmp_path)
    d = descriptors(tmp_path / "d.npz", list(PATCHES))
    w = open_window(qtbot, OpenRequest(bench, (d,)))
    assert [w.bar.protocol_box.itemText(i) for i in range(2)] == ["hpatches-patch",
                                                               "hpatches-image"]
    w.bar.protocol_box.setCurrentText(protocol)
    assert w.evaluation.protocol.name == protocol
    assert "same camera" not in w.results.legend.text()
    assert_tiles_match_the_core(w)


def test_hpatches_task_lists_open_with_three_noise_levels(qtbot, tmp_path):
    from tests.formats.test_hpatches_tasks import hand_case

    tasks, descriptors = hand_case(tmp_path)
    w = open_window(qtbot, OpenRequest(tasks, (descriptors,)))
    assert [w.bar.protocol_box.itemText(i) for i in range(3)] == [
        "hpatches-retrieval-easy", "hpatches-retrieval-hard", "hpatches-retrieval-tough"]
    names = [t.name for t in w.results.grid.tiles]
    assert names == ["v_a.e1.0", "i_b.ref.0", "v_a.e2.0", "i_b.ref.1", "v_a.e3.0",
                     "v_a.e4.0", "v_a.e5.0"]  # its own patches and the distractors only
    assert_tiles_match_the_core(w)
    w.bar.protocol_box.setCurrentText("hpatches-retrieval-tough")
    assert [t.relevance for t in w.results.grid.tiles[:5]] == [POSITIVE] * 5
