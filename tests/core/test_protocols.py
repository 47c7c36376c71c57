"""The one source of the sentences that name each convention (eval table, JSON, window), and
of the clause that says what a ranking loses before ranks are counted."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from irviewer.core.protocols import OWN_IMAGE, TIES, conventions, get_protocol, removals


def test_each_summary_key_gets_its_sentence_and_counts_get_none():
    said = conventions(get_protocol("revisited-medium"),
                       ["mAP", "mP@5", "mP@5(revisitop)", "n_evaluated", "n_skipped"])
    assert said == {
        "mAP": "trapezoid AP, as in Oxford compute_ap.cpp (Oxford5k, Paris6k); revisitop and "
               "cirtorch compute_ap; Market-1501 compute_AP.m; Holidays eval_holidays",
        "mP@5": "true P@k: positives in the top k divided by k",
        "mP@5(revisitop)": "revisitop: divided by min(k, rank of the last positive)",
        "ties": TIES,
        "self_match": "a query's own image, where it is in the gallery, stays in the ranking",
    }


def test_reid_sentences_follow_the_protocol_fields():
    market = conventions(get_protocol("market1501"), ["mAP", "CMC@1", "mINP", "mR-precision"])
    assert market["mAP"].startswith("finite-sum AP")
    assert market["CMC@1"] == "Market-1501: a positive within the top k (first match)"
    assert market["mINP"] == "inverse negative penalty (Ye et al. TPAMI 2021)"
    assert market["mR-precision"] == "precision at R = number of positives"
    assert market["self_match"] == ("a query's own image, where it is in the gallery, is "
                                    "removed from its ranking")
    cuhk = get_protocol("cuhk03").override(cmc_repeats=7, seed=3)
    assert conventions(cuhk, ["CMC@5"])["CMC@5"] == ("CUHK03 single-gallery-shot, 7 repeats, "
                                                     "seed 3")
    assert conventions(get_protocol("oxford").override(ap="finite"), ["mAP"])["mAP"] == (
        "finite-sum AP, mean of P@rank over positives, as in trec_eval map; torchreid and "
        "fast-reid eval_market1501; VLFeat vl_pr info.ap")


@pytest.mark.parametrize(("ignored", "rule", "own", "said"), [
    ((), "remove", None, "the query's own image, where it is in the gallery"),
    ((), "remove", True, "the query's own image"),
    ((), "remove", False, "nothing (no query's own image is in the gallery)"),
    ((), "keep", None, "nothing; the query's own image, where it is in the gallery, stays in "
                       "its ranking"),
    ((), "keep", True, "nothing; the query's own image stays in its ranking"),
    ((), "keep", False, "nothing"),
    (("junk",), "remove", False, "junk (no query's own image is in the gallery)"),
    (("junk", "hard"), "remove", True, "junk, hard, the query's own image"),
    (("junk",), "keep", True, "junk; the query's own image stays in its ranking"),
])
def test_removals_say_the_self_match_rule_with_the_rest(ignored, rule, own, said):
    assert removals(ignored, rule, own) == said


@given(st.lists(st.sampled_from(["junk", "hard", "easy", "same_camera"]), unique=True),
       st.sampled_from(["keep", "remove"]), st.sampled_from([None, True, False]))
def test_removals_never_say_nothing_while_removing_something(ignored, rule, own):
    said = removals(ignored, rule, own)
    removes_own = rule == "remove" and own is not False
    assert said.startswith("nothing") == (not ignored and not removes_own)
    assert ("stays" in said) == (rule == "keep" and own is not False)
    assert (OWN_IMAGE in said) == (own is not False)
    assert all(group in said for group in ignored)
