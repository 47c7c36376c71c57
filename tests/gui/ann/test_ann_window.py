"""Approximate search in the window: --ann on the command line opens F and "F + SETTING"
compared exact ↔ approximate; File ▸ Add an approximate index method's dialog checks the
SPEC, the search runs off the GUI thread and adds a method per setting, compared with the
exact one, a sweep opens its figure; a bad index file or engine is one sentence in a box."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtWidgets import QDialogButtonBox

from irviewer.cli.viewer import build_viewer_parser
from irviewer.gui.ann.dialogs import AnnDialog
from irviewer.gui.main_window import MainWindow
from irviewer.gui.results.query_model import DELTA
from irviewer.opening.options import request_from_args
from irviewer.opening.request import OpenRequest, demo_paths
from irviewer.opening.session_file import load_session
from tests.gui.method_list import offered, statistics_library  # noqa: F401

pytest.importorskip("faiss")
MANIFEST, STRONG = demo_paths()


@pytest.fixture
def window(qtbot):
    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    w.show()
    return w


def test_the_command_line_opens_exact_and_approximate_compared(window):
    args = build_viewer_parser().parse_args([str(MANIFEST), "-d", str(STRONG),
                                             "--ann", "IVF4,Flat:nprobe=1"])
    window.open_request(request_from_args(args), sync=True)
    ivf = "strong.npz + IVF4,Flat:nprobe=1"
    assert offered(window) == ["strong.npz", ivf]
    assert window.bar.method() == "strong.npz"
    assert window.compare_mode.compared() == ivf  # exact ↔ approximate at once
    assert window.compare_mode.strips.isVisible()


def test_compare_mode_with_an_exhaustive_index_shows_no_difference(window, tmp_path):
    """The exact method compared with FAISS Flat at depth 30 of 176 gallery images: both
    lists cut at 30, ΔAP 0 on every query as eval's ann block says; the summary line says
    at which depth, with the exact method's whole-ranking mAP beside it."""
    from tests.ann_cases import clustered_set

    manifest, npz = clustered_set(tmp_path / "set", n_instances=16, per=10, dim=24,
                                  spread=1.0)
    args = build_viewer_parser().parse_args([str(manifest), "-d", str(npz), "--ann", "Flat",
                                             "--depth", "30"])
    window.open_request(request_from_args(args), sync=True)
    assert window.compare_mode.compared() == "desc.npz + Flat"
    delta = window.queries.model.column_values(DELTA)
    assert np.all(delta == 0.0)
    whole = window.opened.evaluation("desc.npz", "instance").summary["mAP"]
    cut = window.opened.evaluation("desc.npz", "instance", depth=30).summary["mAP"]
    assert cut < whole
    line = window.compare_mode.line.text()
    assert (f"both on their first 30 results (a positive past 30 missed): desc.npz mAP "
            f"{100 * cut:.2f} there, mAP {100 * whole:.2f} on its whole ranking") in line


def test_adding_a_sweep_adds_a_method_per_setting_and_its_figure(window, qtbot):
    window.open_request(OpenRequest(MANIFEST, (STRONG,)), sync=True)
    ui = window.ann
    assert ui.action.isEnabled()
    ui.ask = lambda opened: ("strong.npz", "IVF4,Flat:nprobe=1,4")
    ui.choose()
    qtbot.waitUntil(lambda: len(offered(window)) == 3, timeout=60_000)
    one, four = "strong.npz + IVF4,Flat:nprobe=1", "strong.npz + IVF4,Flat:nprobe=4"
    assert offered(window) == ["strong.npz", one, four]
    assert window.compare_mode.compared() == one
    ev = window.opened.evaluation(one, "instance")
    exact = window.opened.evaluation("strong.npz", "instance")
    assert ev.summary["mAP"] < exact.summary["mAP"]  # one list of four probed loses
    assert window.opened.evaluation(four, "instance").summary["mAP"] == pytest.approx(
        exact.summary["mAP"])  # every list probed: exhaustive
    sweep = ui.sweep
    assert sweep is not None and sweep.isVisible()
    settings = [row[0] for row in sweep.figure.view.rows]
    assert settings == ["IVF4,Flat:nprobe=1", "IVF4,Flat:nprobe=4"]
    image = sweep.figure.grab().toImage()
    assert image.width() > 300 and not image.isNull()
    sweep.close()


