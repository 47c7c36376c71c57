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


@pytest.mark.parametrize(("text", "message"), [
    ("IVF4,Flat:nprobe=0", "--ann IVF4,Flat:nprobe=0: nprobe=0 is below 1; nprobe (the "
                           "inverted lists an IVF index searches) takes whole numbers from 1"),
    ("IVF4,Flat:nprobe=-1", "--ann IVF4,Flat:nprobe=-1: nprobe=-1 is below 1; nprobe (the "
                            "inverted lists an IVF index searches) takes whole numbers from 1"),
    ("IVF4,Flat:nprobe=1e12", "--ann IVF4,Flat:nprobe=1e12: nprobe=1e12 is above "
                              "2,147,483,647, the most FAISS takes; nprobe (the inverted "
                              "lists an IVF index searches) takes whole numbers from 1"),
    ("IVF4,Flat:nprobe=1.5", "--ann IVF4,Flat:nprobe=1.5: nprobe=1.5 is not a whole number; "
                             "nprobe (the inverted lists an IVF index searches) takes whole "
                             "numbers from 1"),
    ("HNSW8:efSearch=-5", "--ann HNSW8:efSearch=-5: efSearch=-5 is below 1; efSearch (the "
                          "width of HNSW's search beam) takes whole numbers from 1"),
    ("IVF4,Flat:quantizer_efSearch=0", "--ann IVF4,Flat:quantizer_efSearch=0: "
                                       "quantizer_efSearch=0 is below 1"),
    ("HNSW8:efConstruction=40", "--ann HNSW8:efConstruction=40: efConstruction is not a "
                                "search parameter (HNSW's parameter for building the graph)"),
    ("HNSW8:ef=40", "--ann HNSW8:ef=40: FAISS has no search parameter ef; it has nprobe (IVF), "
                    "efSearch (HNSW)"),
    ("g.faiss:nprobe=0", "--ann g.faiss:nprobe=0: nprobe=0 is below 1"),
    ("HNSW8:efSearch=2000000000", "--ann HNSW8:efSearch=2000000000: efSearch=2000000000 is "
                                  "above 1,048,576, the most it takes; efSearch (the width of "
                                  "HNSW's search beam) takes whole numbers from 1 to "
                                  "1,048,576"),
])
def test_parameters_are_checked_before_faiss_sees_them(text, message):
    with pytest.raises(InputError) as e:
        parse_ann_spec(text)
    assert str(e.value).startswith(message), str(e.value)


@pytest.mark.parametrize(("text", "message"), [
    ("HNSW0", "--ann HNSW0: a count of 0 (HNSW0); the numbers of a factory string are counts "
              "and dimensions, from 1"),
    ("HNSW1", "--ann HNSW1: HNSW1 links each vector to 1 neighbour; an HNSW graph needs at "
              "least 2 (HNSW32 is usual)"),
    ("RR0,Flat", "--ann RR0,Flat: a count of 0 (RR0)"),
    ("IDMap,Flat", "--ann IDMap,Flat: irviewer numbers the gallery itself (FAISS id i is "
                   "gallery image i), so a factory string takes no IDMap; leave it out"),
    ("IDMap2,HNSW32", "--ann IDMap2,HNSW32: irviewer numbers the gallery itself"),
    ("Pad99999999,Flat", "--ann Pad99999999,Flat: Pad99999999 asks for 99,999,999 "
                         "dimensions; irviewer builds indexes of at most 65,536"),
    ("OPQ16_100000,IVF4,PQ16", "--ann OPQ16_100000,IVF4,PQ16: OPQ16_100000 asks for 100,000 "
                               "dimensions"),
    ("IVF99999999999,Flat", "--ann IVF99999999999,Flat: 99,999,999,999 is larger than FAISS "
                            "reads in a factory string (at most 2,147,483,647)"),
    ("IVF4;Flat", "--ann IVF4;Flat: ';' is not part of FAISS's factory language"),
    ("IVF4," * 5000 + "Flat", "--ann IVF4,IVF4,"),
])
def test_factory_strings_faiss_would_choke_on_are_refused(text, message):
    with pytest.raises(InputError) as e:
        parse_ann_spec(text)
    said = str(e.value)
    assert said.startswith(message), said
    assert len(said) < 400  # the string itself is not echoed whole


def test_a_long_factory_string_says_its_length():
    with pytest.raises(InputError) as e:
        parse_ann_spec("IVF4," * 5000 + "Flat")
    assert "a factory string of 25,004 characters" in str(e.value)
    assert "irviewer takes at most 200" in str(e.value)


def test_usual_factory_strings_and_parameters_pass():
    for text in ("IVF256,Flat:nprobe=8", "IVF1024,PQ32:nprobe=1,2,4:ht=12",
                 "OPQ16_64,IVF1024_HNSW32,PQ16x4fs:nprobe=16:quantizer_efSearch=64",
                 "HNSW32:efSearch=16,200", "PCAR64,IVF4096,SQ8:max_codes=0",
                 "IVF4096,PQ8+16:k_factor=4", "IVF4,Flat,RFlat:k_factor_rf=2", "LSH",
                 "IVF65536(IVF256,PQ32x4fs,RFlat),SQfp16"):
        assert parse_ann_spec(text).index == text.split(":")[0]


def test_a_sweep_is_bounded():
    values = ",".join(str(n) for n in range(1, 40))
    with pytest.raises(InputError) as e:
        parse_ann_spec(f"IVF64,Flat:nprobe={values}:ht={values}")
    assert "make 1,521 settings to search; irviewer sweeps at most 1,000 at once" in str(e.value)


def test_a_path_too_long_for_the_system_is_a_factory_string_or_a_file_not_a_crash():
    assert parse_ann_spec("x" * 5000 + ".faiss").is_file
    with pytest.raises(InputError):
        parse_ann_spec("x" * 5000)
