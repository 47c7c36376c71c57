"""Label corrections on hand-made datasets: what a pair correction and an image relabel do to
the relevance groups (hand-computed), exact undo, the log's remove/insert and saved rows,
the command's label, and the refusals, each with its sentence."""

from __future__ import annotations

import re

import numpy as np
import pytest

from irviewer.core.corrections import (
    Correction,
    CorrectionCommand,
    CorrectionLog,
    NothingToChangeError,
    RemoveCorrectionCommand,
    applied_summary,
    apply_correction,
    beyond_labels,
    pair_choices,
    preview_relabel,
    sets_nothing,
)
from irviewer.core.dataset import Dataset, build_query
from irviewer.core.errors import InputError
from irviewer.core.label_rules import LabelIndex, reid_groups, same_label_groups


def oxford() -> Dataset:
    queries = (build_query("q0", "g0", {"good": [0, 1], "ok": [3], "junk": [2]}, self_index=0),
               build_query("q1", "g4", {"good": [4], "ok": [], "junk": []}, self_index=4))
    return Dataset(name="ox", format="oxford", path=None,
                   gallery=tuple(f"g{i}" for i in range(6)), queries=queries,
                   groups=("good", "ok", "junk"), protocols=("oxford",))


def instance() -> Dataset:
    """Gallery labels a a b b c; qa (query only, a), qb (query only, b), g4 also a query."""
    labels = np.array(["a", "a", "b", "b", "c"])
    index = LabelIndex.of(labels)
    queries = (build_query("qa", "qa", same_label_groups(index, "a"), meta={"label": "a"}),
               build_query("qb", "qb", same_label_groups(index, "b"), meta={"label": "b"}),
               build_query("g4", "g4", same_label_groups(index, "c"), self_index=4,
                           meta={"label": "c"}))
    return Dataset(name="inst", format="manifest", path=None,
                   gallery=tuple(f"g{i}" for i in range(5)), queries=queries,
                   groups=("positive", "junk"), protocols=("instance",),
                   gallery_labels=labels)


def reid(protocol: str = "market1501") -> Dataset:
    """Gallery ids 1 1 2 2 -1 0 on cameras 1 2 1 2 1 1; queries id 1 and id 2 on camera 1."""
    ids, cams = np.array([1, 1, 2, 2, -1, 0]), np.array([1, 2, 1, 2, 1, 1])
    index = LabelIndex.of(ids)
    queries = tuple(build_query(f"p{pid}", f"p{pid}", reid_groups(index, cams, pid, 1),
                                meta={"label": pid, "camera": 1}) for pid in (1, 2))
    return Dataset(name="market", format="reid", path=None,
                   gallery=tuple(f"g{i}" for i in range(6)), queries=queries,
                   groups=("positive", "same_camera"), protocols=(protocol,),
                   global_ignored=np.array([4]), gallery_labels=ids, gallery_cameras=cams)


def replay(published: Dataset, corrections) -> CorrectionLog:
    """The log of ``corrections`` applied in order to ``published``."""
    log = CorrectionLog(published)
    for c in corrections:
        log.push(c)
    return log


def groups(ds: Dataset, q: int) -> dict[str, list[int]]:
    return {g: ds.queries[q].group(g).tolist() for g in ds.groups}


def test_label_index_and_rules_by_hand():
    index = LabelIndex.of(np.array(["b", "a", "b", "c", "a"]))
    assert index.members("a").tolist() == [1, 4] and index.members("zz").tolist() == []
    cams = np.array([1, 2, 1, 3, 1])
    ids = LabelIndex.of(np.array([7, 7, 7, 8, 7]))
    split = reid_groups(ids, cams, 7, 1)
    assert split["positive"].tolist() == [1] and split["same_camera"].tolist() == [0, 2, 4]


def test_a_pair_correction_moves_the_item_to_one_group_and_undoes_exactly():
    ds = oxford()
    change = apply_correction(ds, Correction("q0", "g2", "good"))
    assert change.changed.tolist() == [0] and change.before == "junk"
    assert groups(change.dataset, 0) == {"good": [0, 1, 2], "ok": [3], "junk": []}
    assert change.dataset.queries[1] is ds.queries[1]
    negative = apply_correction(change.dataset, Correction("q0", "g3", "negative"))
    assert groups(negative.dataset, 0) == {"good": [0, 1, 2], "ok": [], "junk": []}
    back = change.undone(negative.undone(negative.dataset))
    assert back.queries[0] is ds.queries[0]
    assert apply_correction(ds, Correction("q0", "g1", "good")).changed.tolist() == []


