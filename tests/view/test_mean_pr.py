"""The mean PR curve kept up to date after corrections equals the full mean (float rounding
aside), and is recomputed in full for another evaluation."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irviewer.core.corrections import Correction, CorrectionLog, NothingToChangeError
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest
from irviewer.view.mean_pr import MeanPR
from tests.corrections_cases import make_case


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 10_000),
                          st.sampled_from(["good", "ok", "junk", "negative"])),
                min_size=1, max_size=5))
def test_incremental_mean_equals_the_full_mean(tmp_path_factory, picks):
    case = make_case("oxford", tmp_path_factory.mktemp("ox"), seed=3)
    opened = open_now(OpenRequest(case.dataset, (case.descriptors,), options=case.options))
    method, protocol = opened.first.name, opened.protocols[0]
    tracker = MeanPR()
    tracker.update(opened.evaluation(method, protocol))
    log = CorrectionLog(opened.dataset)
    ds = opened.dataset
    for qi, gi, label in picks:
        q, g = qi % ds.n_queries, gi % ds.n_gallery
        try:
            changed = log.push(Correction(ds.queries[q].name, ds.gallery[g], label))
        except NothingToChangeError:  # the pair already has that label: nothing to re-score
            continue
        opened.update_ground_truth(log.dataset, changed.tolist())
        ev = opened.evaluation(method, protocol)
        tracker.update(ev, changed.tolist())
        levels, full = ev.mean_pr()
        got_levels, got = tracker.curve(ev)
        np.testing.assert_array_equal(got_levels, levels)
        np.testing.assert_allclose(got, full, rtol=0, atol=1e-12)


def test_another_evaluation_is_computed_in_full(tmp_path):
    case = make_case("holidays", tmp_path, seed=1)
    opened = open_now(OpenRequest(case.dataset, (case.descriptors,), options=case.options))
    tracker = MeanPR()
    a = opened.evaluation(opened.first.name, opened.protocols[0])
    b = opened.evaluation(opened.first.name, opened.protocols[0], ap="finite", self_match="keep")
    np.testing.assert_allclose(tracker.curve(a)[1], a.mean_pr()[1], atol=1e-12)
    tracker.update(b, [0])  # another protocol: "changed" cannot apply, so in full
    np.testing.assert_allclose(tracker.curve(b)[1], b.mean_pr()[1], atol=1e-12)
