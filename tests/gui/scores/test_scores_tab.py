"""The Scores tab: counted only when looked at, the set's and the query's counts equal the
core's, the threshold's precision and recall, and a ranking read from a file says why it
has no distribution."""

from __future__ import annotations

import numpy as np

from irviewer.core.score_distribution import pair_scores, query_pair_scores
from irviewer.formats.trec import write_trec_run
from irviewer.gui.main_window import MainWindow
from irviewer.opening.opener import open_now
from irviewer.opening.request import demo_request
from irviewer.view.score_view import step_of_score, threshold_of


def looked_at(demo_window, qtbot):
    demo_window.scores.show_tab()
    qtbot.waitUntil(lambda: demo_window.scores.whole is not None, timeout=20_000)
    return demo_window.scores


def test_nothing_is_counted_until_the_tab_is_looked_at(demo_window, qtbot):
    assert demo_window.scores.whole is None and demo_window.scores.counted_for is None
    scores = looked_at(demo_window, qtbot)
    core = pair_scores(demo_window.evaluation)
    np.testing.assert_array_equal(scores.whole.negatives, core.negatives)
    np.testing.assert_array_equal(scores.whole.positive_scores, core.positive_scores)
    q = demo_window.current
    np.testing.assert_array_equal(scores.query.negatives,
                                  query_pair_scores(demo_window.evaluation, q).negatives)
    assert "TAR@FAR=1e-04" in scores.panel.tar.text()
    assert "3,234 negative" in scores.panel.pairs.text()


def test_the_threshold_gives_precision_and_recall_of_the_query_and_the_set(demo_window, qtbot):
    scores = looked_at(demo_window, qtbot)
    scores.panel.slider.setValue(step_of_score(0.25))  # as the user moves it
    i, t = threshold_of(scores.step)
    assert t == 0.25
    row = demo_window.evaluation.ranking.score_row(demo_window.current)
    q = scores.query
    tp, fp = q.accepted(i)
    text = scores.panel.threshold.text()
    assert "score ≥ 0.2500" in text
    assert f"{tp:,} of {tp + fp:,} accepted" in text
    whole_tp, whole_fp = scores.whole.accepted(i)
    assert f"{whole_tp:,} of {whole_tp + whole_fp:,} accepted" in text
    assert tp + fp == int((row >= 0.25).sum())  # every pair of the query is in one class
    assert abs(scores.panel.line.value() - 0.25) < 1e-9


def test_another_query_recounts_the_query_only(demo_window, qtbot):
    scores = looked_at(demo_window, qtbot)
    whole = scores.whole
    demo_window.select_query(demo_window.opened.dataset.queries[3].name)
    assert scores.whole is whole
    np.testing.assert_array_equal(scores.query.negatives,
                                  query_pair_scores(demo_window.evaluation, 3).negatives)


def test_another_method_is_counted_again(demo_window, qtbot):
    scores = looked_at(demo_window, qtbot)
    before = scores.whole
    demo_window.bar.method_box.setCurrentText("weak.npz")
    qtbot.waitUntil(lambda: scores.whole is not None and scores.whole is not before,
                    timeout=20_000)
    np.testing.assert_array_equal(scores.whole.negatives,
                                  pair_scores(demo_window.evaluation).negatives)


def test_a_ranking_read_from_a_file_says_why_there_is_no_distribution(qtbot, tmp_path):
    manifest = demo_request().dataset
    run = tmp_path / "run.txt"  # the demo's own lists, as a TREC run
    write_trec_run(run, open_now(demo_request()).evaluation("strong.npz", "instance"))
    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    w.show()
    w.open_paths(manifest, run, sync=True)
    w.scores.show_tab()
    qtbot.waitUntil(lambda: "listed results only" in w.scores.panel.status.text(),
                    timeout=20_000)
    assert w.scores.whole is None and w.scores.query is None
