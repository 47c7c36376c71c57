"""What the window offers and shows of corrections, headless: the family's menu entries and
keys, the relabel offer and its preview count, the corrected marks, the panel's rows, both
numbers of the summary, and CorrectionState keeping Opened in step (a correction, its undo,
the published switch) with exactly a full evaluation's values."""

from __future__ import annotations

import numpy as np
import pytest

from irviewer.core.corrections import (
    Correction,
    CorrectionCommand,
    NothingToChangeError,
    RemoveCorrectionCommand,
    preview_relabel,
)
from irviewer.core.evaluation import evaluate
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest
from irviewer.view.corrections import (
    CorrectionState,
    both_numbers,
    corrected_items,
    log_rows,
    pair_menu,
    relabel_offer,
    relabel_preview,
    relation,
    uncorrectable_reason,
)
from tests.corrections_cases import make_case
from tests.test_ground_truth_updates import assert_same

#: Each family's menu (words in order): its relevance groups in the benchmark's words.
MENUS = {
    "manifest": ["relevant", "not relevant", "ignored"],
    "instances": ["relevant", "not relevant", "ignored"],
    "reid": ["relevant", "not relevant", "ignored"],
    "oxford": ["good", "ok", "junk", "negative"],
    "revisited": ["easy", "hard", "junk", "negative"],
    "holidays": ["relevant", "not relevant"],
}


@pytest.fixture(scope="module")
def opened_cases(tmp_path_factory):
    out = {}
    for i, fam in enumerate(MENUS):
        case = make_case(fam, tmp_path_factory.mktemp(fam), seed=i)
        out[fam] = open_now(OpenRequest(case.dataset, (case.descriptors,),
                                        options=case.options))
    return out


@pytest.mark.parametrize("fam", list(MENUS))
def test_the_menu_offers_the_familys_own_groups_with_keys_and_the_current_one(
        opened_cases, fam):
    ds = opened_cases[fam].dataset
    q = 0
    positive = int(ds.queries[q].relevance[next(iter(ds.queries[q].relevance))][0])
    menu = pair_menu(ds, q, positive)
    assert [c.text for c in menu] == MENUS[fam]
    assert [c.key for c in menu] == ["1", "2", "3", "4"][:len(menu)]
    current = [c for c in menu if c.current]
    assert len(current) == 1 and current[0].label == relation(ds, q, positive)
    assert current[0].label != "negative"


def test_hpatches_offers_nothing_and_says_why(tmp_path):
    from tests.formats.test_hpatches import read

    ds = read(tmp_path)
    assert pair_menu(ds, 0, 0) == ()
    assert relabel_offer(ds, 0, 0) is None
    assert "geometry" in uncorrectable_reason(ds)


def test_relabel_offer_and_preview_count_match_the_core(opened_cases):
    ds = opened_cases["manifest"].dataset
    q = 0
    g = int(np.flatnonzero(~np.isin(np.arange(ds.n_gallery), ds.queries[q].group("positive")))[0])
    offer = relabel_offer(ds, q, g)
    assert offer is not None
    assert offer.item == ds.gallery[g]
    assert offer.query_label == str(ds.queries[q].meta["label"])
    assert offer.query_label in offer.labels and offer.current in offer.labels
    n = preview_relabel(ds, offer.item, offer.query_label)
    assert n > 0
    count, sentence = relabel_preview(ds, offer.item, offer.query_label)
    assert count == n and f"{n} quer" in sentence
    assert relabel_preview(ds, offer.item, offer.current)[0] == 0
    assert relabel_offer(opened_cases["oxford"].dataset, 0, 0) is None


def test_reid_relabel_to_junk_is_refused_with_the_cores_sentence(opened_cases):
    ds = opened_cases["reid"].dataset
    labels = np.asarray(ds.gallery_labels)
    person = ds.gallery[int(np.flatnonzero(labels > 0)[0])]
    count, sentence = relabel_preview(ds, person, "-1")
    assert count is None and "junk" in sentence
    junk = ds.gallery[int(np.flatnonzero(labels == -1)[0])]  # already -1: nothing to do
    assert relabel_preview(ds, junk, "-1") == (0, f"{junk} already has label -1: nothing "
                                                  "changes")


