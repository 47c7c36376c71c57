"""The label audit on hand-built cases: each kind is found where it is planted, and not where the
protocol says the label does not count (junk, same camera, id -1) or where a view is merely
hard. Every case plants one error and asserts on the exact suspect."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np
import pytest

from irviewer.core.audit import (
    DUPLICATE,
    HUB,
    LABEL,
    NEG_POS,
    POS_NEG,
    QUERY,
    AuditOptions,
    audit,
    ordinal,
    rank_phrase,
    under,
)
from irviewer.core.dataset import Dataset, build_query
from irviewer.core.errors import InputError
from irviewer.core.ranking import rank
from tests.core.helpers import aligned

DIM = 32
#: Random distractors of the Oxford-like case: enough negatives for each set's histograms
#: (the joint histogram of the three nearness shares has 6^3 cells for 16 positives).
DISTRACTORS = 400
#: Views of each landmark of the Oxford-like case.
VIEWS = 16


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    """Return n random orthogonal-ish unit centres."""
    c = rng.standard_normal((n, DIM)).astype(np.float32)
    q, _ = np.linalg.qr(c.T)
    return q.T[:n].astype(np.float32)


def views(rng: np.random.Generator, centre: np.ndarray, n: int, noise: float = 0.15) -> np.ndarray:
    """Return n noisy views of a centre."""
    return (centre + noise * rng.standard_normal((n, DIM)) / np.sqrt(DIM)).astype(np.float32)


def two_methods(ds: Dataset, queries: np.ndarray, gallery: np.ndarray, seed: int = 1,
                noise: float = 0.05) -> dict:
    """Return two rankings of the same vectors seen through independent small noise."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in ("A", "B"):
        q = queries + noise * rng.standard_normal(queries.shape).astype(np.float32) / np.sqrt(DIM)
        g = gallery + noise * rng.standard_normal(gallery.shape).astype(np.float32) / np.sqrt(DIM)
        out[name] = rank(aligned(q, g), ds, k=50)
    return out


def of_kind(result, kind: str) -> list:  # type: ignore[no-untyped-def]
    return [s for s in result.suspects if s.kind == kind]


# -- an Oxford-like set: good/ok/junk per query ------------------------------------------

def oxford_case(labels: dict[str, str] | None = None, seed: int = 0):  # type: ignore[no-untyped-def]
    """Landmarks A and B (16 views each, B opposite to A) and 400 random distractors; two
    queries of A, whose good list is A's views but a5 (a view from further away) and whatever
    ``labels`` changes."""
    rng = np.random.default_rng(seed)
    ca = unit(rng, 1)[0]
    spread = views(rng, ca, VIEWS, 0.15)
    spread[1:] += 0.8 * unit(rng, VIEWS)[1:]  # the labelled positives: views from aside
    spread[5] = views(rng, ca, 1, 0.4)[0]
    gallery = np.concatenate([spread, views(rng, -ca, VIEWS),
                              rng.standard_normal((DISTRACTORS, DIM)).astype(np.float32)
                              / np.sqrt(DIM)])
    names = [f"a{i}" for i in range(VIEWS)] + [f"b{i}" for i in range(VIEWS)] + [
        f"d{i}" for i in range(DISTRACTORS)]
    groups = {"good": [f"a{i}" for i in range(VIEWS) if i != 5], "ok": [], "junk": []}
    for name, group in (labels or {}).items():
        for g in groups.values():
            if name in g:
                g.remove(name)
        if group != "negative":
            groups[group].append(name)
    index = {n: i for i, n in enumerate(names)}
    queries = [build_query(f"A_{j}", "a0", {g: [index[n] for n in v] for g, v in groups.items()},
                           self_index=0) for j in (1, 2)]
    ds = Dataset(name="oxlike", format="oxford", path=None, gallery=tuple(names),
                 queries=tuple(queries), groups=("good", "ok", "junk"), protocols=("oxford",))
    qvec = np.stack([gallery[0], views(rng, ca, 1)[0]])
    return ds, qvec, gallery


