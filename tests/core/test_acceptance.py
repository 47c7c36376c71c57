"""The acceptance rule of geometric verification: thresholds by hand from a calibration,
the uncalibrated rule, what the strictness changes, and the record's round trip."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from irviewer.core.acceptance import (
    RULES,
    STRICTNESS,
    UNCALIBRATED_NEGATIVE,
    Calibration,
    check_strictness,
)
from irviewer.core.errors import InputError


def test_thresholds_by_hand():
    # 40 negatives: 0 x 20, 4 x 10, 5 x 7, 6, 6, 9. The 95th percentile sits at position
    # 0.95 x 39 = 37.05 of the sorted values (0-based); the higher of the two ranks around
    # it is position 38: 6.
    negatives = (0,) * 20 + (4,) * 10 + (5,) * 7 + (6, 6, 9)
    c = Calibration(positives=(3, 12, 40, 200), negatives=negatives)
    assert c.calibrated and c.chance() == 6
    # looser: max(8, ceil(1.25 x 6) = 8); normal: max(10, ceil(9.6) = 10);
    # stricter: max(15, ceil(13.2) = 14) = 15
    assert c.thresholds == {"looser": 8, "normal": 10, "stricter": 15}
    assert c.kept("looser") == 3 / 4 and c.kept("normal") == 3 / 4
    assert c.kept("stricter") == 2 / 4
    # with 20 negatives the same percentile is the highest one (position 18.05 -> 19)
    assert Calibration(negatives=(0,) * 18 + (6, 9)).chance() == 9


def test_a_collection_with_more_chance_alignments_needs_more_inliers():
    c = Calibration(negatives=(20,) * 19 + (2,))  # fine texture: many chance alignments
    assert c.thresholds == {"looser": 25, "normal": 32, "stricter": 44}


def test_without_calibration_the_demo_s_worst_chance_alignment_stands_for_the_negatives():
    c = Calibration()
    assert not c.calibrated and c.chance() == UNCALIBRATED_NEGATIVE == 7
    assert c.thresholds == {"looser": 9, "normal": 12, "stricter": 16}
    assert c.kept() is None  # nothing to say what the rule costs


def test_an_unknown_strictness_is_one_sentence():
    with pytest.raises(InputError, match="strictness 'lax' is not one of looser, normal, "
                                         "stricter"):
        Calibration().threshold("lax")
    assert check_strictness("stricter") == "stricter"


def test_the_record_round_trip_and_a_malformed_one():
    c = Calibration((30, 4), (5, 0, 6))
    data = c.to_dict()
    assert data["thresholds"] == c.thresholds
    assert Calibration.from_dict(data) == c
    with pytest.raises(ValueError, match="never negative"):
        Calibration.from_dict({"positives": [1], "negatives": [-1]})
    with pytest.raises(KeyError):
        Calibration.from_dict({"positives": [1]})


@given(st.lists(st.integers(0, 500), min_size=1, max_size=60))
def test_stricter_never_asks_for_fewer_inliers_and_never_for_fewer_than_chance(negatives):
    c = Calibration(negatives=tuple(negatives))
    t = [c.threshold(s) for s in STRICTNESS]
    assert t == sorted(t)
    for s in STRICTNESS:
        floor, factor = RULES[s]
        assert c.threshold(s) == max(floor, math.ceil(factor * c.chance()))
        assert c.threshold(s) > c.chance()
    assert c.chance() in negatives