def test_state_keeps_opened_equal_to_a_full_evaluation_through_do_undo_and_switch(
        opened_cases):
    opened = opened_cases["oxford"]
    method, protocol = opened.first.name, opened.protocols[0]
    ev0 = opened.evaluation(method, protocol)
    published_ap = ev0.per_query["AP"].copy()
    state = CorrectionState(opened)
    ds = opened.dataset
    q, g = 1, int(ds.queries[1].group("good")[0])
    command = CorrectionCommand(Correction(ds.queries[q].name, ds.gallery[g], "negative"))
    changed = state.do(command)
    assert changed.tolist() == [q]
    ev = opened.evaluation(method, protocol)
    assert_same(ev, evaluate(state.log.dataset, ev.ranking, ev.protocol))
    assert ev.per_query["AP"][q] != published_ap[q]
    assert corrected_items(state.log, q) == {g}
    assert corrected_items(state.log, 0) == frozenset()
    # both numbers: the published one is the evaluation before the correction
    pub = state.published_evaluation(ev)
    np.testing.assert_array_equal(pub.per_query["AP"], published_ap)
    line = both_numbers(pub, ev, False, 1)
    assert f"{100 * ev0.summary['mAP']:.2f} published → <b>{100 * ev.summary['mAP']:.2f}" in line
    # the switch: published, then corrected again, only the corrected query re-scored
    assert state.show_published(True).tolist() == [q]
    np.testing.assert_array_equal(opened.evaluation(method, protocol).per_query["AP"],
                                  published_ap)
    state.show_published(False)
    assert_same(opened.evaluation(method, protocol), ev)
    # undo restores exactly
    state.undo(command)
    np.testing.assert_array_equal(opened.evaluation(method, protocol).per_query["AP"],
                                  published_ap)
    assert opened.dataset.queries[q] is ds.queries[q]


def test_a_correction_while_published_is_shown_switches_back_first(opened_cases):
    opened = opened_cases["holidays"]
    state = CorrectionState(opened)
    ds = opened.dataset
    first = CorrectionCommand(Correction(ds.queries[0].name,
                                         ds.gallery[int(ds.queries[0].group("positive")[0])],
                                         "negative"))
    state.do(first)
    state.show_published(True)
    second = CorrectionCommand(Correction(ds.queries[1].name,
                                          ds.gallery[int(ds.queries[1].group("positive")[0])],
                                          "negative"))
    state.do(second)
    assert not state.showing_published
    ev = opened.evaluation(opened.first.name, opened.protocols[0])
    assert_same(ev, evaluate(state.log.dataset, ev.ranking, ev.protocol))
    state.undo(second)
    state.undo(first)


def test_the_published_view_offers_and_edits_the_corrected_relation(opened_cases):
    """In the published view the menu ticks the corrected relation (the one an edit
    changes) and says what the published labels say; a choice that sets what the
    corrected ground truth has is refused with a sentence, and the view stays."""
    opened = opened_cases["holidays"]
    state = CorrectionState(opened)
    ds = opened.dataset
    name, g = ds.queries[0].name, int(ds.queries[0].group("positive")[0])
    first = CorrectionCommand(Correction(name, ds.gallery[g], "negative"))
    assert state.relation_menu(0, g).note == ""
    assert state.relation_menu(0, g).title == "Relation to the query"
    state.do(first)
    state.show_published(True)
    menu = state.relation_menu(0, g)
    assert [c.text for c in menu.choices if c.current] == ["not relevant"]
    assert menu.title == "Relation to the query (corrected ground truth)"
    assert menu.note == ("Published: relevant · a choice edits the corrected ground truth "
                         "and shows it")
    again = CorrectionCommand(Correction(name, ds.gallery[g], "negative"))
    with pytest.raises(NothingToChangeError) as e:
        state.do(again)
    assert state.showing_published and len(state.log) == 1
    assert state.nothing_to_change(e.value) == (
        f"{ds.gallery[g]} is already not relevant for {name} in the corrected ground truth "
        "(the published one is shown): nothing to change")
    state.show_published(False)
    assert state.nothing_to_change(e.value).endswith("for " + name + ": nothing to change")
    state.undo(first)


def test_panel_rows_say_the_familys_words_and_where_to_jump(opened_cases):
    opened = opened_cases["manifest"]
    state = CorrectionState(opened)
    ds = opened.dataset
    g = int(ds.queries[0].group("positive")[0])
    state.do(CorrectionCommand(Correction(ds.queries[0].name, ds.gallery[g], "negative",
                                          "ann", "2026-11-23T14:00:00Z", "a copy")))
    label = str(ds.queries[1].meta["label"])
    other = int(np.flatnonzero(np.asarray(ds.gallery_labels).astype(str) != label)[0])
    state.do(CorrectionCommand(Correction("", ds.gallery[other], label)))
    rows = log_rows(state.log)
    assert rows[0].query == ds.queries[0].name and rows[0].change() == "relevant → not relevant"
    assert (rows[0].author, rows[0].note, rows[0].jump_to) == ("ann", "a copy", 0)
    n_changed = len(state.log.entries[1].changed)
    assert rows[1].query == f"every query ({n_changed} changed)" and rows[1].after == label
    assert rows[1].jump_to == int(state.log.entries[1].changed[0])
    assert other in corrected_items(state.log, 1)
    remove = RemoveCorrectionCommand(0)
    state.do(remove)
    assert len(log_rows(state.log)) == 1
    state.undo(remove)
    assert len(log_rows(state.log)) == 2


def test_uncorrectable_reason_is_empty_where_corrections_apply(opened_cases):
    assert all(uncorrectable_reason(o.dataset) == "" for o in opened_cases.values())