def test_negative_that_looks_positive_is_found_with_its_fix():
    ds, q, g = oxford_case({"a5": "negative"})
    result = audit(ds, two_methods(ds, q, g))
    found = [s for s in of_kind(result, NEG_POS) if s.item == "a5"]
    assert len(found) == 1  # one problem: the two queries share their lists
    s = found[0]
    assert s.queries == ("A_1", "A_2") and s.query in s.queries
    assert [(c.query, c.item, c.label) for c in s.fixes()] == [("A_1", "a5", "good"),
                                                               ("A_2", "a5", "good")]
    assert (s.labelled, s.suggested, s.methods_agreeing, s.n_methods) == ("negative", "good", 2, 2)
    assert s.correction is not None
    assert (s.correction.query, s.correction.label) == (s.query, "good")
    assert "under both methods" in s.evidence and "above all 14 of its positives" in s.evidence
    assert 0.5 <= s.score <= 1.0
    assert [name for name, _ in s.ranks] == ["A", "B"]
    assert all(r is not None and r <= 6 for _, r in s.ranks)
    assert result.suspects[0].item == "a5"  # the planted error comes first


def test_one_method_disagreeing_is_not_a_label_error():
    ds, q, g = oxford_case({"a5": "negative"})
    methods = two_methods(ds, q, g)
    g2 = g.copy()
    g2[5] = -g2[5]  # method B puts a5 with landmark B
    methods["B"] = rank(aligned(q, g2), ds, k=50)
    assert not [s for s in audit(ds, methods).suspects if s.item == "a5"]


def test_junk_is_never_reported():
    ds, q, g = oxford_case({"a5": "junk", "b0": "junk"})
    result = audit(ds, two_methods(ds, q, g))
    assert not [s for s in result.suspects if s.item in ("a5", "b0")]


def test_positive_that_looks_negative_is_found():
    ds, q, g = oxford_case({"b0": "good"})
    result = audit(ds, two_methods(ds, q, g))
    found = [s for s in of_kind(result, POS_NEG) if s.item == "b0"]
    assert len(found) == 1 and set(found[0].queries) == {"A_1", "A_2"}
    assert found[0].suggested == "negative" and found[0].labelled == "good"
    assert re.search(r"below (9\d(\.\d+)?)% \(\d+ of \d+\) of its negatives", found[0].evidence)
    assert re.search(r"none of its 10 nearest labelled gallery images is another positive of "
                     r"the list of A_1 and A_2, as few as for none of the list's 15 other "
                     r"positives", found[0].evidence)
    assert re.search(r"\(\d+(st|nd|rd|th) for A_[12]\)", found[0].evidence)


def test_a_hard_view_like_the_other_positives_is_not_a_positive_that_looks_negative():
    """A view the query ranks low but whose nearest gallery image is another positive."""
    rng = np.random.default_rng(3)
    ca, _, cc = unit(rng, 3)
    far = (-0.3 * ca + cc).astype(np.float32)  # two views from far away: mostly cc
    gallery = np.concatenate([views(rng, ca, 4), np.stack([far, far + 0.02 * cc]),
                              rng.standard_normal((30, DIM)).astype(np.float32)])
    names = [f"a{i}" for i in range(6)] + [f"d{i}" for i in range(30)]
    ds = Dataset(name="far", format="oxford", path=None, gallery=tuple(names),
                 queries=(build_query("A_1", "a0", {"good": range(6), "ok": [], "junk": []},
                                      self_index=0),),
                 groups=("good", "ok", "junk"), protocols=("oxford",))
    result = audit(ds, two_methods(ds, gallery[:1], gallery))
    assert not [s for s in of_kind(result, POS_NEG) if s.item in ("a4", "a5")]


def test_query_without_any_positive_near_the_top():
    ds, q, g = oxford_case({f"a{i}": "negative" for i in range(1, VIEWS)} | {
        f"b{i}": "good" for i in range(4)})
    result = audit(ds, two_methods(ds, q, g), options=AuditOptions(query_top=5))
    found = [s for s in of_kind(result, QUERY) if s.query == "A_2"]
    assert found and found[0].suggested is None and found[0].correction is None
    assert "no method finds any of its 4 positives in its top 5" in found[0].evidence


def incoherent_case() -> tuple[Dataset, np.ndarray, np.ndarray]:
    """Seven queries with four views of their instance as positives, and q7 whose four
    positives are one view of each of four instances."""
    rng = np.random.default_rng(5)
    centres = unit(rng, 8)
    gallery = np.concatenate([views(rng, c, 4) for c in centres])
    names = [f"g{i}" for i in range(len(gallery))]
    queries = [build_query(f"q{j}", f"q{j}", {"positive": range(4 * j, 4 * j + 4)})
               for j in range(7)]
    # the last query's positives: one view of each of four different instances
    queries.append(build_query("q7", "q7", {"positive": [0, 4, 8, 12]}))
    ds = Dataset(name="incoherent", format="test", path=None, gallery=tuple(names),
                 queries=tuple(queries), groups=("positive",), protocols=("instance",))
    qv = np.concatenate([views(rng, centres[j], 1) for j in range(8)])
    return ds, qv, gallery


