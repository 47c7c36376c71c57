"""TREC run and qrels exports: a trec_eval-style reader of the files gives irviewer's AP."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.descriptors import AlignedDescriptors, normalise_rows
from irviewer.core.errors import InputError
from irviewer.core.evaluation import Evaluation, evaluate
from irviewer.core.protocols import Protocol
from irviewer.core.ranking import rank, ranking_from_lists
from irviewer.formats.rankings import read_ranking
from irviewer.formats.trec import (
    exported_list,
    trec_scores,
    write_qrels,
    write_trec_run,
)
from tests.core.helpers import aligned, brute_force_order, random_dataset, sign_vectors

JUNK = Protocol("t-junk", "test", positive=("positive",), ignored=("junk",), ap="finite",
                self_match="remove")
KEEP_SELF = replace(JUNK, name="t-keep", self_match="keep")
LISTED = replace(JUNK, name="t-listed", list_depth=7, ap_positives="retrieved")


# -- an independent trec_eval-style reader --------------------------------------------------

def trec_eval_ap(run_path: Path, qrels_path: Path, complete: bool = False) -> dict[str, float]:
    """Return per-query AP as trec_eval's ``map`` computes it from the two files.

    Lists are sorted by score descending, ties by docid descending (trec_eval's
    comp_sim_docno); the rank column is ignored. AP = sum of precision at each relevant
    document / number of relevant documents in the qrels (0 when there is none). Queries
    must be in both files, unless ``complete`` (trec_eval -c) scores qrels-only queries 0.
    """
    relevance: dict[str, dict[str, int]] = defaultdict(dict)
    for line in qrels_path.read_text().splitlines():
        qid, _, doc, grade = line.split()
        assert doc not in relevance[qid]
        relevance[qid][doc] = int(grade)
    results: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for line in run_path.read_text().splitlines():
        qid, q0, doc, rank_text, score, _tag = line.split()
        assert q0 == "Q0" and int(rank_text) >= 1
        results[qid].append((float(score), doc))
    out = {}
    for qid, grades in relevance.items():
        if qid not in results and not complete:
            continue
        docs = [doc for _, doc in results.get(qid, [])]
        assert len(set(docs)) == len(docs), f"{qid}: a document listed twice"
        ranked = sorted(results.get(qid, []), reverse=True)  # score desc, then docid desc
        n_relevant = sum(g > 0 for g in grades.values())
        hits, total = 0, 0.0
        for i, (_, doc) in enumerate(ranked, start=1):
            if grades.get(doc, 0) > 0:
                hits += 1
                total += hits / i
        out[qid] = total / n_relevant if n_relevant else 0.0
    return out


def export(tmp_path: Path, ev: Evaluation, depth: int | None = None) -> tuple[Path, Path]:
    run_path, qrels_path = tmp_path / "x.run", tmp_path / "x.qrels"
    write_trec_run(run_path, ev, depth)
    write_qrels(qrels_path, ev)
    return run_path, qrels_path


def assert_reproduces(tmp_path: Path, ev: Evaluation, complete: bool = False) -> None:
    aps = trec_eval_ap(*export(tmp_path, ev), complete=complete)
    evaluated = [q.name for q, ok in zip(ev.dataset.queries, ev.evaluated, strict=True) if ok]
    assert sorted(aps) == sorted(evaluated)
    for q, query in enumerate(ev.dataset.queries):
        if query.name in aps:
            assert aps[query.name] == pytest.approx(ev.per_query["AP"][q], abs=1e-12)
    assert np.mean(list(aps.values())) == pytest.approx(ev.summary["mAP"], abs=1e-12)


# -- a hand-checked case -------------------------------------------------------------------

def hand_case() -> tuple[Dataset, AlignedDescriptors]:
    """qa = (1, 0) scores g0..g5 by their x: 0.9, 0.5, 0.5, 0.8, 0.1, -0.3 (g1, g2 tie);
    qb = (0.6, 0.8) scores them 0.889, 0.993, -0.393, 0.96, 0.856, 0.583 (all distinct).
    qa: positives g1, g4, junk g0.  qb: positive g4.  qc: no positive (skipped)."""
    x = np.array([0.9, 0.5, 0.5, 0.8, 0.1, -0.3])
    y = np.sqrt(1 - x**2) * np.array([1, 1, -1, 1, 1, 1])
    gallery = np.stack([x, y], axis=1).astype(np.float32)
    queries = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    ds = Dataset(name="hand", format="test", path=None, gallery=tuple(f"g{i}" for i in range(6)),
                 queries=(build_query("qa", "qa", {"positive": [1, 4], "junk": [0]}),
                          build_query("qb", "qb", {"positive": [4]}),
                          build_query("qc", "qc", {"junk": [2]})),
                 groups=("positive", "junk"), protocols=("instance",))
    return ds, AlignedDescriptors(queries=normalise_rows(queries), gallery=gallery,
                                  gallery_rows=None, dim=2)


def test_hand_checked_run_and_qrels(tmp_path):
    ds, vectors = hand_case()
    ev = evaluate(ds, rank(vectors, ds, k=2), JUNK)
    # qa without junk g0: g3, g1, g2, g4, g5 -> positives at ranks 2 and 4: AP = (1/2+2/4)/2.
    # qb: g1, g3, g0, g4 -> positive at rank 4: AP = 1/4.
    assert ev.per_query["AP"].tolist()[:2] == pytest.approx([0.5, 0.25])
    run_path, qrels_path = export(tmp_path, ev)
    lines = [line.split() for line in run_path.read_text().splitlines()]
    # qa's list reaches its last positive g4 (the stored top-2 is g0, g3) and has a tie:
    # its score column is n..1, else trec_eval would put g2 before g1 (docid descending).
    assert [line for line in lines if line[0] == "qa"] == [
        ["qa", "Q0", "g3", "1", "4", "irviewer"], ["qa", "Q0", "g1", "2", "3", "irviewer"],
        ["qa", "Q0", "g2", "3", "2", "irviewer"], ["qa", "Q0", "g4", "4", "1", "irviewer"]]
    # qb's real scores strictly decrease, so they are written.
    qb = [line for line in lines if line[0] == "qb"]
    assert [(d, r) for _, _, d, r, _, _ in qb] == [("g1", "1"), ("g3", "2"), ("g0", "3"),
                                                  ("g4", "4")]
    assert [float(s) for *_, s, _ in qb] == pytest.approx([0.9928, 0.96, 0.8887, 0.856],
                                                          abs=1e-3)
    assert qrels_path.read_text() == "qa 0 g1 1\nqa 0 g4 1\nqb 0 g4 1\n"
    assert trec_eval_ap(run_path, qrels_path) == pytest.approx({"qa": 0.5, "qb": 0.25})
    # Real tied scores would not reproduce irviewer: trec_eval would rank g2 above g1.
    (tmp_path / "tied.run").write_text("qa Q0 g3 1 0.8 t\nqa Q0 g1 2 0.5 t\n"
                                       "qa Q0 g2 3 0.5 t\nqa Q0 g4 4 0.1 t\n")
    assert trec_eval_ap(tmp_path / "tied.run", qrels_path)["qa"] == pytest.approx(
        (1 / 3 + 2 / 4) / 2)


def test_the_score_column_sorts_like_the_ranks():
    assert trec_scores(np.array([0.5, 0.25, -1.0])) == ["0.5", "0.25", "-1"]
    assert trec_scores(np.array([0.5, 0.5, 0.1])) == ["3", "2", "1"]
    assert trec_scores(np.array([np.nan, np.nan])) == ["2", "1"]
    # Neighbouring float32 values stay distinct and ordered once written.
    a = np.float32(0.7)
    b = np.nextafter(a, np.float32(0), dtype=np.float32)
    written = trec_scores(np.array([a, b], dtype=np.float32))
    assert float(written[0]) > float(written[1])


@pytest.mark.parametrize("seed", range(5))
def test_a_list_longer_than_the_stored_one_is_the_head_of_the_stable_full_sort(seed):
    """Beyond the stored top-K, a query's list comes from its score row made again, without
    the dropped images, in the ranking's own order (ties in gallery order)."""
    rng = np.random.default_rng(seed)
    qv, gv = sign_vectors(rng, 1), sign_vectors(rng, 50)  # cosines in 1/16: many ties
    ds = random_dataset(rng, 1, 50, global_ignored=rng.choice(50, 4, replace=False))
    ranking = rank(aligned(qv, gv), ds, k=3)
    drop = ds.ignored_mask | (rng.random(50) < 0.2)
    row = (normalise_rows(qv) @ normalise_rows(gv).T)[0]
    full = brute_force_order(row, np.flatnonzero(drop))
    for n in (1, 7, 30, 60):
        idx, scores = ranking.ranked(0, n, drop)
        assert idx.tolist() == full[:n].tolist()
        np.testing.assert_allclose(scores, row[idx], atol=1e-6)


