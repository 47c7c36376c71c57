"""The review queue's model, headless: order, reviewed state (accepted follows the log,
checked follows the person), counts, the kind filter, hiding and skipping answered ones."""

from __future__ import annotations

from irviewer.core.audit import HUB, LABEL, NEG_POS, Suspect
from irviewer.core.corrections import Correction
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


def test_accepted_follows_the_corrections_log():
    queue = ReviewQueue(SUSPECTS)
    assert [queue.state(i) for i in range(4)] == [OPEN] * 4
    queue.set_corrections([Correction("q1", "g1", "positive", "ana")])
    assert queue.state(0) == ACCEPTED and not queue.can_accept(0)
    queue.set_corrections([Correction("q1", "g1", "junk")])  # another fix: not this one
    assert queue.state(0) == OPEN and queue.can_accept(0)
    queue.set_corrections([])  # undone
    assert queue.state(0) == OPEN
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
    queue.set_corrections([SUSPECTS[2].correction])
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