def test_a_relabel_changes_every_query_its_labels_touch():
    ds = instance()
    assert preview_relabel(ds, "g1", "b") == 2
    change = apply_correction(ds, Correction("", "g1", "b"))
    assert change.changed.tolist() == [0, 1] and change.before == "a"
    assert groups(change.dataset, 0)["positive"] == [0]
    assert groups(change.dataset, 1)["positive"] == [1, 2, 3]
    assert change.dataset.gallery_labels.tolist() == ["a", "b", "b", "b", "c"]
    assert ds.gallery_labels.tolist() == ["a", "a", "b", "b", "c"]  # the published stays
    restored = change.undone(change.dataset)
    assert restored.gallery_labels is ds.gallery_labels
    assert all(a is b for a, b in zip(restored.queries, ds.queries, strict=True))


def test_relabelling_a_query_image_changes_its_own_positives_and_a_longer_label_fits():
    ds = instance()
    change = apply_correction(ds, Correction("", "qa", "c"))
    assert change.changed.tolist() == [0] and groups(change.dataset, 0)["positive"] == [4]
    assert change.dataset.queries[0].meta["label"] == "c"
    both = apply_correction(ds, Correction("", "g4", "a-much-longer-label"))
    assert both.dataset.gallery_labels.tolist()[4] == "a-much-longer-label"
    assert both.changed.tolist() == [2] and groups(both.dataset, 2)["positive"] == [4]


def test_a_relabel_keeps_pair_corrections_on_pairs_it_does_not_touch():
    log = CorrectionLog(instance())
    log.push(Correction("qa", "g4", "positive"))
    log.push(Correction("qa", "g3", "junk"))
    log.push(Correction("", "g1", "b"))
    assert groups(log.dataset, 0) == {"positive": [0, 4], "junk": [3]}
    log.push(Correction("", "g3", "a"))  # now a label-derived positive of qa: the rule wins
    assert groups(log.dataset, 0) == {"positive": [0, 3, 4], "junk": []}
    assert beyond_labels(log.dataset) == ["qa"]


def test_reid_relabels_place_the_image_by_camera_and_refuse_junk_and_distractor_ids():
    ds = reid()
    change = apply_correction(ds, Correction("", "g0", "2"))
    assert groups(change.dataset, 0) == {"positive": [1], "same_camera": []}
    assert groups(change.dataset, 1) == {"positive": [3], "same_camera": [0, 2]}
    assert apply_correction(ds, Correction("", "g5", "1")).changed.tolist() == [0]
    with pytest.raises(InputError, match=re.escape(
            "market: id -1 (junk) takes an image out of every ranking, so relabelling g0 to "
            "it would need ranking again; mark it ignored for the queries concerned, or give "
            "it id 0 (a distractor)")):
        apply_correction(ds, Correction("", "g0", "-1"))
    with pytest.raises(InputError, match="relabelling g4 from it"):
        apply_correction(ds, Correction("", "g4", "2"))
    with pytest.raises(InputError, match=re.escape(
            "market: p1 is a query and id 0 marks distractor images, which are never queries; "
            "give it the id of the person it shows")):
        apply_correction(ds, Correction("", "p1", "0"))
    with pytest.raises(InputError, match=re.escape(
            "market: 'x' is not a person id; re-identification labels are whole numbers")):
        apply_correction(ds, Correction("", "g0", "x"))
    with pytest.raises(InputError, match=re.escape(
            "market: g4 is removed for every query (junk id or ignored label), so a pair "
            "correction would change nothing; relabel the image instead")):
        apply_correction(ds, Correction("p1", "g4", "positive"))


def test_a_cuhk03_gallery_relabel_rescores_every_query():
    # CUHK03's single-gallery-shot CMC samples one image per gallery identity for every query.
    assert apply_correction(reid("cuhk03"), Correction("", "g5", "1")).changed.tolist() == [0, 1]


