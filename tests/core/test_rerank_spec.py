"""The re-ranking SPEC parser: defaults with their sources, chains, and one sentence per
bad SPEC (exact messages)."""

from __future__ import annotations

import pytest

from irviewer.core.errors import InputError
from irviewer.core.rerank.spec import help_text, parse_spec


def test_defaults_are_the_papers_and_say_so():
    chain = parse_spec("k-reciprocal")
    step = chain.steps[0]
    assert (step["k1"], step["k2"], step["lambda"]) == (20, 6, 0.3)
    record = chain.record()
    assert record["chain"] == "k-reciprocal:k1=20,k2=6,lambda=0.3"
    params = record["steps"][0]["params"]
    assert params["k1"] == {"value": 20, "source": "default (Zhong et al. CVPR 2017, their "
                            "Market-1501 setting)"}
    assert "CVPR 2017" in record["steps"][0]["paper"]
    aqe = parse_spec("aqe").steps[0]
    assert (aqe["n"], aqe["alpha"]) == (2, 3.0)
    dba = parse_spec("dba").steps[0]
    assert (dba["k"], dba["alpha"]) == (10, 3.0)


def test_chain_given_values_and_spaces():
    chain = parse_spec(" DBA:k=5, alpha=3 + aqe:n=2,ALPHA=1.5 ")
    assert [s.method for s in chain.steps] == ["dba", "aqe"]
    assert chain.label() == "dba:k=5,alpha=3+aqe:n=2,alpha=1.5"
    params = chain.record()["steps"][1]["params"]
    assert params["n"] == {"value": 2, "source": "given"}
    assert params["alpha"] == {"value": 1.5, "source": "given"}
    assert parse_spec("dba+aqe+k-reciprocal:k1=3").steps[2]["k1"] == 3


@pytest.mark.parametrize(("spec", "message"), [
    ("", "--rerank: the SPEC is empty; give e.g. k-reciprocal, aqe:n=2,alpha=3 or "
         "dba:k=10,alpha=3+aqe"),
    ("foo", "--rerank: unknown re-ranking method 'foo' in 'foo'; known: k-reciprocal, aqe, "
            "dba"),
    ("aqe:k=3", "--rerank: aqe has no parameter 'k'; its parameters are n, alpha"),
    ("aqe:n2", "--rerank: 'n2' in 'aqe:n2' is not KEY=VALUE (e.g. n=2)"),
    ("aqe:n=", "--rerank: 'n=' in 'aqe:n=' is not KEY=VALUE (e.g. n=2)"),
    ("aqe:", "--rerank: 'aqe:' in 'aqe:' has ':' but no parameters after it"),
    ("aqe:n=2.5", "--rerank: aqe's n must be a whole number, not '2.5'"),
    ("aqe:n=x", "--rerank: aqe's n must be a whole number from 0 to 1000, not 'x'"),
    ("aqe:alpha=nan", "--rerank: aqe's alpha must be a number from 0 to 100, not 'nan'"),
    ("aqe:n=-1", "--rerank: aqe's n must be a whole number from 0 to 1000, not -1"),
    ("k-reciprocal:lambda=1.5", "--rerank: k-reciprocal's lambda must be a number from 0 to "
                                "1, not 1.5"),
    ("k-reciprocal:k1=0", "--rerank: k-reciprocal's k1 must be a whole number from 1 to "
                          "1000, not 0"),
    ("aqe:n=1,n=2", "--rerank: aqe's n is given twice in 'aqe:n=1,n=2'"),
    ("aqe++dba", "--rerank: 'aqe++dba' has an empty step (two '+' in a row, or one at an "
                 "end)"),
    ("k-reciprocal+aqe", "--rerank: k-reciprocal gives distances, not vectors, so it must "
                         "be the last step of 'k-reciprocal+aqe'"),
])
def test_bad_specs_get_one_sentence(spec, message):
    with pytest.raises(InputError) as e:
        parse_spec(spec)
    assert str(e.value) == message
    assert "re-ranking:" in e.value.for_window()


def test_the_two_thirds_rule_in_integers_is_the_references_float_test():
    # The reference accepts a candidate set when |common| > 2./3 * |set|; irviewer tests
    # 3 |common| > 2 |set|. They agree for every size a set can have (and far beyond).
    for size in range(0, 5000):
        for common in {0, size * 2 // 3, size * 2 // 3 + 1, size}:
            assert (common > 2.0 / 3 * size) == (3 * common > 2 * size)


def test_help_names_every_method_and_source():
    text = help_text()
    for name in ("k-reciprocal:k1=20,k2=6,lambda=0.3", "aqe:n=2,alpha=3", "dba:k=10,alpha=3",
                 "CVPR 2017", "TPAMI 2018"):
        assert name in text