# -- random data: ties, junk, self-matches, removed images, extended lists ------------------

CASES = [
    ("ties", JUNK, True, 4),
    ("ties-keep-self", KEEP_SELF, True, 4),
    ("gaussian", JUNK, False, 3),
    ("list-depth", LISTED, True, 2),
]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(("label", "protocol", "signs", "k"), CASES, ids=[c[0] for c in CASES])
def test_trec_eval_style_map_equals_irviewer_finite_map(tmp_path, seed, label, protocol,
                                                        signs, k):
    rng = np.random.default_rng(seed)
    ds = random_dataset(rng, 12, 40, max_per_group=6, with_self=True,
                        global_ignored=rng.choice(40, 3, replace=False))
    if signs:  # cosines are multiples of 1/16: many exact ties
        vectors = aligned(sign_vectors(rng, 12), sign_vectors(rng, 40))
    else:
        vectors = aligned(rng.standard_normal((12, 16)).astype(np.float32),
                          rng.standard_normal((40, 16)).astype(np.float32))
    ev = evaluate(ds, rank(vectors, ds, k=k), protocol)
    assert ev.summary["n_evaluated"] > 0
    assert_reproduces(tmp_path, ev)


@pytest.mark.parametrize("seed", range(3))
def test_a_truncated_precomputed_ranking_is_written_as_known(tmp_path, seed):
    rng = np.random.default_rng(seed)
    ds = random_dataset(rng, 10, 30, max_per_group=5, with_self=True)
    lists = np.stack([rng.permutation(30)[:8] for _ in range(10)])
    lists[rng.random(lists.shape) < 0.2] = -1
    lists[0] = -1  # retrieved nothing
    ds = replace(ds, queries=(build_query("q0", "img0", {"positive": [1], "junk": []}),
                              *ds.queries[1:]))
    ranking = ranking_from_lists(ds, lists, None, "lists")
    ev = evaluate(ds, ranking, JUNK)
    notes = write_trec_run(tmp_path / "x.run", ev)
    assert notes[-1] == ("x.run: 1 evaluated queries retrieved nothing and have no line, e.g. "
                         "q0; give trec_eval -c (ranx: make_comparable=True) so they count as 0, "
                         "as irviewer does")
    assert re.fullmatch(r"x\.run: \d+ lists have equal or missing scores; their score column "
                        r"is n, n-1, \.\.\., 1 so that trec_eval keeps irviewer's order", notes[0])
    for q in range(1, 10):
        listed, _ = exported_list(ev, q)
        kept = [g for g in lists[q] if g >= 0 and ev.relevance(q, np.array([g]))[0] != 2]
        assert listed.tolist() == kept[:len(listed)]
    assert_reproduces(tmp_path, ev, complete=True)