def test_the_dialog_checks_the_spec(window, qtbot):
    window.open_request(OpenRequest(MANIFEST, (STRONG,)), sync=True)
    dialog = AnnDialog(window, window.opened, "strong.npz")
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert ok.isEnabled() and dialog.plan is not None
    assert "4 settings" in dialog.note.text()
    dialog.spec.setText("IVF4,Flat:nprobe=x")
    assert not ok.isEnabled() and dialog.plan is None
    assert dialog.note.text() == "approximate index IVF4,Flat:nprobe=x: nprobe=x is not a number"


def test_a_bad_index_file_is_one_sentence_in_a_box(window, tmp_path):
    window.open_request(OpenRequest(MANIFEST, (STRONG,)), sync=True)
    import faiss

    whole = tmp_path / "whole.faiss"
    index = faiss.IndexFlatIP(4096)
    index.add(np.ones((154, 4096), dtype=np.float32))
    faiss.write_index(index, str(whole))
    bad = tmp_path / "broken.faiss"
    bad.write_bytes(whole.read_bytes()[:100_000])  # truncated
    window.ann.start("strong.npz", str(bad), sync=True)
    assert window.ann.last_error is not None
    assert window.ann.last_error.startswith("approximate index broken.faiss: FAISS cannot "
                                            "read this index file")
    assert "\n" not in window.ann.last_error
    assert offered(window) == ["strong.npz"]


def test_an_unreachable_engine_is_one_sentence_in_a_box(window):
    pytest.importorskip("pymilvus")
    window.open_request(OpenRequest(MANIFEST, (STRONG,)), sync=True)
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    window.ann.start_engine("strong.npz", f"http://127.0.0.1:{port}", "gallery", sync=True)
    assert window.ann.last_error is not None
    assert window.ann.last_error.startswith(
        f"vector engine http://127.0.0.1:{port}: the engine cannot be reached")


def test_a_session_keeps_approximate_methods_and_the_one_shown(window, qtbot, tmp_path):
    """Saved while an approximate method is shown and compared with the exact one: the
    session names the SPEC by its file, reopening searches again and shows the same
    method, compared as before, with the same lists; a session of an older irviewer,
    without "approximate", opens the exact method alone."""
    window.open_request(OpenRequest(MANIFEST, (STRONG,)), sync=True)
    window.ann.start("strong.npz", "IVF4,Flat:nprobe=1,2", sync=True)
    one, two = "strong.npz + IVF4,Flat:nprobe=1", "strong.npz + IVF4,Flat:nprobe=2"
    window.bar.method_box.setCurrentText(two)
    window.compare_mode.box.setCurrentText("strong.npz")
    assert window.save_session_as(tmp_path / "work.irv")
    saved = load_session(tmp_path / "work.irv")
    assert saved.approximate == ((0, "IVF4,Flat:nprobe=1,2"),)
    assert (saved.active_method, saved.active_rerank) == (0, "IVF4,Flat:nprobe=2")
    again = MainWindow(top_k=20)
    qtbot.addWidget(again)
    again.open_session(tmp_path / "work.irv", sync=True)
    assert offered(again) == ["strong.npz", one, two]
    assert again.bar.method() == two and again.compare_mode.compared() == "strong.npz"
    for name in (one, two):
        np.testing.assert_array_equal(again.opened.methods[name].ranking.top_indices,
                                      window.opened.methods[name].ranking.top_indices)
    old = json.loads((tmp_path / "work.irv").read_text())
    del old["approximate"]
    (tmp_path / "old.irv").write_text(json.dumps(old))
    third = MainWindow(top_k=20)
    qtbot.addWidget(third)
    third.open_session(tmp_path / "old.irv", sync=True)
    assert offered(third) == ["strong.npz"] and third.bar.method() == "strong.npz"


def test_a_session_whose_index_file_is_gone_opens_and_says_so(window, qtbot, tmp_path):
    import faiss

    window.open_request(OpenRequest(MANIFEST, (STRONG,)), sync=True)
    gallery = window.opened.methods["strong.npz"].ranking.descriptors
    index = faiss.IndexFlatIP(gallery.dim)
    index.add(np.ascontiguousarray(gallery.gallery, dtype=np.float32))
    faiss.write_index(index, str(tmp_path / "g.faiss"))
    window.ann.start("strong.npz", str(tmp_path / "g.faiss"), sync=True)
    assert offered(window) == ["strong.npz", "strong.npz + g.faiss"]
    assert window.save_session_as(tmp_path / "work.irv")
    (tmp_path / "g.faiss").unlink()
    again = MainWindow(top_k=20)
    qtbot.addWidget(again)
    again.open_session(tmp_path / "work.irv", sync=True)
    assert offered(again) == ["strong.npz"] and again.bar.method() == "strong.npz"
    assert again.last_error is not None
    assert again.last_error.startswith("strong.npz: the approximate method ")
    assert "g.faiss: no such index file); put its index file back" in again.last_error
    # what the window would save now still names it, for when the file is back
    assert again.sessions.current().approximate == ((0, str(tmp_path / "g.faiss")),)


