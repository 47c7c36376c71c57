"""What the window says where a benchmark scores answers (DISC21) or splits its queries by
Usage (Google Landmarks v2): a query without a copy is described by its answers, not as
skipped; the summary bar counts queries in the family's words and prints positions and a
score threshold as they are, not in percent; the dataset's curve of a copy-detection
evaluation is microAP's."""

from __future__ import annotations

import numpy as np
import pytest

from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import get_protocol
from irviewer.formats.disc21 import read_disc21_predictions
from irviewer.formats.gldv2 import read_gldv2_submission
from irviewer.formats.registry import read_dataset
from irviewer.view.answers_view import counts_words, left_out_words
from irviewer.view.mean_pr import MeanPR, curve_words
from irviewer.view.result_list import query_header, result_list
from irviewer.view.summary import summary


@pytest.fixture
def disc21(tmp_path):
    gt = tmp_path / "gt.csv"
    gt.write_text("query_id,reference_id\nQ1,R1\nQ2,\nQ3,\n", encoding="utf-8")
    p = tmp_path / "p.csv"
    p.write_text("Q1,R1,0.99\nQ2,R5,0.95\nQ2,R1,0.2\nQ1,R5,0.1\n", encoding="utf-8")
    ds = read_dataset(gt)
    ranking, _ = read_disc21_predictions(p, ds)
    return evaluate(ds, ranking, get_protocol("disc21"))


def test_a_query_without_a_copy_is_told_by_its_answers(disc21):
    assert left_out_words(disc21, 1) == (
        "<b>no copy</b> among the references &nbsp; 2 answers, the best at score <b>0.95</b>"
        " (below the 90 %-precision threshold 0.99): false positives in microAP")
    assert left_out_words(disc21, 2) == ("<b>no copy</b> among the references: no answer, so "
                                         "nothing counts against microAP")
    assert query_header(disc21, 1).metrics == left_out_words(disc21, 1)
    with_copy = query_header(disc21, 0).metrics
    assert "1 positives &nbsp; 2 answers, the best at score <b>0.99</b> (at or above" in with_copy
    tiles = result_list(disc21, 1, 10, False).tiles
    assert [(t.name, t.rank, t.score) for t in tiles] == [("R5", 1, 0.95), ("R1", 2, 0.2)]


def test_the_summary_bar_leads_with_microap_and_counts_queries_with_a_copy(disc21):
    bar = summary(disc21)
    assert [k for k, _ in bar.metrics][:2] == ["microAP", "recall@P90"]
    html = bar.html()
    assert "<b>microAP</b> 100.00" in html and "1 queries with a copy, 2 without" in html
    assert "<b>threshold@P90</b> 0.99 " in html  # a score, not a percentage
    assert "microAP: one number over all pairs, not a mean over queries" in html


def test_the_dataset_curve_of_copy_detection_is_microaps(disc21):
    recall, precision = MeanPR().curve(disc21)
    # Q1-R1 (true) first, then the false ones: the one true pair at precision 1
    np.testing.assert_allclose(recall, [0.0, 1.0])
    np.testing.assert_allclose(precision, [1.0, 1.0])
    assert curve_words(disc21) == "every predicted pair (microAP's curve)"


def test_a_google_landmarks_query_of_the_other_usage_and_the_positions(tmp_path):
    sol = tmp_path / "sol.csv"
    sol.write_text("id,images,Usage\nt1,a,Public\nt2,b,Private\n", encoding="utf-8")
    sub = tmp_path / "sub.csv"
    sub.write_text("id,images\nt1,x a\nt2,b\n", encoding="utf-8")
    ds = read_dataset(sol)
    ranking, _ = read_gldv2_submission(sub, ds)
    ev = evaluate(ds, ranking, get_protocol("gldv2-public"))
    assert left_out_words(ev, 1) == ("skipped: a test image of another Usage: scored under "
                                     "gldv2-private")
    html = summary(ev).html()
    assert "<b>median_position</b> 2.00" in html and "1 evaluated, 1 of another Usage" in html
    assert counts_words(get_protocol("instance"), 3, 1) == "3 evaluated, 1 skipped"
