"""The annotator's queue on the real Oxford5k with its real 128-d fc7 descriptors and errors
planted here (``tests/core/oxford_plants.py``: in four landmarks, two true positives taken
out of all five queries' lists and two images put into their good lists — of other landmarks,
or unrelated with three images moved from one landmark's lists to another's and one query's
list differing elsewhere): one entry per problem, naming every query whose list carries the
label, a moved image one entry naming both landmarks, and the planted problems early (the
levels this descriptor reaches, ``docs/audit.md`` (b); the issue's targets and the ceiling
are in its tables). Skipped when the shared samples are absent."""

from __future__ import annotations

import numpy as np
import pytest

from irviewer.core.audit import NEG_POS, POS_NEG, WRONG_LIST, audit
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest
from tests.conftest import shared_sample
from tests.core.oxford_plants import ANNOTATOR, plant, planted_scores, problems


@pytest.fixture(scope="module")
def fc7(tmp_path_factory):
    features = shared_sample("oxford5k-lopq-fc7-features")
    raw = np.fromfile(features / "oxford_features.fvecs", dtype=np.float32).reshape(-1, 129)
    names = (features / "oxford5k_imlist_sorted.txt").read_text().split()
    path = tmp_path_factory.mktemp("fc7") / "fc7.npz"
    np.savez(path, features=raw[:, 1:], names=np.array(names))
    return path, names


@pytest.mark.parametrize(("seed", "kinds", "recall", "added", "named_both"), [
    (0, {}, 0.6, 5, 0), (1, {}, 0.65, 6, 0), (10, ANNOTATOR, 0.6, 8, 0),
    (11, ANNOTATOR, 0.6, 4, 2), (12, ANNOTATOR, 0.65, 6, 1)])
def test_planted_errors_come_early_once_each(fc7, tmp_path, seed, kinds, recall, added,
                                             named_both):
    path, names = fc7
    plants = plant(shared_sample("oxford5k-gt"), tmp_path / "gt", seed, names=names, **kinds)
    opened = open_now(OpenRequest(tmp_path / "gt", descriptors=(path,)))
    ds = opened.dataset
    result = audit(ds, {k: m.ranking for k, m in opened.methods.items()})
    scores = planted_scores(result.suspects, plants)
    assert scores.repeats == 0  # no problem twice
    assert scores.recall >= recall and scores.added_early >= added, scores
    # Every pair entry names every query whose list carries its label, and its fix corrects
    # them all.
    for s in result.suspects[:48]:
        if s.kind not in (NEG_POS, POS_NEG, WRONG_LIST):
            continue
        g = ds.gallery_index()[s.item]
        for landmark in {q.rsplit("_", 1)[0] for q in s.queries}:
            carrying = {f"{landmark}_{i}" for i in range(1, 6)
                        if g not in ds.queries[ds.query_by_name(f"{landmark}_{i}")]
                        .group("junk").tolist()}
            assert carrying <= set(s.queries), (s.item, s.queries)
        assert {c.query for c in s.fixes()} == set(s.queries)
    # A moved image is never half a problem: each entry about it names both landmarks.
    moved = {x: {(a, x), (b, x)} for a, b, x in plants.moved}
    for s in result.suspects[:100]:
        if s.item in moved and s.query is not None:
            assert s.kind == WRONG_LIST and problems(s) == moved[s.item]
    assert scores.moved >= named_both
    # The order follows the log odds, so scores that round to 1 still have an order.
    orders = [s.order() for s in result.suspects]
    assert orders == sorted(orders, reverse=True)