def test_query_with_mutually_dissimilar_positives():
    ds, qv, gallery = incoherent_case()
    result = audit(ds, two_methods(ds, qv, gallery))
    found = [s for s in of_kind(result, QUERY) if s.query == "q7"]
    assert found and "its 4 positives are mutually dissimilar" in found[0].evidence
    assert "between them," in found[0].evidence
    assert not [s for s in of_kind(result, QUERY) if "mutually" in s.evidence
                and s.query != "q7"]


def test_the_coherence_cap_never_under_reports_the_positives(monkeypatch):
    """Past COHERENCE_POSITIVES the mean cosine is of the first ones only: the sentence
    still gives the query's whole count and says which positives the cosine is of."""
    from irviewer.core.audit import kinds

    monkeypatch.setattr(kinds, "COHERENCE_POSITIVES", 3)
    ds, qv, gallery = incoherent_case()
    found = [s for s in of_kind(audit(ds, two_methods(ds, qv, gallery)), QUERY)
             if s.query == "q7"]
    assert found and "its 4 positives are mutually dissimilar" in found[0].evidence
    assert "between the first 3 of them," in found[0].evidence


# -- image labels: instance sets and re-id -----------------------------------------------

def labelled_case(relabel: dict[int, str] | None = None, decoy: int | None = None,
                  seed: int = 0):  # type: ignore[no-untyped-def]
    """Six instances L0..L5 with 6 gallery views and one query each (queries apart from the
    gallery, as in CLICIDE); ``relabel`` changes gallery labels, ``decoy`` makes a view far
    from everything."""
    rng = np.random.default_rng(seed)
    centres = unit(rng, 6)
    gallery = np.concatenate([views(rng, c, 6) for c in centres])
    labels = [f"L{i // 6}" for i in range(len(gallery))]
    for g, lab in (relabel or {}).items():
        labels[g] = lab
    if decoy is not None:
        gallery[decoy] = 0.15 * gallery[decoy] + rng.standard_normal(DIM).astype(np.float32)
    names = [f"g{i:02d}" for i in range(len(gallery))]
    queries = [build_query(f"q{j}", f"q{j}", {"positive": [i for i, lab in enumerate(labels)
                                                           if lab == f"L{j}"]},
                           meta={"label": f"L{j}"}) for j in range(6)]
    ds = Dataset(name="inst", format="manifest", path=None, gallery=tuple(names),
                 queries=tuple(queries), groups=("positive",), protocols=("instance",),
                 gallery_labels=np.asarray(labels))
    qv = np.concatenate([views(rng, c, 1) for c in centres])
    return ds, qv, gallery


def test_image_whose_neighbours_carry_another_label_gets_one_relabel():
    ds, q, g = labelled_case({14: "L0"})  # g14 is a view of L2 labelled L0
    result = audit(ds, two_methods(ds, q, g))
    found = [s for s in result.suspects if s.item == "g14"]
    assert len(found) == 1  # the pair findings are folded into the image-level one
    s = found[0]
    assert (s.kind, s.query, s.labelled, s.suggested) == (LABEL, None, "L0", "L2")
    assert s.correction is not None and (s.correction.query, s.correction.label) == ("", "L2")
    assert "of its 5 nearest gallery images carry L2 under both methods" in s.evidence
    assert result.suspects[0].item == "g14"


def test_a_view_far_from_everything_is_not_relabelled():
    ds, q, g = labelled_case(decoy=8)
    result = audit(ds, two_methods(ds, q, g))
    assert not [s for s in result.suspects if s.item == "g08" and s.kind in (LABEL, POS_NEG)]


def test_near_identical_descriptors_with_different_labels():
    ds, q, g = labelled_case()
    g[20] = g[3]  # g20 (labelled L3) is the same picture as g03 (L0)
    result = audit(ds, two_methods(ds, q, g, noise=0.0))
    found = of_kind(result, DUPLICATE)
    assert found and {found[0].item, found[0].suggested} in ({"g20", "L0"}, {"g03", "L3"})
    assert "near-identical to" in found[0].evidence and found[0].score >= 0.8


