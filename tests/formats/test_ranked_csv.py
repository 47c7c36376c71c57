"""Ranked lists as CSV: the hand case's rows, the same lists as the TREC run, one query."""

from __future__ import annotations

import csv

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
