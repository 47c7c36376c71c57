"""Precomputed rankings (TREC runs, index .npz) and TREC exports that reproduce our AP."""

from __future__ import annotations

import json
import re
from collections import defaultdict

import numpy as np
import pytest

from irviewer.cli import main
from irviewer.core.dataset import Dataset, build_query
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import Protocol
from irviewer.core.ranking import rank, ranking_from_lists
from irviewer.formats.rankings import read_ranking, sniff_ranking
from irviewer.formats.trec import write_qrels, write_trec_run
from tests.core.helpers import aligned, random_dataset, sign_vectors

PROTO = Protocol("t", "test", positive=("positive",), ignored=("junk",), ap="finite")


def small() -> Dataset:
    queries = (build_query("qa", "qa", {"positive": [1, 4], "junk": [0]}),
               build_query("qb", "qb", {"positive": [2], "junk": []}))
    return Dataset(name="s", format="test", path=None,
                   gallery=tuple(f"g{i}" for i in range(6)), queries=queries,
                   groups=("positive", "junk"), protocols=("instance",))


def test_trec_run_follows_the_rank_column_and_scores_a_truncated_list(tmp_path):
    run = tmp_path / "r.run"
    # qa: g0 (junk), g3, g1 ranked; g4 (a positive) is not in the list.
    run.write_text("qa Q0 g3 2 0.8 x\nqa Q0 g0 1 0.9 x\nqa Q0 g1 3 0.7 x\n"
                   "qb Q0 g2.jpg 1 0.5 x\n")
    assert sniff_ranking(run)
    ds = small()
    ranking, notes = read_ranking(run, ds)
    assert ranking.truncated and ranking.top_indices[0].tolist() == [0, 3, 1]
    ev = evaluate(ds, ranking, PROTO)
    # qa after removing junk g0: g3, g1 -> positive g1 at rank 1; g4 never retrieved, n = 2.
    assert ev.per_query["AP"][0] == pytest.approx((1 / 2) / 2)
    assert ev.per_query["AP"][1] == 1.0
    assert notes == ()


def test_rank_and_score_disagreement_and_missing_lists_are_noted(tmp_path):
    run = tmp_path / "r.run"
    run.write_text("qa Q0 g1 1 0.1 x\nqa Q0 g3 2 0.9 x\n")
    _, notes = read_ranking(run, small())
    assert notes == ("r.run: 1 queries have no result list (nothing retrieved)",
                     "r.run: in 1 lists the rank column and the scores disagree; irviewer "
                     "follows the rank column (trec_eval would re-sort by score)")


def test_npz_indices_by_number_or_name_and_query_order(tmp_path):
    ds = small()
    np.savez(tmp_path / "a.npz", indices=np.array([[2, -1], [1, 4]]),
             query_names=np.array(["qb", "qa"]), scores=np.array([[0.9, 0], [0.8, 0.7]]))
    np.savez(tmp_path / "b.npz", indices=np.array([["g1", "g4"], ["g2", ""]]))
    for name in ("a.npz", "b.npz"):
        r, _ = read_ranking(tmp_path / name, ds)
        assert evaluate(ds, r, PROTO).per_query["AP"].tolist() == [1.0, 1.0]


BAD = [
    ("r.run", "qa Q0 g1 1 0.5\n", "r.run, line 1: expected 'qid Q0 docid rank score tag', "
                                  "found 5 fields"),
    ("r.run", "qa Q0 g1 one 0.5 x\n", "r.run, line 1: rank 'one' and score '0.5' must be "
                                      "numbers"),
    ("r.run", "qz Q0 g1 1 0.5 x\n", "r.run: 1 query ids are not queries of s, e.g. qz"),
    ("r.run", "qa Q0 g9 1 0.5 x\n", "r.run: 1 document ids are not gallery images of s, "
                                    "e.g. g9"),
    ("r.run", "qa Q0 g1 1 0.5 x\nqa Q0 g1 2 0.4 x\n",
     "r.run: query qa lists gallery image g1 more than once"),
    ("r.run", "\n", "r.run: no result line"),
]


@pytest.mark.parametrize(("name", "text", "message"), BAD)
def test_malformed_runs(tmp_path, name, text, message):
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError, match=re.escape(message)):
        read_ranking(tmp_path / name, small())


