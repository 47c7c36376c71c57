"""What the window shows of metric learning's protocols: the summary bar's Recall@1 headline,
MAP@R and the next Recall@K, and a query's AP@R in its header."""

from __future__ import annotations

import numpy as np

from irviewer.core.evaluation import evaluate
from irviewer.core.label_sets import leave_one_out_dataset, query_gallery_dataset
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import rank
from irviewer.view.result_list import query_header
from irviewer.view.summary import summary, summary_keys
from tests.core.helpers import aligned


def test_the_summary_bar_leads_with_recall_at_1():
    assert summary_keys(get_protocol("sop")) == ("Recall@1", "mAP", "mP@1", "mAP@R",
                                                 "Recall@10")
    assert summary_keys(get_protocol("metric-learning")) == ("Recall@1", "mAP", "mP@1",
                                                             "mAP@R", "Recall@2")
    assert summary_keys(get_protocol("inshop")) == ("Recall@1", "mAP", "mP@1", "Recall@10")


def test_a_leave_one_out_query_header_gives_its_ap_at_r():
    """Query 0 (label a) ranks 2 (b), 1 (a), 3 (b): R = 1, no positive in the first result,
    AP@R 0; its finite-sum AP is 1/2."""
    angles = np.radians([0, 40, 20, 60])
    x = np.column_stack([np.cos(angles), np.sin(angles)]).astype(np.float32)
    d = leave_one_out_dataset(["a", "a", "b", "b"])
    ev = evaluate(d, rank(aligned(x, x), d), get_protocol("metric-learning"))
    header = query_header(ev, 0).metrics
    assert header.startswith("AP <b>50.0</b> &nbsp; AP@R <b>0.0</b> &nbsp; P@1 <b>0</b>")
    s = summary(ev)
    assert s.headline == "Recall@1" and s.html().startswith(
        '<span style="font-size:large"><b>Recall@1</b>')
    g = query_gallery_dataset(["a"], ["b", "a"])
    ev = evaluate(g, rank(aligned(x[:1], x[2:0:-1]), g), get_protocol("inshop"))
    assert "AP@R" not in query_header(ev, 0).metrics
