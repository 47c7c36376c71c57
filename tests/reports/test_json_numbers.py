"""A report's per-query columns made JSON-safe a whole array at once give exactly what
each value made JSON-safe alone gives: Python numbers, null for nan and for skipped
queries, the same JSON text."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from irviewer.reports.eval_report import json_number, json_numbers

DTYPES = st.sampled_from([np.float64, np.float32, np.float16, np.int64, np.int32, np.uint8,
                          np.bool_])


@given(st.data())
def test_a_whole_array_gives_what_each_value_gives(data):
    dtype = data.draw(DTYPES)
    values = data.draw(arrays(dtype, st.integers(0, 30)))
    skipped = data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values)))
    one_by_one = [json_number(v) for v in values.tolist()]
    assert json.dumps(json_numbers(values)) == json.dumps(one_by_one)
    expected = [None if gone else v for v, gone in zip(one_by_one, skipped, strict=True)]
    assert json.dumps(json_numbers(values, skipped)) == json.dumps(expected)


def test_types_and_nulls():
    out = json_numbers(np.array([0.5, np.nan, 2.0]), [False, False, True])
    assert out == [0.5, None, None] and type(out[0]) is float
    ints = json_numbers(np.array([3, 4], dtype=np.int64))
    assert ints == [3, 4] and all(type(v) is int for v in ints)
    assert json_numbers(np.array([True, False])) == [True, False]
    assert json_numbers(np.array([np.float32(1.5), None], dtype=object)) == [1.5, None]
