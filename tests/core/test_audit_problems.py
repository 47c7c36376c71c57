"""One entry per problem: the queries of one list written several times (one of them differing
elsewhere) are one family and one entry; an image one list has and another, unrelated list
looks like is one entry naming both lists with both fixes; the claim of an unrelated list and
the image's likeness to its list are evidence; and the evidence sentences never say what a
person cannot check (a share of 0 % compared with 0 %, a probability printed as 1 when it is
not, a count past the numbers it is a part of)."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from irviewer.core.audit import (
    NEG_POS,
    POS_NEG,
    WRONG_LIST,
    AuditOptions,
    Suspect,
    audit,
    score_words,
    span,
)
from irviewer.core.audit.claims import families, shared_positives, unrelated_sets
from irviewer.core.audit.pair_words import of_its, percent
from irviewer.core.audit.sets import positive_sets
from irviewer.core.dataset import build_query
from tests.core.test_audit import VIEWS, labelled_case, oxford_case, two_methods

# -- families ------------------------------------------------------------------------------

def test_sets_that_share_most_positives_are_one_family_unrelated_sets_are_not():
    """Queries 0-2 share a list but query 2's differs by one image (two sets, one family);
    query 3's list shares nothing with theirs."""
    n_g = 20
    lists = [[0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5, 6], [10, 11, 12]]
    pos = np.sort(np.concatenate([q * n_g + np.array(v) for q, v in enumerate(lists)]))
    sets = positive_sets(pos, np.zeros(0, np.int64), np.full(4, -1), np.ones(n_g, bool))
    assert sets.n_sets == 3
    fam = families(sets)
    of = fam[sets.of_query]
    assert of[0] == of[1] == of[2] and of[3] != of[0]



@given(st.lists(st.lists(st.integers(0, 29), min_size=1, max_size=12), min_size=1,
                max_size=8))
