"""Ranked lists as CSV: the hand case's rows, the same lists as the TREC run, one query."""

from __future__ import annotations

import csv

import numpy as np

from irviewer.core.evaluation import evaluate
from irviewer.core.ranking import rank
from irviewer.formats.ranked_csv import COLUMNS, write_ranked_csv
from irviewer.formats.trec import write_trec_run
from tests.formats.test_trec import JUNK, hand_case


def rows(path):
    with path.open(newline="") as f:
        return list(csv.reader(f))


def test_hand_checked_rows(tmp_path):
    ds, vectors = hand_case()
    ev = evaluate(ds, rank(vectors, ds, k=2), JUNK)
    # qa without its junk g0: g3 (0.8), g1 (0.5), g2 (0.5), g4 (0.1), down to its last
    # positive g4; qb: g1, g3, g0, g4; qc has no positive and no rows
    assert write_ranked_csv(tmp_path / "all.csv", ev) == 8
    got = rows(tmp_path / "all.csv")
    assert tuple(got[0]) == COLUMNS
    assert [(q, r, g, rel) for q, r, g, _, rel in got[1:5]] == [
        ("qa", "1", "g3", "negative"), ("qa", "2", "g1", "positive"),
        ("qa", "3", "g2", "negative"), ("qa", "4", "g4", "positive")]
    assert [float(s) for *_, s, _ in got[1:5]] == [0.800000012, 0.5, 0.5, 0.100000001]
    assert [g for _, _, g, _, _ in got[5:]] == ["g1", "g3", "g0", "g4"]


def test_the_csv_lists_what_the_run_lists(tmp_path):
    ds, vectors = hand_case()
    ev = evaluate(ds, rank(vectors, ds, k=2), JUNK)
    write_ranked_csv(tmp_path / "qa.csv", ev, [0])
    write_trec_run(tmp_path / "qa.run", ev, queries=[0])
    run = [line.split() for line in (tmp_path / "qa.run").read_text().splitlines()]
    assert [(q, r, g) for q, r, g, _, _ in rows(tmp_path / "qa.csv")[1:]] == [
        (q, r, d) for q, _, d, r, _, _ in run]


def test_every_row_has_its_score_when_exact_ties_come_out_of_float32_unequal(tmp_path):
    """Scaled sign vectors tie exactly by the dozen and float32 makes them unequal; the
    lists reach far beyond the stored top-K (rows made again): every row has a score, the
    positives sit at the ranks the evaluation counted, the scores descend and equal exact
    cosines are written equal."""
    from irviewer.core.descriptors import AlignedDescriptors, normalise_rows
    from irviewer.core.evaluation import query_roles
    from tests.core.helpers import random_dataset, tied_vectors

    rng = np.random.default_rng(8)
    qv, gv = tied_vectors(rng, "scaled signs", 10, 64), tied_vectors(rng, "scaled signs", 300, 64)
    ds = random_dataset(rng, 10, 300, max_per_group=60, with_self=True)
    vectors = AlignedDescriptors(queries=normalise_rows(qv), gallery=gv, gallery_rows=None,
                                 dim=64, query_values=qv)
    ev = evaluate(ds, rank(vectors, ds, k=5), JUNK)
    n = write_ranked_csv(tmp_path / "all.csv", ev)
    got = rows(tmp_path / "all.csv")[1:]
    assert n == len(got) > 10 * 5
    assert all(score != "" for _, _, _, score, _ in got)
    for q, query in enumerate(ds.queries):
        mine = [r for r in got if r[0] == query.name]
        relevant = [i for i, r in enumerate(mine) if r[4] == "positive"]
        pos, _ = query_roles(query, JUNK, ds.ignored_mask)
        if not len(pos):
            continue  # left out of the means: no list
        assert relevant == ev.positives.of(q).tolist()
        scores = np.array([float(r[3]) for r in mine])
        assert (np.diff(scores) <= 0).all()
        exact = np.array([np.sign(qv[q]) @ np.sign(gv[ds.gallery.index(r[2])]) for r in mine])
        np.testing.assert_array_equal(scores[1:] == scores[:-1], exact[1:] == exact[:-1])
