"""Re-ranking in the window: the command line's --rerank opens F and "F + SPEC" compared
before ↔ after, with ΔAP equal to `irviewer compare`'s; File ▸ Add a re-ranked method's
dialog builds the SPEC, refuses bad values and SPECs over the budget, and disables what
cannot be re-ranked; the re-ranking runs off the GUI thread with the opening's progress and
Cancel, a newer one making an older one stale; sessions keep re-ranked methods."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtWidgets import QDialogButtonBox

from irviewer.cli import main
from irviewer.cli.viewer import build_viewer_parser
from irviewer.formats.trec import write_trec_run
from irviewer.gui.main_window import MainWindow
from irviewer.gui.rerank.dialog import RerankDialog
from irviewer.gui.results.query_model import DELTA
from irviewer.opening.options import request_from_args
from irviewer.opening.request import OpenRequest, demo_paths, demo_request
from irviewer.opening.session_file import load_session
from tests.gui.method_list import offered, statistics_library  # noqa: F401

MANIFEST, STRONG = demo_paths()
SPEC = "k-reciprocal:k1=4"
RERANKED = f"strong.npz + {SPEC}"


@pytest.fixture
def window(qtbot):
    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    w.show()
    return w


def test_adding_a_descriptor_file_keeps_the_reranked_methods(window):
    # File ▸ Add reopens the dataset with one more file: the re-ranked method stays, the
    # added file opens plain (it used to drop every re-ranked method and setting)
    weak = STRONG.with_name("weak.npz")
    window.open_request(OpenRequest(MANIFEST, (STRONG,), rerank=(SPEC,), ap="trapezoid"),
                        sync=True)
    window.opening.add_methods([weak], sync=True)
    assert offered(window) == ["strong.npz", RERANKED, "weak.npz"]
    assert window.opened.request.ap == "trapezoid"


def test_the_command_line_opens_plain_and_reranked_compared(window, tmp_path):
    args = build_viewer_parser().parse_args([str(MANIFEST), "-d", str(STRONG),
                                             "--rerank", SPEC])
    window.open_request(request_from_args(args), sync=True)
    assert offered(window) == ["strong.npz", RERANKED]
    assert window.bar.method() == "strong.npz"
    assert window.compare_mode.compared() == RERANKED  # before ↔ after at once
    assert window.compare_mode.strips.isVisible()
    out = tmp_path / "shot.png"
    assert main([str(MANIFEST), "-d", str(STRONG), "--rerank", SPEC,
                 "--screenshot", str(out)]) == 0
    assert out.stat().st_size > 0


def test_compare_modes_deltas_are_irviewer_compares(window, tmp_path, capsys):
    out = tmp_path / "cmp.json"
    assert main(["compare", str(MANIFEST), "-d", str(STRONG), "--rerank", SPEC,
                 "--permutations", "200", "--json", str(out)]) == 0
    capsys.readouterr()
    report = json.loads(out.read_text())["comparisons"][0]
    window.open_request(OpenRequest(MANIFEST, (STRONG,), rerank=(SPEC,)), sync=True)
    model = window.queries.model
    names = [q.name for q in window.opened.dataset.queries]
    shown = {names[model.query_of(r)]: v
             for r, v in enumerate(model.column_values(DELTA))}
    cli = {q["name"]: q["delta"] for q in report["queries"]}
    assert shown.keys() == cli.keys()
    for name, delta in cli.items():
        assert shown[name] == pytest.approx(delta, abs=1e-12), name
    assert any(d > 0 for d in cli.values()) and any(d < 0 for d in cli.values())
    line = window.compare_mode.line.text()
    assert f"ΔmAP {100 * report['mean_delta']:+.2f}" in line
    assert (f"<b>{report['wins']}</b> better, <b>{report['losses']}</b> worse, "
            f"<b>{report['ties']}</b> tied") in line


def test_the_strips_rank_tiles_beyond_the_stored_lists_from_the_reranked_rows(window):
    window.open_request(OpenRequest(MANIFEST, (STRONG,), rerank=(SPEC,), k=10), sync=True)
    strips = window.compare_mode.strips
    beyond = 0
    for q in range(window.opened.dataset.n_queries):
        window.inspector.select(q)
        for strip in (strips.left, strips.right):
            assert strip.marks and not any(m.text.startswith("not in") for m in strip.marks)
            beyond += sum(m.other_rank > 10 for m in strip.marks)
    assert beyond > 0


def test_the_dialog_builds_the_spec_from_the_papers_parameters(window):
    window.open_request(demo_request(), sync=True)
    dialog = RerankDialog(window, window.opened, "strong.npz")
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert dialog.method() == "strong.npz" and dialog.spec_text() == "aqe"
    assert ok.isEnabled() and dialog.name.text() == "strong.npz + aqe"
    n = dialog.values["aqe"]["n"]
    assert (n.minimum(), n.maximum(), n.value()) == (0, 1000, 2)  # spec.py's rule
    lam = dialog.values["k-reciprocal"]["lambda"]
    assert (lam.minimum(), lam.maximum(), lam.value()) == (0.0, 1.0, 0.3)
    dialog.steps["dba"].setChecked(True)
    dialog.values["dba"]["k"].setValue(5)
    dialog.steps["k-reciprocal"].setChecked(True)
    lam.setValue(0.5)
    assert dialog.spec_text() == "dba:k=5+aqe+k-reciprocal:lambda=0.5"
    assert dialog.plan is not None and dialog.plan.name == (
        "strong.npz + dba:k=5+aqe+k-reciprocal:lambda=0.5")
    dialog.set_spec("k-reciprocal:k1=7")  # typing a SPEC sets the choices
    assert [n for n, g in dialog.steps.items() if g.isChecked()] == ["k-reciprocal"]
    assert dialog.values["k-reciprocal"]["k1"].value() == 7 and ok.isEnabled()
    dialog.set_method("weak.npz")
    assert dialog.name.text() == "weak.npz + k-reciprocal:k1=7"


def test_the_dialog_refuses_bad_values_and_specs_over_the_budget(window, monkeypatch):
    window.open_request(OpenRequest(MANIFEST, (STRONG,), rerank=("aqe",)), sync=True)
    dialog = RerankDialog(window, window.opened, "strong.npz")
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    dialog.set_spec("aqe:n=-2")
    assert not ok.isEnabled() and dialog.plan is None
    assert "re-ranking: aqe's n must be a whole number from 0 to 1000, not -2" in \
        dialog.note.text()
    dialog.set_spec("aqe")  # open already
    assert not ok.isEnabled() and "strong.npz + aqe is open already" in dialog.note.text()
    dialog.set_spec("")
    assert not ok.isEnabled() and "choose at least one step" in dialog.note.text()
    monkeypatch.setattr("irviewer.core.rerank.chain.BUDGET_MULTIPLY_ADDS", 1e3)
    dialog.set_spec("dba")
    assert not ok.isEnabled()
    assert "needs an all-pairs neighbour search of about" in dialog.note.text()
    assert "over the budget of 1e+03" in dialog.note.text()
    # ... and started anyway (from a script), the refusal is a message box.
    window.rerank.start("strong.npz", "dba", sync=True)
    assert "over the budget of 1e+03" in window.rerank.last_error
    assert offered(window) == ["strong.npz", "strong.npz + aqe"]


def test_what_cannot_be_reranked_is_disabled_saying_why(window, tmp_path):
    window.open_request(demo_request(), sync=True)
    run = tmp_path / "strong.trec"
    write_trec_run(run, window.evaluation)
    window.open_request(OpenRequest(MANIFEST, rankings=(run,)), sync=True)
    action = window.rerank.action
    assert not action.isEnabled()
    assert action.toolTip() == ("strong.trec is a precomputed ranking (TREC run, .npz "
                                "indices, .results): it has no vectors to re-rank.")
    button = window.rerank.button  # Re-rank… beside Method
    assert not button.isEnabled() and button.toolTip() == action.toolTip()
    window.open_request(OpenRequest(MANIFEST, (STRONG,), (run,)), sync=True)
    assert action.isEnabled()
    dialog = RerankDialog(window, window.opened, "strong.trec")
    item = dialog.method_box.model().item(1)
    assert dialog.method_box.itemText(1) == "strong.trec" and not item.isEnabled()
    assert item.toolTip().startswith("strong.trec is a precomputed ranking")
    assert dialog.method() == "strong.npz"  # the shown one cannot be: the first that can


def test_adding_a_reranked_method_shows_it_against_its_plain_one(window, qtbot):
    window.open_request(demo_request(), sync=True)
    window.bar.method_box.setCurrentText("weak.npz")
    stages = []
    window.opening.message.connect(stages.append)
    window.rerank.ask = lambda opened: ("strong.npz", "aqe:n=3")
    window.rerank.choose()  # File ▸ Add a re-ranked method…, answered
    qtbot.waitUntil(lambda: "strong.npz + aqe:n=3" in offered(window), timeout=20000)
    assert offered(window) == ["strong.npz", "strong.npz + aqe:n=3", "weak.npz"]
    assert window.bar.method() == "strong.npz"
    assert window.compare_mode.compared() == "strong.npz + aqe:n=3"
    assert any(s.startswith("Re-ranking strong.npz by aqe:n=3: ") for s in stages)
    assert window.opened.request.reranked == ((0, "aqe:n=3"),)
    # Compare with lists the shown method's own first: its re-ranked one, then the rest.
    box = window.compare_mode.box
    assert [box.itemText(i) for i in range(box.count())][:2] == ["none",
                                                                "strong.npz + aqe:n=3"]
    window.bar.method_box.setCurrentText("strong.npz + aqe:n=3")
    assert [box.itemText(i) for i in range(box.count())][:2] == ["none", "strong.npz"]


def test_cancel_and_a_newer_request_leave_nothing_stale(window, qtbot):
    window.open_request(demo_request(), sync=True)
    window.rerank.start("strong.npz", "dba:k=3")
    assert window.opening.running and window.opening.cancel_button.isVisible()
    assert not window.rerank.action.isEnabled()  # one long job at a time
    window.cancel_opening()  # Esc or Cancel
    assert not window.opening.running
    window.rerank.start("weak.npz", "dba:k=4")
    window.rerank.start("weak.npz", "aqe:n=4")  # the newer one wins
    qtbot.waitUntil(lambda: not window.opening.running, timeout=20000)
    window.rerank.wait()
    qtbot.wait(50)  # results still queued for the GUI thread arrive (and are dropped)
    assert offered(window) == ["strong.npz", "weak.npz", "weak.npz + aqe:n=4"]
    assert window.rerank.action.isEnabled()


def test_sessions_keep_reranked_methods(window, qtbot, tmp_path):
    window.open_request(demo_request(), sync=True)
    window.rerank.start("weak.npz", "dba:k=3+aqe", sync=True)
    window.bar.method_box.setCurrentText("weak.npz + dba:k=3+aqe")
    mean = window.evaluation.summary["mAP"]
    assert window.save_session_as(tmp_path / "work.irv")
    saved = load_session(tmp_path / "work.irv")
    assert saved.reranked == ((1, "dba:k=3+aqe"),)
    assert (saved.active_method, saved.active_rerank) == (1, "dba:k=3+aqe")
    again = MainWindow(top_k=20)
    qtbot.addWidget(again)
    again.open_session(tmp_path / "work.irv", sync=True)
    assert offered(again) == offered(window)
    assert again.bar.method() == "weak.npz + dba:k=3+aqe"
    assert again.evaluation.summary["mAP"] == mean
    np.testing.assert_array_equal(
        again.opened.methods["weak.npz + dba:k=3+aqe"].ranking.top_indices,
        window.opened.methods["weak.npz + dba:k=3+aqe"].ranking.top_indices)
    # A session written before re-ranked methods existed opens as it always did.
    old = json.loads((tmp_path / "work.irv").read_text())
    del old["reranked"], old["active_rerank"]
    (tmp_path / "old.irv").write_text(json.dumps(old))
    third = MainWindow(top_k=20)
    qtbot.addWidget(third)
    third.open_session(tmp_path / "old.irv", sync=True)
    assert offered(third) == ["strong.npz", "weak.npz"] and third.bar.method() == "weak.npz"
