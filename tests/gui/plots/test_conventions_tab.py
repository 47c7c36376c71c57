"""The Conventions tab: the shown ranking under every convention, computed when the tab is
looked at, its rows those of irviewer.core.conventions (the protocol's own in bold)."""

from __future__ import annotations

from irviewer.core.conventions import all_conventions
from irviewer.gui.main_window import MainWindow
from irviewer.opening.request import demo_request


def test_the_tab_shows_every_convention_when_looked_at(qtbot):
    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    w.show()
    w.open_request(demo_request(), sync=True)
    table = w.plots.conventions
    assert table.model.rowCount() == 0  # not computed while another tab is shown
    w.plots.overview.setCurrentIndex(w.plots.conventions_tab)
    rows = all_conventions(w.inspector.evaluation)
    assert table.model.rowCount() == len(rows)
    for i, row in enumerate(rows):
        assert table.model.item(i, 0).text() == f"{100 * row.mean:.2f}"
        assert table.model.item(i, 2).font().bold() == row.own
    own = [i for i, row in enumerate(rows) if row.own and row.metric == "AP"]
    assert table.model.item(own[0], 2).text().startswith("★ finite-sum")
    w.inspector.bar.set_choice(w.inspector.choice()[0], "instance", "trapezoid", None)
    rows = all_conventions(w.inspector.evaluation)  # the tab follows the shown convention
    own = [i for i, row in enumerate(rows) if row.own and row.metric == "AP"]
    assert table.model.item(own[0], 2).text().startswith("★ trapezoid")