def test_refusals_name_what_to_do():
    cases = [
        (oxford(), Correction("", "g1", "x"),
         "ox: oxford ground truth lists each query's images, it has no image labels to change; "
         "correct (query, image) pairs instead"),
        (oxford(), Correction("q0", "g1", "easy"),
         "ox: 'easy' is not a group of this dataset; a pair correction's label is one of good, "
         "ok, junk, negative"),
        (oxford(), Correction("nosuch", "g1", "good"), "ox: no query is called 'nosuch'"),
        (oxford(), Correction("q0", "zz", "good"),
         "ox: no gallery image is called 'zz', e.g. g0, g1, g2, ..."),
        (instance(), Correction("", "zz", "a"), "inst: no image is called 'zz'"),
        (instance(), Correction("", "g0", " "), "inst: the new label is empty"),
    ]
    for ds, c, message in cases:
        with pytest.raises(InputError, match=re.escape(message)):
            apply_correction(ds, c)
    ignored = Dataset(name="ign", format="manifest", path=None, gallery=("g0", "g1"),
                      queries=(build_query("q", "q", {"positive": [0]}, meta={"label": "a"}),),
                      groups=("positive",), protocols=("instance",),
                      gallery_labels=np.array(["a", "blank"]), global_ignored=np.array([1]))
    with pytest.raises(InputError, match=re.escape(
            "ign: instance 'blank' is on the ignore list, so its images take no part; change "
            "the ignore list instead")):
        apply_correction(ignored, Correction("", "g0", "blank"))


def test_pair_choices_per_family():
    assert pair_choices(oxford()) == (("good", "good"), ("ok", "ok"), ("junk", "junk"),
                                      ("negative", "negative"))
    assert [shown for shown, _ in pair_choices(instance())] == ["relevant", "not relevant",
                                                                "ignored"]
    assert dict(pair_choices(reid()))["ignored"] == "same_camera"


def test_the_log_removes_and_reinserts_a_correction_from_the_middle():
    corrections = [Correction("qa", "g4", "positive"), Correction("", "g1", "b"),
                   Correction("qb", "g0", "junk")]
    log = replay(instance(), corrections)
    full = [groups(log.dataset, q) for q in range(3)]
    touched = log.remove(1)
    without = replay(instance(), [corrections[0], corrections[2]])
    assert [groups(log.dataset, q) for q in range(3)] == \
        [groups(without.dataset, q) for q in range(3)]
    assert touched.tolist() == [0, 1]
    log.insert(1, corrections[1])
    assert [groups(log.dataset, q) for q in range(3)] == full
    assert log.corrections == tuple(corrections)
    assert applied_summary(log) == "3 corrections applied, 2 queries changed"


def test_saved_rows_keep_the_last_correction_of_each_pair_or_image():
    log = replay(oxford(), [Correction("q0", "g2", "good"),
                                          Correction("q1", "g2", "ok"),
                                          Correction("q0", "g2", "negative")])
    assert [(c.query, c.label) for c in log.saved()] == [("q1", "ok"), ("q0", "negative")]


def test_commands_do_undo_and_say_what_they_do():
    log = CorrectionLog(oxford())
    first, second = (CorrectionCommand(Correction("q0", "g2", "good")),
                     CorrectionCommand(Correction("q1", "g5", "ok")))
    assert first.label == "q0 / g2: → good"
    assert first.do(log).tolist() == [0] and first.label == "q0 / g2: junk → good"
    second.do(log)
    with pytest.raises(RuntimeError, match="undo out of order"):
        first.undo(log)
    assert second.undo(log).tolist() == [1] and first.undo(log).tolist() == [0]
    assert [groups(log.dataset, q) for q in (0, 1)] == [groups(oxford(), q) for q in (0, 1)]
    relabel = CorrectionCommand(Correction("", "g1", "b"))
    inst = CorrectionLog(instance())
    relabel.do(inst)
    assert relabel.label == "relabel g1: a → b"
    remove = RemoveCorrectionCommand(0)
    assert remove.do(inst).tolist() == [0, 1] and len(inst) == 0
    assert remove.label == "delete correction relabel g1: → b"
    remove.undo(inst)
    assert inst.corrections == (Correction("", "g1", "b"),)


def test_with_ground_truth_checks_what_changed_and_keeps_the_lookups():
    ds = oxford()
    names, index = ds.query_names, ds.gallery_index()
    moved = ds.with_ground_truth({0: build_query("q0", "g0", {"good": [5]}, self_index=0)})
    assert moved.query_names is names and moved.gallery_index() is index
    assert moved.queries[0].group("good").tolist() == [5] and moved.queries[1] is ds.queries[1]
    assert moved.group_table("good")[1].tolist() == [5, 4]
    with pytest.raises(InputError, match=re.escape(
            "ox: query 0 is q0, not other; only the ground truth may change")):
        ds.with_ground_truth({0: build_query("other", "g0", {"good": [1]})})
    with pytest.raises(InputError, match=re.escape("ox: query q0 lists gallery index 9 "
                                                   "outside 0..5")):
        ds.with_ground_truth({0: build_query("q0", "g0", {"good": [9]})})
    with pytest.raises(InputError, match="unknown relevance group 'easy'"):
        ds.with_ground_truth({0: build_query("q0", "g0", {"easy": [1]})})


