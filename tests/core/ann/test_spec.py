"""The approximate-index SPEC: factory strings, index files, parameters and sweeps."""

from __future__ import annotations

import pytest

from irviewer.core.ann.spec import parse_ann_spec
from irviewer.core.errors import InputError


def test_factory_string_with_commas_and_one_parameter():
    spec = parse_ann_spec("IVF256,Flat:nprobe=8")
    assert (spec.index, spec.is_file) == ("IVF256,Flat", False)
    assert spec.params == (("nprobe", (8.0,)),)
    assert not spec.is_sweep
    assert [s.text for s in spec.settings()] == ["IVF256,Flat:nprobe=8"]


def test_comma_list_sweeps_and_several_parameters_combine():
    spec = parse_ann_spec("OPQ16,IVF256,PQ16:nprobe=1,2,4:ht=10,20")
    assert spec.index == "OPQ16,IVF256,PQ16"
    assert spec.is_sweep and spec.swept == ("nprobe", "ht")
    assert [s.text for s in spec.settings()] == [
        "OPQ16,IVF256,PQ16:nprobe=1,ht=10", "OPQ16,IVF256,PQ16:nprobe=1,ht=20",
        "OPQ16,IVF256,PQ16:nprobe=2,ht=10", "OPQ16,IVF256,PQ16:nprobe=2,ht=20",
        "OPQ16,IVF256,PQ16:nprobe=4,ht=10", "OPQ16,IVF256,PQ16:nprobe=4,ht=20"]
    # A comma also separates parameters when the next token names one.
    assert parse_ann_spec("HNSW32:efSearch=16,32,nprobe=2").params == (
        ("efSearch", (16.0, 32.0)), ("nprobe", (2.0,)))


def test_index_files_by_suffix_path_or_existence(tmp_path):
    assert parse_ann_spec("gallery.faiss:nprobe=8").is_file
    assert parse_ann_spec("out/ivf:nprobe=8").is_file
    made = tmp_path / "myindex"
    made.write_bytes(b"x")
    spec = parse_ann_spec(f"{made}")
    assert spec.is_file and spec.params == ()
    assert not parse_ann_spec("HNSW32").is_file
    # A colon inside a path is not the parameters' colon.
    assert parse_ann_spec("C:\\data\\x.faiss:nprobe=4").index == "C:\\data\\x.faiss"


@pytest.mark.parametrize(("text", "message"), [
    ("", "--ann: the SPEC is empty; give a FAISS index factory string (e.g. "
         "IVF256,Flat:nprobe=8) or an index file"),
    ("IVF4,Flat:nprobe=x", "--ann IVF4,Flat:nprobe=x: nprobe=x is not a number"),
    ("IVF4,Flat:nprobe=", "--ann IVF4,Flat:nprobe=: nprobe= is not a number"),
    ("IVF4,Flat:nprobe=1:nprobe=2", "--ann IVF4,Flat:nprobe=1:nprobe=2: nprobe is given "
                                    "twice; give its values as one list (nprobe=1,2,4)"),
    (":nprobe=2", "--ann :nprobe=2: no index before the parameters; give a FAISS factory "
                  "string (e.g. IVF256,Flat) or an index file"),
])
def test_bad_specs_say_one_sentence(text, message):
    with pytest.raises(InputError) as e:
        parse_ann_spec(text)
    assert str(e.value) == message
