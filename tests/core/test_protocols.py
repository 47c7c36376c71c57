"""The one source of the sentences that name each convention (eval table, JSON, window)."""

from __future__ import annotations

from irviewer.core.protocols import TIES, conventions, get_protocol


def test_each_summary_key_gets_its_sentence_and_counts_get_none():
    said = conventions(get_protocol("revisited-medium"),
                       ["mAP", "mP@5", "mP@5(revisitop)", "n_evaluated", "n_skipped"])
    assert said == {
        "mAP": "trapezoid AP (Oxford compute_ap.cpp, revisitop, cirtorch)",
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
        "finite-sum AP, mean of P@rank over positives (trec_eval, torchreid)")