def test_a_session_keeps_the_vector_engine_and_its_method_shown(window, qtbot, tmp_path):
    """Opened with a Milvus Lite collection of the demo's gallery (as File ▸ Open's engine
    fields or --engine give), the engine's method shown: the session keeps the engine (a
    Lite file by its absolute path) and reopening asks it again and shows that method."""
    demo_gallery_in_milvus(tmp_path / "g.db")
    request = OpenRequest(MANIFEST, (STRONG,), engine=str(tmp_path / "g.db"),
                          collection="paintings")
    window.open_request(request, sync=True)
    engine = "strong.npz + milvus:paintings"
    assert offered(window) == ["strong.npz", engine]
    window.bar.method_box.setCurrentText(engine)
    assert window.save_session_as(tmp_path / "work.irv")
    saved = load_session(tmp_path / "work.irv")
    assert saved.engine == (str(tmp_path / "g.db"), "paintings", None)
    assert (saved.active_method, saved.active_rerank) == (0, "milvus:paintings")
    again = MainWindow(top_k=20)
    qtbot.addWidget(again)
    again.open_session(tmp_path / "work.irv", sync=True)
    assert offered(again) == offered(window) and again.bar.method() == engine
    np.testing.assert_array_equal(again.opened.methods[engine].ranking.top_indices,
                                  window.opened.methods[engine].ranking.top_indices)
    # added in the window (File ▸ Add an engine method…), it is kept as that file's
    third = MainWindow(top_k=20)
    qtbot.addWidget(third)
    third.open_request(OpenRequest(MANIFEST, (STRONG,)), sync=True)
    third.ann.start_engine("strong.npz", str(tmp_path / "g.db"), "paintings", sync=True)
    assert offered(third) == offered(window)
    assert third.save_session_as(tmp_path / "added.irv")
    added = load_session(tmp_path / "added.irv")  # the engine of that one file
    assert added.engine is None and added.engines == ((0, saved.engine),)
    fourth = MainWindow(top_k=20)
    qtbot.addWidget(fourth)
    fourth.open_session(tmp_path / "added.irv", sync=True)
    assert offered(fourth) == offered(window)


def demo_gallery_in_milvus(db) -> tuple[list[str], np.ndarray, set[str]]:
    """Write the demo's gallery rows of the strong descriptors to the Milvus Lite
    collection "paintings" in ``db``; return (every row's name, every row, the gallery's
    names). Skips without the Milvus client."""
    pytest.importorskip("pymilvus")
    pytest.importorskip("milvus_lite")
    from irviewer.opening.opener import open_now
    from tests.ann_cases import milvus_collection, unit

    with np.load(STRONG) as z:
        names, features = [str(n) for n in z["names"]], z["features"]
    gallery = set(open_now(OpenRequest(MANIFEST, (STRONG,))).dataset.gallery)
    rows = [i for i, n in enumerate(names) if n in gallery]
    milvus_collection(str(db), "paintings", [names[i] for i in rows], unit(features[rows]))
    return names, features, gallery


def test_a_queries_only_file_opens_with_its_gallery_in_the_engine(window, tmp_path):
    """File ▸ Open's engine fields on a descriptor file of the queries alone: the window
    opens the engine's method only (no exact ranking to compare with) and shows it."""
    names, features, gallery = demo_gallery_in_milvus(tmp_path / "g.db")
    queries = [i for i, n in enumerate(names) if n not in gallery]
    np.savez(tmp_path / "queries.npz", names=np.array([names[i] for i in queries]),
             features=features[queries])
    window.open_request(OpenRequest(MANIFEST, (tmp_path / "queries.npz",),
                                    engine=str(tmp_path / "g.db"), collection="paintings"),
                        sync=True)
    assert offered(window) == ["queries.npz + milvus:paintings"]
    assert window.bar.method() == "queries.npz + milvus:paintings"
    from irviewer.opening.opener import open_now

    exact = open_now(OpenRequest(MANIFEST, (STRONG,)))
    ev = exact.evaluation("strong.npz", exact.protocols[0])
    assert window.evaluation.summary["mP@1"] == ev.summary["mP@1"]  # a FLAT collection
