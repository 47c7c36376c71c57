"""`irviewer eval --rerank SPEC`: the re-ranked ranking is scored, the report names the chain
and every parameter with its source, and bad input exits 2 with one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from irviewer.cli import main
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import get_protocol
from irviewer.core.rerank import iter_rerank, parse_spec
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest, demo_paths


def test_eval_scores_the_reranked_ranking_and_names_the_chain(tmp_path, capsys):
    out = tmp_path / "out.json"
    assert main(["eval", "--demo", "--rerank", "k-reciprocal:k1=4", "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "re-ranking   k-reciprocal:k1=4,k2=6,lambda=0.3" in table
    assert "k1=4 (given)" in table and "k2=6 (default (Zhong et al. CVPR 2017" in table
    report = json.loads(out.read_text())
    rerank = report["rerank"]
    assert rerank["spec"] == "k-reciprocal:k1=4"
    assert rerank["chain"] == "k-reciprocal:k1=4,k2=6,lambda=0.3"
    assert rerank["steps"][0]["params"]["lambda"]["source"].startswith("default (Zhong")
    # The numbers are those of the re-ranked ranking, not of the plain one.
    manifest, strong = demo_paths()
    plain = open_now(OpenRequest(manifest, (strong,)))
    chained = open_now(OpenRequest(manifest, (strong,), rerank=("k-reciprocal:k1=4",)))
    assert list(chained.methods) == ["strong.npz", "strong.npz + k-reciprocal:k1=4"]
    reranked = chained.methods["strong.npz + k-reciprocal:k1=4"]
    assert reranked.rerank is not None and reranked.ranking.rerank == rerank["chain"]
    summary = report["evaluations"][0]["summary"]
    ev = reranked.evaluations["instance"]
    assert summary["mAP"] == pytest.approx(ev.summary["mAP"], abs=1e-12)
    assert summary["mAP"] != pytest.approx(plain.first.evaluations["instance"].summary["mAP"])


def test_opening_gives_one_more_method_per_file_and_spec():
    manifest, strong = demo_paths()
    weak = strong.parent / "weak.npz"
    opened = open_now(OpenRequest(manifest, (strong, weak), rerank=("aqe", "dba:k=3")))
    assert list(opened.methods) == ["strong.npz", "strong.npz + aqe", "strong.npz + dba:k=3",
                                    "weak.npz", "weak.npz + aqe", "weak.npz + dba:k=3"]
    only = open_now(OpenRequest(manifest, (weak,), rerank=("aqe",)))
    assert [m.name for m in only.reported()] == ["weak.npz + aqe"]
    # The same ranking as the core chain gives on the aligned vectors.
    plain = opened.methods["weak.npz"].ranking
    direct = iter_rerank(parse_spec("aqe"), plain.descriptors, opened.dataset, 200, plain)
    while True:
        try:
            next(direct)
        except StopIteration as done:
            ranking = done.value
            break
    np.testing.assert_array_equal(only.methods["weak.npz + aqe"].ranking.top_indices,
                                  ranking.top_indices)
    ev = evaluate(opened.dataset, ranking, get_protocol("instance"))
    assert only.methods["weak.npz + aqe"].evaluations["instance"].summary["mAP"] \
        == ev.summary["mAP"]


@pytest.mark.parametrize(("extra", "message"), [
    (["--rerank", "k-reciprocal:k3=1"],
     "irviewer: error: --rerank: k-reciprocal has no parameter 'k3'; its parameters are k1, "
     "k2, lambda"),
    (["--rerank", "aqe:n=-2"],
     "irviewer: error: --rerank: aqe's n must be a whole number from 0 to 1000, not -2"),
])
def test_bad_spec_exits_2_with_one_line(extra, message, capsys):
    assert main(["eval", "--demo", *extra]) == 2
    err = capsys.readouterr().err
    assert err.strip() == message


def test_a_trec_run_has_nothing_to_rerank(tmp_path, capsys):
    run = tmp_path / "run.trec"
    run.write_text("q 0 a 1 1.0 x\n")
    manifest, _ = demo_paths()
    assert main(["eval", str(manifest), "--ranking", str(run), "--rerank", "aqe"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("irviewer: error: run.trec: --rerank re-ranks the vectors of a descriptor "
                   "file, and a precomputed ranking (TREC run, .npz indices, .results) has "
                   "none; give the descriptor file instead")
    assert "\n" not in err


def test_a_reranked_method_cannot_search_a_new_photo():
    from irviewer.collection.photo_search import Searcher
    from irviewer.core.errors import InputError

    manifest, strong = demo_paths()
    opened = open_now(OpenRequest(manifest, (strong,), rerank=("aqe",)))
    with pytest.raises(InputError) as e:
        Searcher.from_opened(opened, "strong.npz + aqe")
    assert str(e.value) == ("strong.npz + aqe is a re-ranked method: re-ranking depends on "
                            "every query, so a new photo cannot be scored by it; search with "
                            "strong.npz, the plain method")


def test_compare_pairs_plain_against_reranked(tmp_path, capsys):
    _, strong = demo_paths()
    out = tmp_path / "cmp.json"
    assert main(["compare", "--demo", "-d", str(strong), "--rerank", "k-reciprocal:k1=4",
                 "--permutations", "200", "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert ("method    strong.npz + k-reciprocal:k1=4  (" in table
            and "re-ranked by k-reciprocal:k1=4,k2=6,lambda=0.3 (docs/rerank.md)" in table)
    report = json.loads(out.read_text())
    names = [m["name"] for m in report["methods"]]
    assert names == ["strong.npz", "strong.npz + k-reciprocal:k1=4"]
    assert "rerank" not in report["methods"][0]
    assert report["methods"][1]["rerank"]["chain"] == "k-reciprocal:k1=4,k2=6,lambda=0.3"
    # The re-ranked method's mean is eval --rerank's mAP.
    manifest, _ = demo_paths()
    opened = open_now(OpenRequest(manifest, (strong,), rerank=("k-reciprocal:k1=4",)))
    mean = opened.methods["strong.npz + k-reciprocal:k1=4"].evaluations["instance"].summary
    assert report["comparisons"][0]["method"] == "strong.npz + k-reciprocal:k1=4"
    assert report["comparisons"][0]["mean_method"] == pytest.approx(mean["mAP"])


def test_compare_counts_reranked_methods(capsys):
    _, strong = demo_paths()
    manifest, _ = demo_paths()
    assert main(["compare", str(manifest), "-d", str(strong)]) == 2
    capsys.readouterr()
    assert main(["compare", str(manifest), "-d", str(strong), "--rerank", "aqe:n=1",
                 "--permutations", "100"]) == 0
