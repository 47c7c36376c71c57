"""The Scores tab's view model: drawn fractions, the slider's range, the threshold's lines."""

from __future__ import annotations

import numpy as np

from irviewer.core.score_distribution import GRID_BINS, _Counts
from irviewer.view.score_view import (
    DRAWN_BINS,
    histograms,
    occupied_steps,
    score_of_step,
    step_of_score,
    tar_html,
    threshold_html,
    threshold_of,
)


def pairs(pos, neg):
    counts = _Counts(len(neg))
    counts.add_positives(np.array(pos, dtype=np.float32))
    counts.add_negatives(np.array([neg], dtype=np.float32), len(neg))
    return counts.result((1e-2, 0.5))


def test_each_class_is_drawn_as_fractions_of_its_own_pairs():
    h = histograms(pairs([0.5, 0.5, 0.9], [0.0] * 97))
    assert len(h.edges) == DRAWN_BINS + 1 and h.edges[0] == -1 and h.edges[-1] == 1
    assert h.positives.sum() == 1 and h.negatives.sum() == 1
    # 0.5 is at the start of bin 96 (width 1/64), 0.9 in bin 121; every negative in bin 64
    assert h.positives[96] == 2 / 3 and h.positives[121] == 1 / 3 and h.negatives[64] == 1


def test_the_threshold_steps_and_scores_are_inverse_and_cover_the_scores():
    for score in (-1.0, -0.25, 0.0, 0.25, 0.999):
        assert score_of_step(step_of_score(score)) == round(score * 1024) / 1024  # steps of 1/1024
        assert threshold_of(step_of_score(score))[1] == score_of_step(step_of_score(score))
    lo, hi = occupied_steps(pairs([0.5], [-0.25, 0.75]), None)
    assert score_of_step(lo) <= -0.25 and score_of_step(hi) > 0.75
    assert occupied_steps(None) == (0, GRID_BINS // 8)


def test_the_threshold_lines_count_the_accepted_pairs():
    # at 0.25: positives 0.5 and 0.9 of three accepted, negatives 0.75 of four accepted
    query = pairs([0.1, 0.5, 0.9], [0.0, 0.2, 0.75, -0.5])
    html = threshold_html(step_of_score(0.25), query, None, "q7")
    assert html == ("Accept <b>score ≥ 0.2500</b><br><b>q7</b>: precision 66.7 % (2 of 3 "
                    "accepted), recall 66.7 % (2 of 3 positives)")


def test_tar_says_no_threshold_when_the_highest_score_is_a_negative():
    # 1 % of 4 negatives allows none, and the highest score (0.95) is a negative
    text = tar_html(pairs([0.5, 0.9], [0.95, 0.0, 0.1, 0.2]))
    assert text.startswith("TAR@FAR=1e-02 <b>0.0 %</b> (no threshold)")
    # 50 % allows two: 0.95 and 0.2 accepted at score >= 0.2, with both positives
    assert "TAR@FAR=5e-01 <b>100.0 %</b> (score ≥ 0.2000)" in text
