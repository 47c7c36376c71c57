"""The annotator's targets on the real Oxford5k with its real 128-d fc7 descriptors and
errors planted here (``tests/core/oxford_plants.py``: in four landmarks, two true positives
taken out of all five queries' lists and two images of other landmarks put into their good
lists; 16 problems): the first 48 entries of the default listing hold at least 75 % of the
planted problems, none twice, and at least 6 of the 8 added images are in the first 24.
Skipped when the shared samples are absent."""

from __future__ import annotations

import numpy as np
import pytest

from irviewer.core.audit import NEG_POS, POS_NEG, audit
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest
from tests.conftest import shared_sample
from tests.core.oxford_plants import plant, planted_scores


@pytest.fixture(scope="module")
def fc7(tmp_path_factory):
    features = shared_sample("oxford5k-lopq-fc7-features")
    raw = np.fromfile(features / "oxford_features.fvecs", dtype=np.float32).reshape(-1, 129)
    names = (features / "oxford5k_imlist_sorted.txt").read_text().split()
    path = tmp_path_factory.mktemp("fc7") / "fc7.npz"
    np.savez(path, features=raw[:, 1:], names=np.array(names))
    return path


@pytest.mark.parametrize("seed", [0, 1])
def test_planted_errors_come_first_once_each(fc7, tmp_path, seed):
    plants = plant(shared_sample("oxford5k-gt"), tmp_path / "gt", seed)
    opened = open_now(OpenRequest(tmp_path / "gt", descriptors=(fc7,)))
    result = audit(opened.dataset, {k: m.ranking for k, m in opened.methods.items()})
    scores = planted_scores(result.suspects, plants)
    assert scores.repeats == 0
    assert scores.recall >= 0.75, scores
    assert scores.added_early >= 6, scores
    # Each planted problem is one entry naming the landmark's five queries, and its fix
    # corrects all five lists.
    for s in result.suspects:
        if s.kind in (NEG_POS, POS_NEG) and (s.query.rsplit("_", 1)[0], s.item) in plants.all:
            assert len(s.queries) == 5 and len(s.fixes()) == 5
            assert {c.query for c in s.fixes()} == set(s.queries)
    # The order follows the log odds, so scores that round to 1 still have an order.
    orders = [s.order() for s in result.suspects]
    assert orders == sorted(orders, reverse=True)