@pytest.mark.parametrize("readers_mapping", [False, True])
def test_identical_image_bytes_with_different_labels(tmp_path, readers_mapping):
    from dataclasses import replace

    from irviewer.formats.base import ImageFiles

    ds, q, g = labelled_case()
    paths = {}
    for i, name in enumerate(ds.gallery):
        paths[name] = tmp_path / f"{name}.jpg"
        paths[name].write_bytes(b"same" if i in (2, 33) else f"image {i}".encode())
    (tmp_path / "empty1.jpg").write_bytes(b"")
    # a plain mapping of Paths, or the readers' ImageFiles (paths as text for the audit)
    ds = replace(ds, image_paths=ImageFiles(tmp_path, {n: f"{n}.jpg" for n in ds.gallery})
                 if readers_mapping else paths)
    result = audit(ds, two_methods(ds, q, g))
    found = [s for s in of_kind(result, DUPLICATE) if "same image bytes" in s.evidence]
    assert len(found) == 1 and found[0].score == 1.0
    assert {found[0].item} <= {"g02", "g33"}


def test_hub_in_the_top_of_many_queries():
    rng = np.random.default_rng(7)
    centres = unit(rng, 10)
    hub = centres.sum(axis=0)
    gallery = np.concatenate([views(rng, c, 2, 0.05) for c in centres] + [hub[None]])
    names = [f"g{i}" for i in range(20)] + ["hub"]
    labels = [f"L{i // 2}" for i in range(20)] + ["H"]
    queries = [build_query(f"q{j}", f"q{j}", {"positive": [2 * j, 2 * j + 1]},
                           meta={"label": f"L{j}"}) for j in range(10)]
    ds = Dataset(name="hubs", format="manifest", path=None, gallery=tuple(names),
                 queries=tuple(queries), groups=("positive",), protocols=("instance",),
                 gallery_labels=np.asarray(labels))
    qv = np.stack([views(rng, c, 1, 0.05)[0] for c in centres])
    result = audit(ds, two_methods(ds, qv, gallery), options=AuditOptions(hub_top=3,
                                                                          hub_factor=3))
    found = of_kind(result, HUB)
    assert [s.item for s in found] == ["hub"]
    assert found[0].score <= 0.5 and found[0].correction is None
    assert "in the top 3 of 10 queries it is not relevant to" in found[0].evidence


def reid_case():  # type: ignore[no-untyped-def]
    """Persons 1..4 (5 views each, cameras 1-2), distractors (id 0) and junk (id -1)."""
    rng = np.random.default_rng(11)
    centres = unit(rng, 6)
    rows, pids, cams = [], [], []
    for p in range(1, 5):
        rows.append(views(rng, centres[p], 5))
        pids += [p] * 5
        cams += [1, 1, 2, 2, 2]
    junk = views(rng, centres[1], 1, 0.0)  # id -1, identical to person 1's look
    distractor = views(rng, centres[2], 1, 0.05)  # id 0 that is really person 2
    rows += [junk, distractor, views(rng, centres[5], 3)]
    pids += [-1, 0, 0, 0, 0]
    cams += [3, 3, 3, 3, 3]
    gallery = np.concatenate(rows)
    # person 1's camera-1 view g01 is a far view (removed for query p1 on camera 1)
    gallery[1] = -centres[1]
    pids_arr = np.asarray(pids)
    queries = []
    for p in range(1, 5):
        same = np.flatnonzero(pids_arr == p)
        on_cam = np.asarray(cams)[same] == 1
        queries.append(build_query(f"p{p}", f"p{p}", {"positive": same[~on_cam],
                                                       "same_camera": same[on_cam]},
                                   meta={"label": p, "camera": 1}))
    names = [f"g{i:02d}" for i in range(len(gallery))]
    ds = Dataset(name="reid", format="reid", path=None, gallery=tuple(names),
                 queries=tuple(queries), groups=("positive", "same_camera"),
                 protocols=("market1501",), global_ignored=np.flatnonzero(pids_arr == -1),
                 gallery_labels=pids_arr)
    qv = np.stack([views(rng, centres[p], 1)[0] for p in range(1, 5)])
    return ds, qv, gallery


def test_reid_protocol_junk_and_same_camera_are_never_reported_distractors_are():
    ds, q, g = reid_case()
    result = audit(ds, two_methods(ds, q, g))
    items = {s.item for s in result.suspects}
    assert "g20" not in items  # id -1 junk, identical to person 1
    assert not [s for s in result.suspects if s.item == "g01" and s.query == "p1"]
    distractor = [s for s in result.suspects if s.item == "g21"]
    assert distractor and distractor[0].labelled == "0" and distractor[0].suggested == "2"


# -- inputs and wording ------------------------------------------------------------------