def test_the_positives_two_sets_share_are_counted_as_the_membership_product(lists):
    """Every pair of sets (a set with itself too) sharing positives, with how many: what the
    product of the (sets, images) membership matrix with its transpose says, and nothing
    for a pair that shares none; the unrelated sets follow from those counts."""
    n_g = 30
    pos = np.unique(np.concatenate([q * n_g + np.array(sorted(set(v)))
                                    for q, v in enumerate(lists)]))
    sets = positive_sets(pos, np.zeros(0, np.int64), np.full(len(lists), -1),
                         np.ones(n_g, bool))
    member = np.zeros((sets.n_sets, n_g), dtype=np.int64)
    member[sets.pos_keys // n_g, sets.pos_keys % n_g] = 1
    product = member @ member.T
    a, b, count = shared_positives(sets)
    counted = np.zeros_like(product)
    counted[a, b] = count
    assert np.array_equal(counted, product) and (count > 0).all()
    smaller = np.minimum.outer(sets.n_pos, sets.n_pos)
    apart = product <= np.maximum(1, (0.05 * smaller).astype(np.int64))
    np.fill_diagonal(apart, False)
    assert np.array_equal(unrelated_sets(sets), apart)

# -- one entry per problem -----------------------------------------------------------------

def three_queries(extra_junk_for_third: bool):  # type: ignore[no-untyped-def]
    """The Oxford-like case with a third query of A, whose list (with a junk image of its
    own when asked) is otherwise A_1's; a5, a view of A, is missing from every list."""
    ds, q, g = oxford_case({"a5": "negative"})
    index = {n: i for i, n in enumerate(ds.gallery)}
    first = ds.queries[0]
    groups = {name: first.group(name) for name in ds.groups}
    if extra_junk_for_third:
        groups["junk"] = np.array([index["d7"]])
    third = build_query("A_3", "a0", groups, self_index=0)
    ds = replace(ds, queries=(*ds.queries, third))
    return ds, np.concatenate([q, q[1:]]), g


def test_a_problem_of_queries_whose_lists_differ_elsewhere_is_one_entry_naming_them_all():
    ds, q, g = three_queries(extra_junk_for_third=True)
    result = audit(ds, two_methods(ds, q, g), options=AuditOptions(min_score=0.0))
    found = [s for s in result.suspects if s.item == "a5"]
    assert len(found) == 1  # A_3's list differs (a junk image): still one problem
    assert found[0].kind == NEG_POS and set(found[0].queries) == {"A_1", "A_2", "A_3"}
    assert {(c.query, c.label) for c in found[0].fixes()} == {
        ("A_1", "good"), ("A_2", "good"), ("A_3", "good")}
    # no (query list, item) is named by two entries
    named = [(q, s.item) for s in result.suspects if s.query for q in s.queries]
    assert len(named) == len(set(named))


# -- an image in the wrong list ------------------------------------------------------------

def two_landmarks():  # type: ignore[no-untyped-def]
    """The Oxford-like case with a query B_1 of landmark B: a3, a view of A, is moved out of
    A's lists into B_1's good list."""
    ds, q, g = oxford_case({"a3": "negative"})
    index = {n: i for i, n in enumerate(ds.gallery)}
    good = [index[f"b{i}"] for i in range(VIEWS)] + [index["a3"]]
    b_query = build_query("B_1", "b1", {"good": good, "ok": [], "junk": []},
                          self_index=index["b1"])
    both = replace(ds, queries=(*ds.queries, b_query))
    return both, np.concatenate([q, g[index["b1"]][None]]), g


def test_a_moved_image_is_one_entry_naming_both_lists_with_both_fixes(tmp_path):
    ds, q, g = two_landmarks()
    result = audit(ds, two_methods(ds, q, g))
    about = [s for s in result.suspects if s.item == "a3"]
    assert len(about) == 1
    s = about[0]
    assert s.kind == WRONG_LIST and set(s.queries) == {"A_1", "A_2", "B_1"}
    assert s.query in ("A_1", "A_2")  # shown where it ranks among the positives
    assert [(c.query, c.label) for c in s.fixes()] == [
        ("A_1", "good"), ("A_2", "good"), ("B_1", "negative")]
    assert s.moves() == (("good", ("A_1", "A_2")), ("negative", ("B_1",)))
    assert s.evidence.startswith("listed good for B_1 but looks like a positive of A_1 and "
                                 "A_2: it ranks ")
    assert "; for B_1 it ranks " in s.evidence
    # the JSON entry lists every correction
    from irviewer.cli.audit import build_audit_report, fix_text

    doc = build_audit_report(ds, result, [], result.suspects[:1])
    row = json.loads(json.dumps(doc))["suspects"][0]
    assert row["corrections"] == [{"queries": ["A_1", "A_2"], "item": "a3", "label": "good"},
                                  {"queries": ["B_1"], "item": "a3", "label": "negative"}]
    assert fix_text(s, "->") == "good: B_1 -> A_1 and A_2"


def test_another_lists_claim_raises_the_doubt_on_a_listing():
    """b0, a view of B, is put into A's lists: with B_1's list (which does not have it) in
    the dataset, its likeness to B's positives makes A's label more probably wrong."""
    ds, q, g = oxford_case({"b0": "good"})
    alone = audit(ds, two_methods(ds, q, g), options=AuditOptions(min_score=0.0))
    index = {n: i for i, n in enumerate(ds.gallery)}
    b_query = build_query("B_1", "b1", {"good": [index[f"b{i}"] for i in range(1, VIEWS)],
                                        "ok": [], "junk": []}, self_index=index["b1"])
    both = replace(ds, queries=(*ds.queries, b_query))
    qv = np.concatenate([q, g[index["b1"]][None]])
    claimed = audit(both, two_methods(both, qv, g), options=AuditOptions(min_score=0.0))
    before = next(s for s in alone.suspects if s.item == "b0" and s.kind == POS_NEG)
    after = next(s for s in claimed.suspects if s.item == "b0" and "A_1" in s.queries)
    assert after.kind == WRONG_LIST  # and it belongs rather to B than to no list
    assert after.order() > before.order()


def test_an_unrelated_image_put_into_a_list_is_found_by_its_likeness_and_its_neighbours():
    """d3, a random distractor, is put into A's good list: nothing lists its neighbours, and
    it looks like A's positives less than any of them does."""
    ds, q, g = oxford_case({"d3": "good"})
    result = audit(ds, two_methods(ds, q, g))
    found = [s for s in result.suspects if s.item == "d3"]
    assert len(found) == 1 and found[0].kind == POS_NEG
    assert found[0].query in ("A_1", "A_2") and set(found[0].queries) == {"A_1", "A_2"}
    assert "none of its 10 nearest gallery images is a positive of any list" in \
        found[0].evidence
    assert re.search(r"its mean cosine with its 5 most similar positives of the list of A_1 "
                     r"and A_2 is -?\d\.\d\d: above that of .* and below that of all 15 of the "
                     r"list's other positives", found[0].evidence)



def test_a_good_label_unlike_its_list_is_more_suspect_than_an_ok_label_alike():
    """Five distractors are A's "ok" views (part of the landmark, far from its other views,
    as Oxford's ok views seen from another side are) and one is put into A's good list: with
    the same evidence (nothing near it is A's, it looks like no positive of A), the good
    label is the surer error, since A's good positives are never that far and its ok ones
    often are: each label is judged against the positives of its own group."""
    ds, q, g = oxford_case({"d1": "ok", "d2": "ok", "d3": "ok", "d4": "ok", "d6": "ok",
                            "d5": "good"}, seed=3)
    result = audit(ds, two_methods(ds, q, g), options=AuditOptions(min_score=0.0))
    odds = {s.item: s.log_odds for s in result.suspects if s.kind == POS_NEG}
    assert set(odds) >= {"d1", "d2", "d3", "d4", "d5", "d6"}
    assert odds["d5"] > max(odds[d] for d in ("d1", "d2", "d3", "d4", "d6")) + 1.0

# -- the words a person checks ---------------------------------------------------------------

#: Phrasings that must never occur in an evidence sentence.
FORBIDDEN = (
    (r"\b0(\.0+)?%[^;]*\b0(\.0+)?%", "a share of 0 % compared with 0 %"),
    (r"share as (high|low) as that of 0(\.0+)?%", "a share compared with nobody's"),
    (r"\(100%\)|\b100(\.0+)?% \(", "a part printed as 100 %"),
    (r"probability", "a probability in the evidence (the score says it)"),
    (r"\b1\.0+\b", "a number printed as 1 that is not"),
    (r"none of [^;]*, as many as for", "nothing compared with how many have at least nothing"),
)


def check_sentence(text: str) -> list[str]:
    """Return what is wrong with an evidence sentence: forbidden phrasings, and counts past
    the numbers they are part of ("11 of its 10", "above 5 of its 4 positives")."""
    wrong = [why for pattern, why in FORBIDDEN if re.search(pattern, text)]
    for part, whole in re.findall(r"\b(\d[\d,]*) of (?:its )?(\d[\d,]*)\b", text):
        if int(part.replace(",", "")) > int(whole.replace(",", "")):
            wrong.append(f"{part} of {whole}: a count past its whole")
    for pct, part, whole in re.findall(r"([\d.]+)% \((\d[\d,]*) of (\d[\d,]*)\)", text):
        n, of = int(part.replace(",", "")), int(whole.replace(",", ""))
        if not (0 < n < of) or not 0 < float(pct) < 100:
            wrong.append(f"{pct}% ({part} of {whole}): a share that says none or all")
    for part, whole, _pct in re.findall(r"(\d[\d,]*) of its (\d[\d,]*) \w+(?: \w+)? \(([\d.]+)%",
                                       text):
        n, of = int(part.replace(",", "")), int(whole.replace(",", ""))
        if not 0 < n < of:
            wrong.append(f"{part} of {whole}: a share that says none or all")
    return wrong


def test_the_checker_catches_the_sentences_that_read_as_nonsense():
    """The sentences the queue once wrote are caught (so the checker can fail)."""
    assert check_sentence("50% of its nearest labelled gallery images are positives of the "
                          "query, a share as high as that of 0% of its positives and only "
                          "0.0% of its negatives")
    assert check_sentence("only 0% of its nearest labelled gallery images are other "
                          "positives, a share as low as that of 0% of its other positives")
    assert check_sentence("ranks 3rd, above 52 of its 50 positives")
    assert check_sentence("above that of 4,948 of 4,951 (100%) of its negatives")
    assert check_sentence("none of its 10 nearest labelled gallery images is a positive of the "
                          "list, as many as for all 12 of the list's positives")
    assert not check_sentence("none of its 10 nearest labelled gallery images is another "
                              "positive of A's list, as few as for 7 of its 53 other "
                              "positives and 4,836 of its 5,002 negatives (97%)")


def every_sentence() -> list[Suspect]:
    """Return the suspects of several audits: lists with each kind of problem, image labels,
    at the default cut and below it."""
    suspects: list[Suspect] = []
    for labels in ({"a5": "negative"}, {"b0": "good"}, {"d3": "good", "a5": "negative"}):
        ds, q, g = oxford_case(labels)
        suspects += audit(ds, two_methods(ds, q, g), options=AuditOptions(min_score=0.0)
                          ).suspects[:40]
    ds, q, g = two_landmarks()
    suspects += audit(ds, two_methods(ds, q, g), options=AuditOptions(min_score=0.0)
                      ).suspects[:40]
    ds, q, g = labelled_case({14: "L0", 3: "L5"})
    suspects += audit(ds, two_methods(ds, q, g), options=AuditOptions(min_score=0.0)
                      ).suspects
    return suspects


def test_no_evidence_sentence_says_what_a_person_cannot_check():
    suspects = every_sentence()
    assert {s.kind for s in suspects} >= {NEG_POS, POS_NEG, WRONG_LIST}
    wrong = {s.evidence: check_sentence(s.evidence) for s in suspects}
    assert not {k: v for k, v in wrong.items() if v}
    for s in suspects:
        assert score_words(s) not in ("1", "1.0", "1.00", "1.0000") or s.score == 1.0


@given(st.integers(0, 10_000), st.integers(1, 10_000))
def test_a_share_is_never_printed_as_none_or_all_when_it_is_neither(n, of):
    n = min(n, of)
    text = percent(n, of)
    value = float(text.rstrip("%"))
    if 0 < n < of:
        assert 0 < value < 100
    assert abs(value - 100 * n / of) <= max(0.5, 0.5 * 100 * n / of)
    words = of_its(n, of, "negatives")
    assert (words.startswith("none") == (n == 0)) and (words.startswith("all") == (n == of
                                                                                   > 1))


def test_query_names_are_folded_as_people_read_them():
    assert span(["all_souls_1", "all_souls_2", "all_souls_3", "all_souls_4",
                 "all_souls_5"]) == "all_souls_1–5"
    assert span(["a_1", "a_2", "a_3", "a_5"]) == "a_1–3 and a_5"
    assert span(["h_2", "h_3"]) == "h_2 and h_3"
    assert span(["x"]) == "x"
    assert span([f"q{i}" for i in (1, 3, 5, 7, 9, 11)]) == "q1, q3 and 4 more"
    assert span(["q_9", "q_10", "q_11"]) == "q_9–11"
    assert span(["h_000015", "o_001752", "x_0007", "x_0008", "x_0009"]) == \
        "h_000015, o_001752 and x_0007–0009"  # names keep their digits
