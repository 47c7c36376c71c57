"""The .irv session file: round trips, path storage, atomic writes, one sentence per bad input."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.core.convention_names import AP_RULES
from irviewer.core.errors import InputError
from irviewer.opening.request import OpenRequest
from irviewer.opening.session_file import (
    SessionFile,
    load_session,
    read_options,
    save_session,
)
from irviewer.opening.session_options import OPTION_TYPES


def names(request: OpenRequest) -> list[str]:
    """Return the names of the methods ``request`` plans, in order."""
    return [spec.name for spec in request.plan()]


def make_data(folder: Path) -> dict[str, Path]:
    """Create a small dataset layout in ``folder``; return its paths by role."""
    (folder / "images").mkdir(parents=True, exist_ok=True)
    (folder / "desc").mkdir(exist_ok=True)
    paths = {
        "dataset": folder / "set.csv",
        "strong": folder / "desc" / "strong.npz",
        "weak": folder / "desc" / "weak.npz",
        "ranking": folder / "run.trec",
        "distractors": folder / "extra.txt",
        "images": folder / "images",
    }
    for key, p in paths.items():
        if key != "images":
            p.write_text("x\n", encoding="utf-8")
    return paths


def full_session(paths: dict[str, Path], **changes) -> SessionFile:
    values = dict(
        dataset=paths["dataset"],
        descriptors=(paths["strong"], paths["weak"]),
        active_method=1,
        images=paths["images"],
        format="csv",
        options={"instance_rule": "dash", "ignore_labels": ["0", "junk"],
                 "keep_orphans": False, "distractors": str(paths["distractors"])},
        protocol="instance",
        ap="trapezoid",
        self_match="keep",
        selected_query="q_001.jpg",
        top_k=120,
        tile_size=96,
        show_ignored=False,
        filter_text="Mona",
        failures_only=True,
        ap_range=(0.25, 0.75),
        window={"geometry": "AdnQywADAAA=", "splitter": "AAAA/wAAAAEAAAAD"},
        reranked=((1, "aqe:n=3"),),
        approximate=((0, "IVF4,Flat:nprobe=1,2"), (1, "HNSW32")),
        engine=("http://milvus.example:19530", "paintings", None),
        active_rerank="aqe:n=3",
    )
    values.update(changes)
    return SessionFile(**values)


@pytest.fixture
def data(tmp_path) -> dict[str, Path]:
    return make_data(tmp_path / "project")


def stored(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# --- round trips and path storage ----------------------------------------------------------


def test_round_trip_equals(data):
    session = full_session(data)
    irv = data["dataset"].parent / "work.irv"
    save_session(irv, session)
    assert load_session(irv) == session
    loaded = load_session(irv)
    assert loaded.sources[loaded.active_method] == data["weak"]


def test_round_trip_with_ranking_only(data):
    session = SessionFile(dataset=data["dataset"], rankings=(data["ranking"],))
    irv = data["dataset"].parent / "r.irv"
    save_session(irv, session)
    loaded = load_session(irv)
    assert loaded == session
    assert loaded.sources[loaded.active_method] == data["ranking"]


def test_descriptors_and_rankings_side_by_side(data):
    session = SessionFile(dataset=data["dataset"], descriptors=(data["strong"],),
                          rankings=(data["ranking"],), active_method=1)
    irv = data["dataset"].parent / "both.irv"
    save_session(irv, session)
    assert stored(irv)["rankings"] == ["run.trec"]
    loaded = load_session(irv)
    assert loaded == session and loaded.sources == (data["strong"], data["ranking"])
    assert loaded.sources[loaded.active_method] == data["ranking"]


def test_file_holds_format_version_and_relative_forward_slash_paths(data):
    irv = data["dataset"].parent / "work.irv"
    save_session(irv, full_session(data))
    text = irv.read_text(encoding="utf-8")
    obj = json.loads(text)
    assert obj["format"] == "irviewer-session"
    assert obj["version"] == 1
    assert obj["dataset"] == "set.csv"
    assert obj["descriptors"] == ["desc/strong.npz", "desc/weak.npz"]
    assert obj["images"] == "images"
    assert obj["options"]["distractors"] == "extra.txt"
    assert obj["reader"] == "csv"
    assert "\\" not in text


def test_paths_outside_the_session_folder_are_absolute(data, tmp_path):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    irv = sessions / "work.irv"
    save_session(irv, full_session(data))
    obj = stored(irv)
    assert obj["dataset"] == data["dataset"].absolute().as_posix()
    assert Path(obj["dataset"]).is_absolute()
    assert obj["descriptors"][0] == data["strong"].absolute().as_posix()
    assert load_session(irv) == full_session(data)


def test_session_in_a_subfolder_stores_paths_above_it_as_absolute(data):
    sub = data["dataset"].parent / "sessions"
    sub.mkdir()
    save_session(sub / "a.irv", full_session(data))
    assert stored(sub / "a.irv")["dataset"] == data["dataset"].absolute().as_posix()


def test_relative_session_path_is_resolved_against_its_folder(data, monkeypatch):
    monkeypatch.chdir(data["dataset"].parent)
    save_session(Path("work.irv"), full_session(data))
    assert stored(Path("work.irv"))["dataset"] == "set.csv"
    monkeypatch.chdir(data["dataset"].parent.parent)
    assert load_session(Path("project/work.irv")) == full_session(data)


def test_moving_the_folder_keeps_the_session_loadable(data, tmp_path):
    irv = data["dataset"].parent / "work.irv"
    save_session(irv, full_session(data))
    moved = tmp_path / "elsewhere" / "moved"
    moved.parent.mkdir()
    shutil.move(str(data["dataset"].parent), str(moved))
    loaded = load_session(moved / "work.irv")
    assert loaded == full_session(make_data(moved))
    assert loaded.dataset == moved / "set.csv"
    assert loaded.options["distractors"] == str(moved / "extra.txt")


def test_unknown_keys_are_ignored(data):
    irv = data["dataset"].parent / "work.irv"
    save_session(irv, full_session(data))
    obj = stored(irv)
    obj["annotations"] = {"future": [1, 2, 3]}
    obj["options"]["some_new_option"] = 7
    irv.write_text(json.dumps(obj), encoding="utf-8")
    loaded = load_session(irv)
    assert loaded.top_k == 120
    assert loaded.options["some_new_option"] == 7


def test_optional_keys_take_defaults(data):
    irv = data["dataset"].parent / "min.irv"
    irv.write_text(json.dumps({"format": "irviewer-session", "version": 1,
                               "dataset": "set.csv", "descriptors": ["desc/strong.npz"]}),
                   encoding="utf-8")
    loaded = load_session(irv)
    assert loaded == SessionFile(dataset=data["dataset"], descriptors=(data["strong"],))


def test_read_options_maps_to_reader_options(data):
    opts = read_options(full_session(data))
    assert opts.instance_rule == "dash"
    assert opts.ignore_labels == ("0", "junk")
    assert opts.drop_orphans is True
    assert opts.distractors == data["distractors"]
    assert opts.images == data["images"]
    keep = read_options(full_session(data, options={"keep_orphans": True}))
    assert keep.drop_orphans is False and keep.distractors is None


# --- atomicity -----------------------------------------------------------------------------


def test_failed_replace_leaves_the_old_file_intact(data, monkeypatch):
    irv = data["dataset"].parent / "work.irv"
    save_session(irv, full_session(data))
    before = irv.read_bytes()

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(InputError, match=r"work.irv: cannot write there \(No space left on "
                       r"device\); the file is unchanged"):
        save_session(irv, full_session(data, top_k=10, filter_text="other"))
    monkeypatch.undo()
    assert irv.read_bytes() == before
    assert sorted(p.name for p in irv.parent.iterdir() if p.name.endswith(".tmp")) == []


def test_failure_mid_write_leaves_the_old_file_intact(data, monkeypatch):
    irv = data["dataset"].parent / "work.irv"
    save_session(irv, full_session(data))
    before = irv.read_bytes()
    import irviewer.opening.session_file as module

    real = module.atomic_open

    class BoomError(RuntimeError):
        pass

    def half_written(path, newline=None):
        cm = real(path, newline=newline)

        class Wrapper:
            def __enter__(self):
                stream = cm.__enter__()
                stream.write('{"format": "irviewer-sess')

                class Failing:
                    def write(self, text):
                        raise BoomError("disk vanished")

                return Failing()

            def __exit__(self, *exc):
                return cm.__exit__(*exc)

        return Wrapper()

    monkeypatch.setattr(module, "atomic_open", half_written)
    with pytest.raises(BoomError):
        save_session(irv, full_session(data, top_k=10))
    assert irv.read_bytes() == before
    assert not [p for p in irv.parent.iterdir() if p.name.endswith(".tmp")]


def test_unserialisable_option_is_an_input_error_and_keeps_the_old_file(data):
    irv = data["dataset"].parent / "work.irv"
    save_session(irv, full_session(data))
    before = irv.read_bytes()
    with pytest.raises(InputError, match=r"work\.irv: cannot save the session"):
        save_session(irv, full_session(data, options={"bad": object()}))
    assert irv.read_bytes() == before


def test_missing_folder_is_an_input_error(data, tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        save_session(tmp_path / "nope" / "a.irv", full_session(data))


# --- one sentence per bad input ------------------------------------------------------------


def write_json(data: dict[str, Path], **changes) -> Path:
    irv = data["dataset"].parent / "bad.irv"
    save_session(irv, full_session(data))
    obj = stored(irv)
    for key, value in changes.items():
        if value is KeyError:
            del obj[key]
        else:
            obj[key] = value
    irv.write_text(json.dumps(obj), encoding="utf-8")
    return irv


def message(irv: Path) -> str:
    with pytest.raises(InputError) as info:
        load_session(irv)
    text = str(info.value)
    assert str(irv) in text, text
    assert "\n" not in text
    return text


def test_not_json_names_line_and_column(data):
    irv = data["dataset"].parent / "bad.irv"
    irv.write_text('{\n  "format": "irviewer-session",\n  "version" 1\n}\n', encoding="utf-8")
    text = message(irv)
    assert "not valid JSON (line 3, column 13" in text


def test_missing_file(tmp_path):
    assert "no such file" in message(tmp_path / "gone.irv")


@pytest.mark.parametrize("content", ['[1, 2]', '{"format": "something-else", "version": 1}',
                                     '{"version": 1, "dataset": "set.csv"}'])
def test_not_an_irviewer_session(data, content):
    irv = data["dataset"].parent / "bad.irv"
    irv.write_text(content, encoding="utf-8")
    assert "not an irviewer session" in message(irv)


def test_newer_version(data):
    text = message(write_json(data, version=3))
    assert "written by a newer irviewer (version 3); this one reads version 1" in text


@pytest.mark.parametrize("key", ["version", "dataset"])
def test_missing_required_key(data, key):
    text = message(write_json(data, **{key: KeyError}))
    assert f'no "{key}" key' in text


def test_neither_descriptors_nor_ranking(data):
    text = message(write_json(data, descriptors=[], rankings=[]))
    assert "neither a descriptor file nor a ranking" in text


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("top_k", "50", '"top_k" must be an integer, not a string'),
    ("top_k", True, '"top_k" must be an integer, not true/false'),
    ("tile_size", 9.5, '"tile_size" must be an integer, not a number'),
    ("show_ignored", 1, '"show_ignored" must be true or false, not a number'),
    ("filter_text", None, '"filter_text" must be a string, not null'),
    ("selected_query", 3, '"selected_query" must be a string or null, not a number'),
    ("descriptors", {"a": 1}, '"descriptors" must be a list of paths'),
    ("dataset", 5, '"dataset" must be a non-empty string (a path), not a number'),
    ("options", [], '"options" must be an object, not a list'),
    ("options", {"keep_orphans": "no"}, '"keep_orphans" must be true or false, not a string'),
    ("options", {"ignore_labels": "0"}, '"ignore_labels" must be a list of strings'),
    ("ap_range", [0.1], '"ap_range" must be null or a list of two numbers'),
    ("window", {"geometry": 5}, '"window" must be an object of strings'),
    ("version", "1", '"version" must be an integer, not a string'),
    ("reranked", {"a": 1}, '"reranked" must be a list of {"descriptor": index'),
    ("approximate", [{"descriptor": "0", "spec": "HNSW32"}],
     '"approximate" must be a list of {"descriptor": index, "spec": SPEC} objects'),
    ("engine", {"uri": "g.db"}, '"engine" must be null or {"uri": URI, "collection": NAME'),
])
def test_wrong_type_names_key_and_type(data, key, value, expected):
    assert expected in message(write_json(data, **{key: value}))


@pytest.mark.parametrize("top_k", [9, 201, -1])
def test_top_k_out_of_range(data, top_k):
    text = message(write_json(data, top_k=top_k))
    assert f'"top_k" is {top_k}; it must be between 10 and 200' in text


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("ap", "area", '"ap" is \'area\'; use finite, trapezoid, interpolated or 11point'),
    ("self_match", "drop", '"self_match" is \'drop\'; use keep or remove'),
    ("ap_range", [0.8, 0.2], '"ap_range" is [0.8, 0.2]'),
    ("ap_range", [0.0, 1.5], "0 <= low <= high <= 1"),
    ("active_method", 2, '"active_method" is 2; it must be between 0 and 1'),
    ("compare_method", 5, '"compare_method" is 5; it must be between 0 and 1'),
    ("compare_method", "strong", '"compare_method"'),
    ("tile_size", 0, '"tile_size" is 0'),
    ("approximate", [{"descriptor": 2, "spec": "HNSW32"}],
     '"approximate" names descriptor file 2 for \'HNSW32\'; it must be between 0 and 1'),
    ("approximate", [{"descriptor": 0, "spec": "IVF4,Flat:nprobe=x"}],
     '"approximate" holds a bad SPEC'),
    ("engine", {"uri": "g.db", "collection": "", "names": None},
     '"engine" needs a URI, a collection and a descriptor file'),
    ("approximate", [{"descriptor": 0, "spec": "HNSW0"}],
     '"approximate" holds a bad SPEC (--ann HNSW0: a count of 0 (HNSW0); the numbers of a '
     'factory string are counts and dimensions, from 1); edit the session'),
    ("approximate", [{"descriptor": 0, "spec": "IVF4,Flat:nprobe=0"}],
     '"approximate" holds a bad SPEC (--ann IVF4,Flat:nprobe=0: nprobe=0 is below 1'),
    ("engine", {"uri": "g.db:ef=-1", "collection": "paintings", "names": None},
     '"engine" holds a bad URI'),
    pytest.param("top_k", int("9" * 4000), '"top_k" is a number of 4,000 digits; edit the '
                 'session or save it again', id="top_k-4000-digits"),
    pytest.param("approximate", [{"descriptor": int("9" * 30), "spec": "HNSW32"}],
                 '"approximate" is a number of 30 digits', id="descriptor-30-digits"),
])
def test_bad_values(data, key, value, expected):
    text = message(write_json(data, **{key: value}))
    assert expected in text
    assert text.count(str(data["dataset"].parent / "bad.irv")) == 1


def test_dataset_no_longer_exists(data):
    irv = write_json(data)
    data["dataset"].unlink()
    text = message(irv)
    assert ("the dataset file set.csv named in the session no longer exists" in text
            and text.endswith("move it back or edit the session"))


def test_descriptor_no_longer_exists(data):
    irv = write_json(data)
    data["weak"].unlink()
    text = message(irv)
    assert "the descriptor file desc/weak.npz named in the session no longer exists" in text


def test_ranking_no_longer_exists(data):
    irv = data["dataset"].parent / "r.irv"
    save_session(irv, SessionFile(dataset=data["dataset"], rankings=(data["ranking"],)))
    data["ranking"].unlink()
    assert "the ranking file run.trec named in the session no longer exists" in message(irv)


def test_missing_image_folder_is_not_an_error(data):
    irv = write_json(data)
    shutil.rmtree(data["images"])
    assert load_session(irv).images == data["images"]


def test_construction_checks_values(data):
    with pytest.raises(InputError, match="top_k"):
        full_session(data, top_k=500)
    # a reader option of the wrong type is refused when made, as when loaded (it was
    # saved, then refused on loading: Hypothesis found it)
    with pytest.raises(InputError, match='the reader option "row_names" must be a string or '
                                         'null, not true/false'):
        full_session(data, options={"row_names": False})
    with pytest.raises(InputError, match="neither"):
        SessionFile(dataset=data["dataset"])


# --- property: any valid session round-trips -----------------------------------------------

_DATA_ROOT: dict[str, Path] = {}


@pytest.fixture(scope="module")
def prop_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("prop")
    inside = make_data(root / "inside")
    outside = make_data(root / "outside")
    _DATA_ROOT.update({f"in_{k}": v for k, v in inside.items()})
    _DATA_ROOT.update({f"out_{k}": v for k, v in outside.items()})
    return root


unicode_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
json_scalar = st.none() | st.booleans() | st.integers(-10**6, 10**6) | unicode_text | \
    st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def sessions(draw) -> SessionFile:
    def pick(key: str) -> Path:
        return _DATA_ROOT[draw(st.sampled_from(["in_", "out_"])) + key]

    n = draw(st.integers(0, 3))
    descriptors = tuple(pick(draw(st.sampled_from(["strong", "weak", "dataset"])))
                        for _ in range(n))
    rankings = (pick("ranking"),) if n == 0 or draw(st.booleans()) else ()
    lo = draw(st.floats(0.0, 1.0))
    hi = draw(st.floats(lo, 1.0))
    # keys no reader option uses, with any value (a stored option's key, which Hypothesis
    # also draws from the code's own strings, has its type: drawn below or left out)
    options = draw(st.dictionaries(st.text(max_size=12).filter(
        lambda k: k not in OPTION_TYPES), json_scalar, max_size=4))
    options["ignore_labels"] = draw(st.lists(unicode_text, max_size=3))
    options["keep_orphans"] = draw(st.booleans())
    options["instance_rule"] = draw(st.none() | unicode_text)
    if draw(st.booleans()):
        options["distractors"] = str(pick("distractors"))
    return SessionFile(
        dataset=pick("dataset"),
        descriptors=descriptors,
        rankings=rankings,
        active_method=draw(st.integers(0, n + len(rankings) - 1)),
        images=draw(st.none() | st.just(pick("images"))),
        format=draw(st.none() | st.sampled_from(["csv", "oxford", "revisitop"])),
        options=options,
        protocol=draw(st.none() | unicode_text),
        ap=draw(st.none() | st.sampled_from(AP_RULES)),
        self_match=draw(st.none() | st.sampled_from(["keep", "remove"])),
        selected_query=draw(st.none() | unicode_text),
        top_k=draw(st.integers(10, 200)),
        tile_size=draw(st.integers(1, 1000)),
        show_ignored=draw(st.booleans()),
        filter_text=draw(unicode_text),
        failures_only=draw(st.booleans()),
        ap_range=draw(st.none() | st.just((lo, hi))),
        window=draw(st.dictionaries(unicode_text, unicode_text, max_size=3)),
        compare_method=draw(st.none() | st.integers(0, n + len(rankings) - 1)),
        compare_rerank=draw(st.none() | unicode_text),
    )


def test_property_round_trip(prop_root):
    irv = prop_root / "inside" / "prop.irv"

    @settings(max_examples=150, deadline=None)
    @given(sessions())
    def check(session: SessionFile) -> None:
        save_session(irv, session)
        assert load_session(irv) == session
        text = irv.read_text(encoding="utf-8")
        assert "\\\\" not in json.dumps(json.loads(text)["dataset"])

    check()


def test_a_session_without_show_ignored_hides_ignored_items_as_the_window_does(data):
    # The window starts with ignored items hidden; a session that does not say otherwise
    # must not show them.
    irv = write_json(data, show_ignored=KeyError)
    assert load_session(irv).show_ignored is False
    assert SessionFile(dataset=data["dataset"], descriptors=(data["strong"],)).show_ignored \
        is False


def test_the_row_name_list_is_kept_in_the_session_relative_to_it(data):
    from irviewer.opening.session_options import options_json

    rows = data["dataset"].parent / "rows.txt"
    rows.write_text("a\nb\n")
    opts = read_options(full_session(data, options={"row_names": str(rows)}))
    assert opts.row_names == rows and options_json(opts)["row_names"] == str(rows)
    irv = data["dataset"].parent / "rows.irv"
    save_session(irv, full_session(data, options=options_json(opts)))
    assert stored(irv)["options"]["row_names"] == "rows.txt"
    assert read_options(load_session(irv)).row_names == rows


def test_a_session_written_before_engines_per_file_opens_with_the_same_methods(tmp_path):
    """A session as irviewer wrote it before methods were one model (no "engines" key):
    it loads, and its request plans the same methods in the same order, the shown and the
    compared one named as they were."""
    from irviewer.opening.request import demo_paths
    from irviewer.opening.session_file import open_request

    manifest, strong = demo_paths()
    weak = strong.parent / "weak.npz"
    path = tmp_path / "old.irv"
    path.write_text(json.dumps({
        "format": "irviewer-session", "version": 1, "dataset": str(manifest),
        "descriptors": [str(strong), str(weak)], "rankings": [], "active_method": 0,
        "images": None, "reader": None, "options": {}, "protocol": None, "ap": None,
        "self_match": None, "selected_query": None, "top_k": 50, "tile_size": 132,
        "show_ignored": False, "filter_text": "", "failures_only": False, "ap_range": None,
        "window": {}, "corrections": None,
        "reranked": [{"descriptor": 0, "spec": "aqe"}],
        "approximate": [{"descriptor": 1, "spec": "IVF4,Flat:nprobe=1,2"}],
        "engine": None, "active_rerank": "aqe", "compare_method": 1,
        "compare_rerank": "IVF4,Flat:nprobe=2"}), encoding="utf-8")
    session = load_session(path)
    assert session.engines == ()
    request = open_request(session)
    assert names(request) == [
        "strong.npz", "strong.npz + aqe", "weak.npz", "weak.npz + IVF4,Flat:nprobe=1",
        "weak.npz + IVF4,Flat:nprobe=2"]
    assert request.method_named(session.active_method, session.active_rerank) == \
        "strong.npz + aqe"
    assert request.method_named(session.compare_method or 0, session.compare_rerank) == \
        "weak.npz + IVF4,Flat:nprobe=2"


def test_engines_of_one_file_round_trip(data):
    session = full_session(data, engines=((1, ("/data/g.db", "gallery", "name")),))
    path = data["dataset"].parent / "s.irv"
    save_session(path, session)
    assert stored(path)["engines"] == [{"descriptor": 1, "uri": "/data/g.db",
                                        "collection": "gallery", "names": "name"}]
    assert load_session(path).engines == session.engines
    with pytest.raises(InputError, match="\"engines\" names descriptor file 5"):
        full_session(data, engines=((5, ("/data/g.db", "gallery", None)),))


def test_a_number_longer_than_python_reads_is_one_sentence(data):
    irv = write_json(data, top_k="@")
    irv.write_text(irv.read_text(encoding="utf-8").replace('"@"', "9" * 5000),
                   encoding="utf-8")
    assert message(irv).endswith("not a session irviewer saved (it holds a number of "
                                 "thousands of digits); save the session again")


@pytest.mark.parametrize("nested", ["[" * 100_000 + "]" * 100_000,
                                    '{"a":' * 100_000 + "1" + "}" * 100_000])
def test_json_nested_too_deep_is_one_sentence(data, nested):
    irv = write_json(data, window="@")
    irv.write_text(irv.read_text(encoding="utf-8").replace('"@"', nested), encoding="utf-8")
    assert message(irv).endswith("not a session irviewer saved (its JSON is nested too deeply "
                                 "to read); save the session again")


def test_credentials_in_an_engine_uri_are_refused_without_repeating_them(data):
    text = message(write_json(data, engine={"uri": "http://admin:S3cr3t@milvus.example:19530",
                                            "collection": "paintings", "names": None}))
    assert "S3cr3t" not in text and "admin" not in text
    assert ('"engine" holds a bad URI (--engine http://milvus.example:19530: irviewer takes '
            "no user name or password in the URI") in text


def test_the_names_file_of_index_ids_is_kept_relative_to_the_session(data):
    names = data["dataset"].parent / "ids.txt"
    names.write_text("a\n", encoding="utf-8")
    session = full_session(data, ann_names=names)
    path = data["dataset"].parent / "s.irv"
    save_session(path, session)
    assert stored(path)["ann_names"] == "ids.txt"
    loaded = load_session(path)
    assert loaded.ann_names == names
    from irviewer.opening.session_file import open_request

    assert open_request(loaded).ann_names == names