def test_malformed_npz_rankings(tmp_path):
    ds = small()
    cases = [
        ({"indices": np.array([[0, 9], [1, 2]])}, "r.npz: 1 result entries are outside the "
         "gallery of 6 images, e.g. query qa position 2 names 9"),
        ({"indices": np.array([1, 2])}, "r.npz: indices must be a queries x K matrix"),
        ({"indices": np.array([[1], [2], [3]])}, "r.npz: expected one result list per query "
         "(2), got an array of shape (3, 1)"),
        ({"indices": np.array([["g1"], ["nope"]])}, "r.npz: 1 names in indices are not gallery "
         "images, e.g. nope"),
        ({"scores": np.zeros((2, 2))}, "r.npz: found keys scores; a ranking needs 'indices'"),
    ]
    for arrays, message in cases:
        np.savez(tmp_path / "r.npz", **arrays)
        with pytest.raises(InputError, match=re.escape(message)):
            read_ranking(tmp_path / "r.npz", ds)


def test_globally_ignored_items_are_dropped_from_lists_before_counting():
    ds = small()
    from dataclasses import replace
    ds = replace(ds, global_ignored=np.array([3]))
    r = ranking_from_lists(ds, np.array([[3, 1, 4], [2, -1, -1]]), None, "x")
    assert r.top_indices[0].tolist() == [1, 4, -1]
    assert evaluate(ds, r, PROTO).per_query["AP"][0] == 1.0


def trec_eval_map(run_path, qrels_path) -> float:
    """An independent trec_eval-style MAP: sort by score desc (ties: docid desc)."""
    rel = defaultdict(set)
    for line in qrels_path.read_text().splitlines():
        qid, _, doc, grade = line.split()
        if int(grade) > 0:
            rel[qid].add(doc)
    runs = defaultdict(list)
    for line in run_path.read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        runs[qid].append((float(score), doc))
    aps = []
    for qid, docs in rel.items():
        ranked = sorted(runs[qid], key=lambda t: (t[0], t[1]), reverse=True)
        hits, total = 0, 0.0
        for i, (_, doc) in enumerate(ranked, start=1):
            if doc in docs:
                hits += 1
                total += hits / i
        aps.append(total / len(docs))
    return sum(aps) / len(aps)


@pytest.mark.parametrize("seed", range(4))
def test_exported_run_and_qrels_reproduce_the_finite_map(tmp_path, seed):
    rng = np.random.default_rng(seed)
    ds = random_dataset(rng, 8, 60, max_per_group=6, with_self=True,
                        global_ignored=rng.choice(60, 4, replace=False))
    r = rank(aligned(sign_vectors(rng, 8), sign_vectors(rng, 60)), ds, k=5)  # many ties
    ev = evaluate(ds, r, PROTO)
    write_trec_run(tmp_path / "x.run", ev)
    write_qrels(tmp_path / "x.qrels", ev)
    assert trec_eval_map(tmp_path / "x.run", tmp_path / "x.qrels") == pytest.approx(
        ev.summary["mAP"], abs=1e-12)


def test_cli_export_then_score_the_run_as_a_ranking(tmp_path, capsys):
    (tmp_path / "set.csv").write_text("image,instance,role\na1.jpg,a,both\na2.jpg,a,gallery\n"
                                      "b1.jpg,b,both\nb2.jpg,b,gallery\nc1.jpg,c,gallery\n")
    rng = np.random.default_rng(3)
    np.savez(tmp_path / "d.npz", features=rng.standard_normal((5, 8)).astype(np.float32),
             names=np.array(["a1", "a2", "b1", "b2", "c1"]))
    assert main(["eval", str(tmp_path / "set.csv"), "-d", str(tmp_path / "d.npz"),
                 "--export-trec", str(tmp_path / "out"), "--json",
                 str(tmp_path / "a.json")]) == 0
    assert main(["eval", str(tmp_path / "set.csv"), "--ranking",
                 str(tmp_path / "out.instance.run"), "--json", str(tmp_path / "b.json")]) == 0
    a = json.loads((tmp_path / "a.json").read_text())
    b = json.loads((tmp_path / "b.json").read_text())
    assert b["descriptors"] is None and b["ranking"]["depth"] >= 1
    assert a["evaluations"][0]["summary"]["mAP"] == pytest.approx(
        b["evaluations"][0]["summary"]["mAP"])
    assert "precomputed lists" in capsys.readouterr().out
