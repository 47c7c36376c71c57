"""The review queue's model, headless: order, reviewed state (accepted follows the corrected
ground truth: a suspect whose fix is in place, by whatever correction; checked follows the
person), counts, the kind filter, hiding and skipping answered ones."""

from __future__ import annotations

import numpy as np

from irviewer.core.audit import HUB, LABEL, NEG_POS, Suspect
from irviewer.core.corrections import Correction, CorrectionLog
from irviewer.core.dataset import Dataset, build_query
from irviewer.core.label_rules import LabelIndex, same_label_groups
from irviewer.formats.reviewed_file import Reviewed
from irviewer.view.review_queue import (
    ACCEPTED,
    CHECKED,
    OPEN,
    ReviewQueue,
    fix_words,
    ranks_words,
)


def suspect(kind, score, query, item, labelled="negative", suggested="positive"):
    fix = None if suggested is None else Correction(query or "", item, suggested)
    return Suspect(kind, score, query, item, labelled, suggested, f"evidence {item}", 2, 2,
                   ranks=(("A", 2), ("B", None)), correction=fix)


SUSPECTS = (suspect(NEG_POS, 0.9, "q1", "g1"),
            suspect(LABEL, 0.8, None, "g2", "L1", "L2"),
            suspect(NEG_POS, 0.7, "q2", "g3"),
            suspect(HUB, 0.4, None, "g4", "L3", None))


def published() -> Dataset:
    """An instance set the suspects fit: g1..g4 labelled L0 L1 L0 L3; q1 of label L2 and q2
    of label L5 (neither has a gallery image of its own label)."""
    labels = np.array(["L0", "L1", "L0", "L3"])
    index = LabelIndex.of(labels)
    queries = tuple(build_query(name, name, same_label_groups(index, label),
                                meta={"label": label}) for name, label in
                    (("q1", "L2"), ("q2", "L5")))
    return Dataset(name="tiny", format="manifest", path=None,
                   gallery=("g1", "g2", "g3", "g4"), queries=queries,
                   groups=("positive", "junk"), protocols=("instance",),
                   gallery_labels=labels)


def test_accepted_follows_the_corrected_ground_truth():
    log = CorrectionLog(published())
    queue = ReviewQueue(SUSPECTS, ground_truth=log.dataset)
    assert [queue.state(i) for i in range(4)] == [OPEN] * 4
    log.push(Correction("q1", "g1", "positive", "ana"))
    queue.set_ground_truth(log.dataset)
    assert queue.state(0) == ACCEPTED and not queue.can_accept(0)
    log.pop()
    log.push(Correction("q1", "g1", "junk"))  # another fix: not this one
    queue.set_ground_truth(log.dataset)
    assert queue.state(0) == OPEN and queue.can_accept(0)
    log.pop()  # undone
    queue.set_ground_truth(log.dataset)
    assert queue.state(0) == OPEN
    # the fix put in place by another correction: g1 given q1's label makes the pair
    # positive, which is what the suspect suggested
    log.push(Correction("", "g1", "L2"))
    queue.set_ground_truth(log.dataset)
    assert queue.state(0) == ACCEPTED
    log.push(Correction("", "g2", "L2"))  # the relabel suspect's fix is L2: in place
    queue.set_ground_truth(log.dataset)
    assert queue.state(1) == ACCEPTED
    assert not queue.can_accept(3)  # a hub has no fix


def test_checked_toggles_and_becomes_a_record():
    queue = ReviewQueue(SUSPECTS)
    assert queue.toggle_checked(1, "ana", "t")
    assert queue.state(1) == CHECKED
    earlier = (Reviewed(HUB, "", "old", "x"),)
    assert queue.records(earlier) == (earlier[0], Reviewed(LABEL, "", "g2", "L1", "ana", "t"))
    assert not queue.toggle_checked(1)
    assert queue.state(1) == OPEN and queue.records() == ()


def test_counts_filter_and_hiding():
    queue = ReviewQueue(SUSPECTS)
    assert queue.count().text() == "0 of 4 reviewed"
    log = CorrectionLog(published())
    log.push(SUSPECTS[2].correction)
    queue.set_ground_truth(log.dataset)
    queue.toggle_checked(3)
    assert queue.count().text() == "2 of 4 reviewed"
    assert queue.rows() == (0, 1, 2, 3)
    queue.hide_reviewed = True
    assert queue.rows() == (0, 1)
    queue.set_kind(NEG_POS)
    assert queue.rows() == (0,) and queue.count().text() == "1 of 2 reviewed"
    assert queue.kinds() == ((LABEL, 1), (NEG_POS, 2), (HUB, 1))


def test_next_open_skips_reviewed_and_wraps():
    queue = ReviewQueue(SUSPECTS)
    queue.toggle_checked(1)
    assert queue.next_open(0) == 2
    assert queue.next_open(3) == 0
    for i in (0, 2, 3):
        queue.toggle_checked(i)
    assert queue.next_open(0) is None


def test_questions_answered_before_are_not_asked_again():
    queue = ReviewQueue(SUSPECTS, reviewed=[Reviewed(NEG_POS, "q1", "g1", "negative")])
    assert [s.item for s in queue.suspects] == ["g2", "g3", "g4"]
    assert "1 suspect checked before" in queue.note()
    other_kind = ReviewQueue(SUSPECTS, reviewed=[Reviewed(LABEL, "q1", "g1")])
    assert len(other_kind.suspects) == 4 and other_kind.note() == ""


def test_words():
    assert fix_words(SUSPECTS[0]) == "negative → positive"
    assert fix_words(SUSPECTS[1]) == "relabel → L2"
    assert fix_words(SUSPECTS[3]) == "—"
    assert ranks_words(SUSPECTS[0], "q1") == "rank 2 under A, unranked under B for q1"
