"""The method bar: descriptor rows matched by position are said in a banner that names the
Open dialog's field, and its boxes show their whole text."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QComboBox

from irviewer.gui.main_window import MINIMUM_SIZE, MainWindow
from irviewer.opening.request import demo_request


@pytest.fixture
def window(demo_window):
    """The window with the demo open (both descriptor files), shown."""
    return demo_window


def test_rows_matched_by_position_are_said_in_a_banner(window):
    from dataclasses import replace

    assert not window.bar.banner.isVisibleTo(window)
    sentence = ("weak.npz: 176 rows without names were matched by position (gallery in the "
                "dataset's order, then queries); give Row names to match them by name")
    weak = window.opened.methods["weak.npz"]
    window.opened.methods["weak.npz"] = replace(weak, matched_by_position=True,
                                                notes=(sentence,))
    window.bar.method_box.setCurrentText("weak.npz")
    assert window.bar.banner.isVisibleTo(window) and sentence in window.bar.banner.text()
    window.bar.method_box.setCurrentText("strong.npz")
    assert not window.bar.banner.isVisibleTo(window)


def test_a_names_less_descriptor_file_gets_the_banner(qtbot, tmp_path):
    (tmp_path / "set.csv").write_text("image,instance,role\na1.jpg,a,both\na2.jpg,a,gallery\n"
                                      "b1.jpg,b,both\nb2.jpg,b,gallery\n")
    np.save(tmp_path / "d.npy", np.array([[1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9]],
                                         dtype=np.float32))
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    w.open_paths(tmp_path / "set.csv", tmp_path / "d.npy", sync=True)
    assert w.last_error is None, w.last_error
    method = w.opened.methods["d.npy"]
    assert method.matched_by_position
    assert w.bar.banner.isVisibleTo(w) and "by position" in w.bar.banner.text()
    banner = w.bar.banner.text()
    assert "“Row names” in the Open dialog" in banner and "--" not in banner


def test_combo_boxes_show_their_whole_text(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    w.open_request(demo_request(), sync=True)  # filled after they were first shown
    w.resize(*MINIMUM_SIZE)
    qtbot.wait(20)
    bar = w.bar
    for box in (bar.method_box, bar.protocol_box, bar.ap_box, bar.self_box):
        longest = max(box.fontMetrics().horizontalAdvance(box.itemText(i))
                      for i in range(box.count()))
        assert box.width() >= longest + 16, (box.currentText(), box.width(), longest)
        # Offscreen the default policy happens to fit too; the cut boxes were seen on X11
        # when items changed after the first show, which only this policy follows.
        assert box.sizeAdjustPolicy() == QComboBox.SizeAdjustPolicy.AdjustToContents