def test_a_corrected_query_is_exported_with_its_new_ground_truth(tmp_path):
    ds, vectors = hand_case()
    ev = evaluate(ds, rank(vectors, ds, k=2), JUNK)
    fixed = ev.with_query(0, build_query("qa", "qa", {"positive": [5], "junk": [3]}))
    # qa now: g0, g1, g2, g4, g5 once g3 is junk: its positive g5 is 5th.
    assert fixed.per_query["AP"][0] == pytest.approx(1 / 5)
    assert_reproduces(tmp_path, fixed)


def test_positives_stay_at_their_counted_ranks_when_the_score_row_disagrees(tmp_path):
    """A score row that orders differently from its ranking (scores made elsewhere) does
    not move the positives from their counted ranks, and every listed image keeps a score."""
    ds, vectors = hand_case()
    ranking = rank(vectors, ds, k=1)
    true_row = ranking.score_row

    def rounded_differently(q: int) -> np.ndarray:
        row = true_row(q).copy()
        row[4] -= 0.5  # as if g4's score were recomputed lower than the ranking saw it
        return row

    object.__setattr__(ranking, "score_row", rounded_differently)
    ev = evaluate(ds, ranking, JUNK)
    listed, scores = exported_list(ev, 0)
    assert listed.tolist() == [3, 1, 2, 4]
    assert not np.isnan(scores).any()
    assert scores[3] == pytest.approx(0.1)  # g4 keeps the score its ranking counted
    assert_reproduces(tmp_path, ev)


def test_list_depth_protocol_qrels_mark_positives_beyond_the_list_zero(tmp_path):
    ds, vectors = hand_case()
    protocol = replace(LISTED, list_depth=2)
    ev = evaluate(ds, rank(vectors, ds, k=6), protocol)
    # qa: g3, g1 | g2, g4: one positive listed (AP 1/2); qb: g1, g3 | ...: none (AP 0).
    assert ev.per_query["AP"].tolist()[:2] == [0.5, 0.0]
    run_path, qrels_path = export(tmp_path, ev)
    assert qrels_path.read_text() == "qa 0 g1 1\nqa 0 g4 0\nqb 0 g4 0\n"
    assert len(run_path.read_text().splitlines()) == 4
    assert trec_eval_ap(run_path, qrels_path) == {"qa": 0.5, "qb": 0.0}


# -- round trip, depth, notes, errors -------------------------------------------------------