# -- the one rule: a correction that sets what is already there is not pushed -------------

@pytest.mark.parametrize(("make", "correction", "sentence"), [
    (oxford, Correction("q0", "g2", "junk"), "ox: g2 is already junk for q0; nothing to change"),
    (oxford, Correction("q1", "g0", "negative"),
     "ox: g0 is already negative for q1; nothing to change"),
    (instance, Correction("", "g1", "a"), "inst: g1 already has label a; nothing to change"),
    (instance, Correction("", "qa", "a"), "inst: qa already has label a; nothing to change"),
    (reid, Correction("", "g2", "02"), "market: g2 already has label 2; nothing to change"),
])
def test_a_correction_that_sets_what_is_there_is_not_pushed(make, correction, sentence):
    log = CorrectionLog(make())
    assert sets_nothing(log.dataset, correction)
    assert apply_correction(log.dataset, correction).sets_nothing
    with pytest.raises(NothingToChangeError) as e:
        log.check(correction)
    assert str(e.value) == sentence
    with pytest.raises(NothingToChangeError):
        log.push(correction)
    assert len(log) == 0 and log.dataset is log.published and log.saved() == ()
    with pytest.raises(NothingToChangeError):
        CorrectionCommand(correction).do(log)
    assert len(log) == 0


def test_sets_nothing_agrees_with_applying_for_every_choice():
    for make in (oxford, instance, reid):
        ds = make()
        labels = [*pair_choices(ds)]
        for query in ds.queries:
            for item in ds.gallery:
                if ds.ignored_mask[ds.gallery_index()[item]]:
                    continue
                for _, label in labels:
                    if label not in (*ds.groups, "negative"):
                        continue
                    c = Correction(query.name, item, label)
                    change = apply_correction(ds, c)
                    assert sets_nothing(ds, c) == change.sets_nothing == (
                        change.dataset is ds)


def test_a_preview_of_a_relabel_to_its_own_label_changes_nothing_even_on_cuhk03():
    assert preview_relabel(reid("cuhk03"), "g0", "2") == 2  # a real one: every query
    assert preview_relabel(reid("cuhk03"), "g0", "01") == 0  # its own label: none


def test_a_pair_set_and_set_back_writes_no_row_unless_a_relabel_came_between():
    log = CorrectionLog(instance())
    log.push(Correction("qa", "g2", "positive"))
    log.push(Correction("qb", "g0", "junk"))
    log.push(Correction("qa", "g2", "negative"))  # back to what was published
    assert log.saved() == (Correction("qb", "g0", "junk"),)
    replayed = replay(instance(), log.saved())
    assert [groups(replayed.dataset, q) for q in range(3)] == \
        [groups(log.dataset, q) for q in range(3)]
    between = CorrectionLog(instance())
    between.push(Correction("qa", "g2", "positive"))
    between.push(Correction("", "g2", "a"))  # g2 becomes a label-derived positive of qa
    between.push(Correction("qa", "g2", "negative"))
    assert [c.key for c in between.saved()] == [("", "g2"), ("qa", "g2")]
    replayed = replay(instance(), between.saved())
    assert groups(replayed.dataset, 0) == groups(between.dataset, 0)


def test_a_correction_left_setting_nothing_by_a_removal_stays_for_an_exact_undo():
    log = CorrectionLog(oxford())
    first, second = Correction("q0", "g5", "good"), Correction("q0", "g5", "negative")
    log.push(first)
    log.push(second)
    remove = RemoveCorrectionCommand(0)
    remove.do(log)  # the second now sets what the published ground truth has
    assert log.corrections == (second,) and log.entries[0].sets_nothing
    assert log.saved() == ()  # so it is not written
    remove.undo(log)
    assert log.corrections == (first, second) and not log.entries[1].sets_nothing
    assert log.saved() == ()  # good, then negative again: together they set nothing
    assert groups(log.dataset, 0) == groups(oxford(), 0)
