"""Re-ranked methods of data already open (the window's File ▸ Add a re-ranked method…):
one file re-ranked by a SPEC (``OpenRequest.reranked``) opens like ``--rerank`` for that
file alone; a method added to an Opened equals the one opening makes; what cannot be
re-ranked says why; a correction on a re-ranked method re-scores from its own score rows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from irviewer.core import rerank as core_rerank
from irviewer.core.ap_rules import average_precision
from irviewer.core.corrections import Correction, apply_correction
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate
from irviewer.core.metrics import one_query
from irviewer.core.protocols import get_protocol
from irviewer.methods.reranked import iter_reranked, plan_reranking, rerank_refusal
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest, demo_paths
from tests.core.rerank_dense import dense_kreciprocal
from tests.core.test_rerank import finish as run

MANIFEST, STRONG = demo_paths()
WEAK = STRONG.parent / "weak.npz"


def names(request: OpenRequest) -> list[str]:
    """Return the names of the methods ``request`` plans, in order."""
    return [spec.name for spec in request.plan()]


def test_one_file_reranked_opens_after_that_file_only():
    request = OpenRequest(MANIFEST, (STRONG, WEAK), reranked=((1, "aqe:n=3"),))
    opened = open_now(request)
    assert list(opened.methods) == ["strong.npz", "weak.npz", "weak.npz + aqe:n=3"]
    assert names(request) == list(opened.methods)
    both = open_now(OpenRequest(MANIFEST, (WEAK,), rerank=("aqe:n=3",)))
    np.testing.assert_array_equal(opened.methods["weak.npz + aqe:n=3"].ranking.top_indices,
                                  both.methods["weak.npz + aqe:n=3"].ranking.top_indices)
    # --rerank SPECs first, then the file's own; a SPEC given both ways opens once.
    mixed = OpenRequest(MANIFEST, (STRONG, WEAK), rerank=("aqe",),
                        reranked=((0, "dba:k=2"), (0, "aqe")))
    assert names(mixed) == ["strong.npz", "strong.npz + aqe", "strong.npz + dba:k=2",
                                    "weak.npz", "weak.npz + aqe"]
    assert list(open_now(mixed).methods) == names(mixed)


def test_method_names_and_keys_go_both_ways():
    request = OpenRequest(MANIFEST, (STRONG, WEAK), reranked=((1, "aqe"), (0, "dba")))
    for name in names(request):
        key = request.method_key(name)
        assert key is not None and request.method_named(*key) == name
    assert request.method_key("weak.npz + aqe") == (1, "aqe")
    assert request.method_key("strong.npz") == (0, None)
    assert request.method_key("weak.npz + dba") is None  # not opened
    assert request.method_named(0, "aqe") is None and request.method_named(5) is None


def test_a_pair_naming_no_descriptor_file_is_refused():
    with pytest.raises(InputError, match="there is no descriptor file 3 to re-rank"):
        open_now(OpenRequest(MANIFEST, (STRONG,), reranked=((2, "aqe"),)))
    with pytest.raises(InputError, match="unknown re-ranking method 'nope'"):
        open_now(OpenRequest(MANIFEST, (STRONG,), reranked=((0, "nope"),)))


def test_adding_a_reranked_method_equals_opening_it():
    opened = open_now(OpenRequest(MANIFEST, (STRONG, WEAK)))
    plan = plan_reranking(opened.methods, opened.dataset, "strong.npz", "k-reciprocal:k1=4")
    assert plan.name == "strong.npz + k-reciprocal:k1=4"
    assert (plan.n_queries, plan.n_gallery, plan.dim) == (22, 154, 4096)
    assert plan.cost == core_rerank.search_cost(plan.chain, 22, 154, 4096)
    method = run(iter_reranked(opened.methods["strong.npz"], plan, opened.dataset))
    opened.add([method])
    assert list(opened.methods) == ["strong.npz", "strong.npz + k-reciprocal:k1=4",
                                    "weak.npz"]
    assert opened.request.reranked == ((0, "k-reciprocal:k1=4"),)
    reopened = open_now(opened.request)  # what a session saved now reopens
    assert list(reopened.methods) == list(opened.methods)
    mine = opened.methods[plan.name]
    theirs = reopened.methods[plan.name]
    np.testing.assert_array_equal(mine.ranking.top_indices, theirs.ranking.top_indices)
    assert mine.rerank == theirs.rerank
    assert (mine.evaluations["instance"].summary["mAP"]
            == theirs.evaluations["instance"].summary["mAP"])


def test_what_cannot_be_reranked_says_why(tmp_path, monkeypatch):
    run_file = tmp_path / "run.trec"
    run_file.write_text("".join(f"{q} 0 {g} {r + 1} {1 - r / 10} x\n"
                                for q in ("q1",) for r, g in enumerate(("a", "b"))))
    opened = open_now(OpenRequest(MANIFEST, (STRONG,), rerank=("aqe",)))
    methods, ds = opened.methods, opened.dataset
    assert rerank_refusal(methods["strong.npz"], ds) is None
    assert rerank_refusal(methods["strong.npz + aqe"], ds) == (
        "strong.npz + aqe is derived already; re-rank strong.npz by a longer chain instead")
    with pytest.raises(InputError, match=r"strong.npz \+ aqe is open already"):
        plan_reranking(methods, ds, "strong.npz", "aqe")
    with pytest.raises(InputError, match="aqe's n must be a whole number from 0 to 1000"):
        plan_reranking(methods, ds, "strong.npz", "aqe:n=-1")
    monkeypatch.setattr("irviewer.core.rerank.chain.BUDGET_MULTIPLY_ADDS", 1e3)
    with pytest.raises(InputError, match="over the budget of 1e\\+03"):
        plan_reranking(methods, ds, "strong.npz", "dba")
    from irviewer.methods.method import Method
    ranked = opened.methods["strong.npz"]
    run_method = Method("run.trec", run_file, "ranking", replace(ranked.ranking, descriptors=None))
    assert rerank_refusal(run_method, ds) == (
        "run.trec is a precomputed ranking (TREC run, .npz indices, .results): it has no "
        "vectors to re-rank")


def test_a_correction_on_a_reranked_method_rescores_from_its_rows():
    """The ranking never changes: an item outside the stored top-K and outside the items
    of interest, made a positive, is ranked from the re-ranked score row; the AP equals the
    dense reference's and a ranking made with the corrected ground truth from the start."""
    spec = "k-reciprocal:k1=6,k2=3"
    opened = open_now(OpenRequest(MANIFEST, (STRONG,), rerank=(spec,), k=5))
    name = f"strong.npz + {spec}"
    ranking = opened.methods[name].ranking
    ds = opened.dataset
    q = 0
    stored = set(ranking.top_indices[q].tolist()) | set(ranking.items(q)[0].tolist())
    g = next(i for i in range(ds.n_gallery) if i not in stored and not ds.ignored_mask[i])
    change = apply_correction(ds, Correction(ds.queries[q].name, ds.gallery[g], "positive"))
    before = opened.evaluation(name, "instance")
    opened.update_ground_truth(change.dataset, change.changed)
    after = opened.evaluation(name, "instance")
    assert opened.methods[name].ranking is ranking  # nothing was ranked again
    # Independently: the dense k-reciprocal distances of the same unit vectors.
    plain = opened.methods["strong.npz"].ranking.descriptors
    queries = plain.queries / np.linalg.norm(plain.queries, axis=1, keepdims=True)
    rows = np.arange(ds.n_gallery) if plain.gallery_rows is None else plain.gallery_rows
    gallery = np.asarray(plain.gallery, dtype=np.float32)[rows]
    gallery = gallery / np.linalg.norm(gallery, axis=1, keepdims=True)
    dist = dense_kreciprocal(queries, gallery, 6, 3, 0.3)[q]
    order = np.argsort(dist, kind="stable")
    protocol = get_protocol("instance")
    query = change.dataset.queries[q]
    ignored = {int(i) for grp in protocol.ignored for i in query.group(grp)}
    if protocol.self_match == "remove" and query.self_index >= 0:
        ignored.add(query.self_index)
    positives = {int(i) for i in query.group("positive")} - ignored
    assert g in positives
    kept = [int(i) for i in order if int(i) not in ignored]
    ranks = np.array([r for r, i in enumerate(kept) if i in positives])
    expected = average_precision(one_query(ranks, len(positives)), protocol.ap)[0]
    assert after.per_query["AP"][q] == pytest.approx(expected, abs=1e-6)
    assert after.per_query["AP"][q] != pytest.approx(before.per_query["AP"][q])
    # A ranking made with the corrected ground truth stores the item's rank itself.
    direct = run(core_rerank.iter_rerank(core_rerank.parse_spec(spec), plain,
                                         change.dataset, 5))
    assert g in direct.items(q)[0]
    fresh = evaluate(change.dataset, direct, protocol)
    assert after.per_query["AP"][q] == pytest.approx(fresh.per_query["AP"][q], abs=1e-12)


def test_more_methods_keep_every_setting_and_rerank_only_the_files_asked_for():
    a, b, run = Path("a.npz"), Path("b.npz"), Path("run.txt")
    request = OpenRequest(Path("set.csv"), (a,), rerank=("aqe",), reranked=((0, "dba"),),
                          protocol="oxford", ap="trapezoid", self_match="keep",
                          corrections=Path("fixes.csv"), k=50)
    more = request.with_methods((b, a), (run,))
    assert (more.descriptors, more.rankings) == ((a, b), (run,))
    assert names(more) == ["a.npz", "a.npz + aqe", "a.npz + dba", "b.npz", "run.txt"]
    assert (more.protocol, more.ap, more.self_match, more.corrections, more.k) == \
        ("oxford", "trapezoid", "keep", Path("fixes.csv"), 50)
    assert names(request.with_methods((a,))) == names(request)