@pytest.mark.parametrize("seed", range(3))
def test_round_trip_write_then_read_the_run(tmp_path, seed):
    rng = np.random.default_rng(seed)
    ds = random_dataset(rng, 8, 50, max_per_group=6, with_self=True)
    ev = evaluate(ds, rank(aligned(sign_vectors(rng, 8), sign_vectors(rng, 50)), ds, k=6), JUNK)
    write_trec_run(tmp_path / "x.run", ev, depth=10)
    ranking, notes = read_ranking(tmp_path / "x.run", ds)
    assert notes == () or all("no result list" in n for n in notes)
    for q in range(ds.n_queries):
        if ev.evaluated[q]:
            listed, _ = exported_list(ev, q, depth=10)
            assert len(listed) >= min(10, ds.n_gallery - 1 - len(ds.queries[q].group("junk")))
            assert ranking.top_indices[q][:len(listed)].tolist() == listed.tolist()
    again = evaluate(ds, ranking, JUNK)
    assert np.array_equal(again.per_query["AP"], ev.per_query["AP"], equal_nan=True)
    assert again.positives.ranks.tolist() == ev.positives.ranks.tolist()


def test_trapezoid_protocols_are_noted_and_still_export_their_removals(tmp_path):
    ds, vectors = hand_case()
    oxford_like = replace(JUNK, name="t-trapezoid", ap="trapezoid")
    ev = evaluate(ds, rank(vectors, ds, k=6), oxford_like)
    notes = write_trec_run(tmp_path / "x.run", ev)
    assert notes[0] == ("x.run: trec_eval's map is the finite-sum AP; irviewer's mAP under "
                        "t-trapezoid is trapezoid: compare with --ap finite")
    write_qrels(tmp_path / "x.qrels", ev)
    finite = evaluate(ds, ev.ranking, oxford_like.override(ap="finite"))
    assert np.mean(list(trec_eval_ap(tmp_path / "x.run", tmp_path / "x.qrels").values())) \
        == pytest.approx(finite.summary["mAP"], abs=1e-12)


def test_names_that_a_trec_file_cannot_hold_are_refused_and_nothing_is_written(tmp_path):
    ds, vectors = hand_case()
    spaced = replace(ds, gallery=("g0", "g 1", *ds.gallery[2:]))
    ev = evaluate(spaced, rank(vectors, spaced, k=6), JUNK)
    (tmp_path / "x.run").write_text("old\n")
    with pytest.raises(InputError, match=re.escape(
            "x.run: 1 gallery names contain white space, which a TREC file cannot hold, "
            "e.g. 'g 1'")):
        write_trec_run(tmp_path / "x.run", ev)
    with pytest.raises(InputError, match=re.escape("x.qrels: 1 gallery names contain")):
        write_qrels(tmp_path / "x.qrels", ev)
    assert (tmp_path / "x.run").read_text() == "old\n"
    assert not (tmp_path / "x.qrels").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.run"]  # no temporary left


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"depth": 0}, "x.run: the run depth must be at least 1, not 0"),
    ({"tag": "my run"}, "x.run: the run tag 'my run' must be one word"),
])
def test_bad_export_options(tmp_path, kwargs, message):
    ds, vectors = hand_case()
    ev = evaluate(ds, rank(vectors, ds, k=6), JUNK)
    with pytest.raises(InputError, match=re.escape(message)):
        write_trec_run(tmp_path / "x.run", ev, **kwargs)


def test_a_missing_folder_is_an_input_error(tmp_path):
    ds, vectors = hand_case()
    ev = evaluate(ds, rank(vectors, ds, k=6), JUNK)
    with pytest.raises(InputError, match="does not exist"):
        write_qrels(tmp_path / "nowhere" / "x.qrels", ev)


def test_one_querys_run_and_qrels_hold_that_query_only(tmp_path):
    ds, vectors = hand_case()
    ev = evaluate(ds, rank(vectors, ds, k=2), JUNK)
    write_trec_run(tmp_path / "qb.run", ev, queries=[1])
    write_qrels(tmp_path / "qb.qrels", ev, queries=[1])
    run = [line.split()[:4] for line in (tmp_path / "qb.run").read_text().splitlines()]
    assert run == [["qb", "Q0", "g1", "1"], ["qb", "Q0", "g3", "2"], ["qb", "Q0", "g0", "3"],
                   ["qb", "Q0", "g4", "4"]]
    assert (tmp_path / "qb.qrels").read_text() == "qb 0 g4 1\n"
    # qc has no positive: left out of the files, as of the means
    write_trec_run(tmp_path / "qc.run", ev, queries=[2])
    assert (tmp_path / "qc.run").read_text() == ""