def test_bad_inputs_are_one_sentence():
    ds, q, g = labelled_case()
    methods = two_methods(ds, q, g)
    with pytest.raises(InputError, match="give at least one descriptor file or ranking"):
        audit(ds, {})
    with pytest.raises(InputError, match="minimum score must be in"):
        AuditOptions(min_score=1.5)
    with pytest.raises(InputError, match="near-duplicate cosine must be in"):
        AuditOptions(duplicate_cosine=0)
    from dataclasses import replace

    with pytest.raises(InputError, match="HPatches labels come from geometry"):
        audit(replace(ds, protocols=("hpatches-patch",)), methods)
    with pytest.raises(InputError, match="unknown protocol"):
        audit(ds, methods, protocol="nosuch")
    small = replace(ds, queries=ds.queries[:2])
    with pytest.raises(InputError, match="the ranking has 6 queries"):
        audit(small, methods)


def test_precomputed_rankings_alone_still_find_pair_errors():
    """Without vectors only the ranking evidence is left: the planted negative is still the
    most probable negative that looks positive, though 432 images cannot make it probable
    enough for the default cut (the histograms of 15 positives carry little; by its rank
    alone, the last of a list's positives is always doubted)."""
    from irviewer.core.ranking import ranking_from_lists

    ds, q, g = oxford_case({"a5": "negative"})
    lists = {n: ranking_from_lists(ds, r.top_indices, r.top_scores, n)
             for n, r in two_methods(ds, q, g).items()}
    result = audit(ds, lists, options=AuditOptions(min_score=0.0))
    pairs = [s for s in result.suspects if s.kind == NEG_POS]
    assert pairs[0].item == "a5"
    assert "nearest labelled gallery images" not in pairs[0].evidence
    assert any("only precomputed rankings" in n for n in result.notes)


def test_scores_are_in_unit_interval_and_sorted():
    ds, q, g = labelled_case({14: "L0", 3: "L5"}, decoy=30)
    result = audit(ds, two_methods(ds, q, g))
    scores = [s.score for s in result.suspects]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)


def test_words():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]
    assert rank_phrase([2, 2]) == "2nd"
    assert rank_phrase([2, 5]) == "2nd and 5th"
    assert rank_phrase([1, None, 3]) == "1st, unranked and 3rd"
    assert under(1) == "under the one method"
    assert under(2) == "under both methods"
    assert under(3) == "under all 3 methods"


def test_a_positive_another_unrelated_list_claims_comes_first_with_the_claim_said():
    """b0 is listed good for landmark A (wrongly: it is a view of B) and for B_1, whose list
    shares nothing else with A's: the two claims compete, and the one b0 fits worse (A) is
    the suspect, more certain than without B's claim; B's own claim is not doubted."""
    ds, q, g = oxford_case({"b0": "good"})
    alone = audit(ds, two_methods(ds, q, g), options=AuditOptions(min_score=0.0))
    index = {n: i for i, n in enumerate(ds.gallery)}
    b_query = build_query("B_1", "b1", {"good": [index[f"b{i}"] for i in range(VIEWS)],
                                        "ok": [], "junk": []}, self_index=index["b1"])
    both = replace(ds, queries=(*ds.queries, b_query))
    qv = np.concatenate([q, g[index["b1"]][None]])
    result = audit(both, two_methods(both, qv, g), options=AuditOptions(min_score=0.0))
    found = [s for s in of_kind(result, POS_NEG) if s.item == "b0"]
    claim = "it is also a positive of B_1, whose list shares hardly any image with this one"
    assert set(found[0].queries) == {"A_1", "A_2"} and claim in found[0].evidence
    assert all("it is also a positive" not in s.evidence for s in found[1:])  # B's stands
    before = next(s for s in of_kind(alone, POS_NEG) if s.item == "b0")
    assert found[0].order() > before.order()
    assert result.suspects[0].item == "b0"


def test_scores_keep_an_order_and_digits_where_the_probability_rounds_to_1():
    from irviewer.core.audit import Suspect, score_words

    def suspect(score: float, log_odds: float | None = None) -> Suspect:
        return Suspect(NEG_POS, score, "q", "x", "negative", "good", "", 1, 1,
                       log_odds=log_odds)

    assert score_words(suspect(0.87)) == "0.87"
    assert score_words(suspect(0.99431)) == "0.9943"
    assert score_words(suspect(1.0, 15.0)) == "1 - 3.1e-07"
    assert score_words(suspect(1.0, 40.0)) == "1 - 4.2e-18"
    # Two suspects whose probability is 1.0 in floating point still have an order.
    assert suspect(1.0, 40.0).order() > suspect(1.0, 38.0).order() > suspect(0.99).order()
    assert abs(suspect(0.9).order() - math.log(9)) < 1e-12
