"""The one table of shared options: every subcommand and the window's command line parse
them the same way, a repeatable option extends, and the arguments become one OpenRequest."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

from irviewer.cli import COMMANDS, build_parser, main
from irviewer.cli.viewer import build_viewer_parser
from irviewer.formats.base import ReadOptions, reader_options
from irviewer.opening.options import (
    OPTIONS,
    add_options,
    read_options,
    request_from_args,
)
from irviewer.opening.request import demo_request

from .reader_values import example_read_options

VIEWER = "(viewer)"


def parser_of(command: str) -> argparse.ArgumentParser:
    """Return the parser ``irviewer COMMAND`` parses with (the window's without one)."""
    if command == VIEWER:
        return build_viewer_parser()
    return build_parser(only=command)._subparsers._group_actions[0].choices[command]


def shared_keys(parser: argparse.ArgumentParser) -> set[str]:
    """Return the keys of the table's options ``parser`` takes."""
    dests = {a.dest for a in parser._actions}
    return {key for key in OPTIONS if key in dests}


def reader_argv(options: ReadOptions) -> list[str]:
    """Return the command-line words that give ``options`` (from the declarations)."""
    argv: list[str] = []
    for name, spec in reader_options().items():
        value = getattr(options, name)
        if spec.kind == "switch":
            argv += [spec.flag] if value != getattr(ReadOptions(), name) else []
        elif spec.kind == "words":
            for word in value:
                argv += [spec.flag, word]
        elif value is not None:
            argv += [spec.flag, str(value)]
    return argv


ALL = [*COMMANDS, VIEWER]
#: ``irviewer index`` reads a folder of photos, not a dataset: it takes no reader option.
READ_A_DATASET = [c for c in ALL if c != "index"]


@pytest.mark.parametrize("command", READ_A_DATASET)
def test_every_command_takes_its_shared_options_from_the_table(command):
    parser = parser_of(command)
    keys = shared_keys(parser)
    assert set(reader_options()) | {"format"} <= keys  # every command reads a dataset
    for key in keys:
        o = OPTIONS[key]
        action = next(a for a in parser._actions if a.dest == key)
        assert set(o.flags) <= set(action.option_strings), (command, key)
        if o.choices:
            assert tuple(action.choices) == o.choices


@pytest.mark.parametrize("command", READ_A_DATASET)
def test_every_command_reads_the_reader_options_the_same_way(command, tmp_path):
    wanted = example_read_options(tmp_path)
    parser = parser_of(command)
    positional = ["--corrections", "c.csv", "--out", "o.csv"] \
        if command == "apply-corrections" else (["--out", "f.pdf", "--worst", "1"]
                                               if command == "figure" else [])
    args = parser.parse_args([str(tmp_path / "set.csv"), *reader_argv(wanted), *positional])
    assert read_options(args) == wanted, command


@pytest.mark.parametrize("command", READ_A_DATASET)
def test_a_repeatable_option_extends_in_every_command(command):
    """-d A -d B and -d A B give two files wherever -d is taken: the window opened only
    the last -d, eval scored only the last; search, whose photos follow its options, takes
    one value per flag."""
    parser = parser_of(command)
    keys = shared_keys(parser)
    extra = {"figure": ["--out", "f.pdf", "--worst", "1"],
             "apply-corrections": ["--corrections", "c.csv", "--out", "o.csv"]
             }.get(command, [])
    for key in sorted(keys):
        o = OPTIONS[key]
        if not o.repeatable:
            continue
        flag, a, b = o.flag, "a1", "b2"
        twice = parser.parse_args(["set.csv", flag, a, flag, b, *extra])
        assert [str(v) for v in getattr(twice, key)] == [a, b], (command, key)
        if command == "search":  # one value per flag: the photos stay positional
            once = parser.parse_intermixed_args(["set.csv", flag, a, "photo.jpg"])
            assert [str(v) for v in getattr(once, key)] == [a]
            assert [str(p) for p in once.paths] == ["set.csv", "photo.jpg"]
        else:
            once = parser.parse_args(["set.csv", *extra, flag, a, b])
            assert [str(v) for v in getattr(once, key)] == [a, b], (command, key)


def test_the_window_opens_every_method_the_command_line_names():
    for argv in (["set.csv", "-d", "A.npz", "-d", "B.npz"], ["set.csv", "-d", "A.npz", "B.npz"],
                 ["set.csv", "-d", "A.npz", "--ranking", "r.run", "-d", "B.npz"]):
        request = request_from_args(build_viewer_parser().parse_args(argv))
        assert request.descriptors == (Path("A.npz"), Path("B.npz")), argv
        assert request.dataset == Path("set.csv")


def test_the_request_carries_every_shared_option(tmp_path):
    wanted = example_read_options(tmp_path)
    args = parser_of("eval").parse_args(
        ["set.csv", "-d", "a.npz", "--format", "manifest", "--protocol", "instance", "--ap",
         "trapezoid", "--self-match", "keep", "--corrections", "c.csv", "--depth", "30",
         "--rerank", "aqe:n=3", "--ann", "HNSW8:efSearch=4", "--ann-names", "ids.txt",
         "--engine", "g.db", "--collection", "gallery", "--engine-names", "image",
         *reader_argv(wanted)])
    request = request_from_args(args)
    assert (request.dataset, request.descriptors, request.rankings) == (
        Path("set.csv"), (Path("a.npz"),), ())
    assert (request.format, request.protocol, request.ap, request.self_match) == (
        "manifest", "instance", "trapezoid", "keep")
    assert request.corrections == Path("c.csv") and request.k == 30
    assert request.rerank == ("aqe:n=3",) and request.ann == ("HNSW8:efSearch=4",)
    assert request.ann_names == Path("ids.txt")
    assert (request.engine, request.collection, request.engine_names) == (
        "g.db", "gallery", "image")
    assert request.options == wanted
    # Every table option that fills a request field is one eval or the window takes.
    filled = {o.request for o in OPTIONS.values() if o.request}
    assert filled <= {"descriptors", "rankings", "format", "protocol", "ap", "self_match",
                      "corrections", "k", "rerank", "ann", "ann_names", "engine",
                      "collection", "engine_names"}


def test_the_demo_request_and_its_methods():
    viewer = build_viewer_parser()
    assert request_from_args(viewer.parse_args([])) == demo_request()
    assert request_from_args(viewer.parse_args(["--demo"])) == demo_request()
    weak = demo_request().descriptors[1]
    mine = request_from_args(viewer.parse_args(["--demo", "-d", str(weak)]))
    assert mine.dataset == demo_request().dataset and mine.descriptors == (weak,)
    one = request_from_args(parser_of("eval").parse_args(["--demo"]), demo_methods=1)
    assert one.descriptors == demo_request().descriptors[:1]


def test_a_list_file_adds_to_the_repeated_values(tmp_path):
    listed = tmp_path / "labels.txt"
    listed.write_text("0\n# a comment\n7\n")
    parser = argparse.ArgumentParser()
    add_options(parser, "ignore_labels")
    args = parser.parse_args(["--ignore-label", "3", "4", "--ignore-labels", str(listed)])
    assert read_options(args).ignore_labels == ("3", "4", "0", "7")


@pytest.fixture
def toy(tmp_path):
    (tmp_path / "set.csv").write_text("image,instance,role\na1.jpg,a,both\na2.jpg,a,gallery\n"
                                      "b1.jpg,b,both\nb2.jpg,b,gallery\n")
    names = np.array(["a1", "a2", "b1", "b2"])
    for name, rows in (("A", [[1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9]]),
                       ("B", [[1, 0], [0, 1], [0, 1], [1, 0]])):
        np.savez(tmp_path / f"{name}.npz", features=np.array(rows, np.float32), names=names)
    return tmp_path


@pytest.mark.parametrize("form", [["-d", "{A}", "-d", "{B}"], ["-d", "{A}", "{B}"]])
def test_eval_given_two_methods_either_way_scores_both_in_order(toy, form, capsys):
    out = toy / "r.json"
    argv = ["eval", str(toy / "set.csv"),
            *(w.format(A=toy / "A.npz", B=toy / "B.npz") for w in form), "--json", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    report = json.loads(out.read_text())
    assert [e["method"] for e in report["evaluations"]] == ["A.npz", "B.npz"]


def test_compare_given_two_methods_either_way_compares_them(toy, capsys):
    for form in (["-d", "A.npz", "-d", "B.npz"], ["-d", "A.npz", "B.npz"]):
        argv = ["compare", str(toy / "set.csv"), *(str(toy / w) if w.endswith(".npz") else w
                                                   for w in form)]
        assert main(argv) == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        assert "A.npz" in out and "B.npz" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["eval", "{set}", "-d", "{A}", "--protocol", "instance", "--protocol", "instance"],
     "give one protocol (--protocol); 2 given (instance, instance)"),
    (["audit", "{set}", "-d", "{A}", "--protocol", "instance", "instance"],
     "give one protocol (--protocol); 2 given"),
    (["search", "{set}", "-d", "{A}", "-d", "{B}", "{A}"],
     "give one gallery descriptor file (-d); 2 given (A.npz, B.npz)"),
    (["{set}", "-d", "{A}", "--protocol", "instance", "instance"],
     "give one protocol (--protocol); 2 given"),
])
def test_a_command_that_takes_one_value_refuses_more(toy, argv, message, capsys):
    words = [w.format(set=toy / "set.csv", A=toy / "A.npz", B=toy / "B.npz") for w in argv]
    assert main(words) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_the_dataset_after_a_repeatable_option_is_named_as_the_problem(capsys):
    with pytest.raises(SystemExit) as e:
        main(["eval", "-d", "A.npz", "set.csv"])
    assert e.value.code == 2
    assert "give the DATASET before -d and --ranking" in capsys.readouterr().err


def test_a_session_file_round_trips_every_reader_option(tmp_path):
    """Whatever ReadOptions hold, a session saved with them opens with the same ones: every
    field the declarations name, paths below the session's folder stored relative to it."""
    from hypothesis import given, settings

    from irviewer.opening.session_file import SessionFile, load_session, save_session
    from irviewer.opening.session_file import read_options as session_options
    from irviewer.opening.session_options import options_json

    from .reader_values import read_options_values

    folder, outside = tmp_path / "work", tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "set.csv").write_text("x\n")
    (folder / "d.npz").write_text("x\n")
    irv = folder / "s.irv"

    @settings(max_examples=120, deadline=None)
    @given(read_options_values(folder, outside))
    def check(options: ReadOptions) -> None:
        own = {name: getattr(options, name) for name, spec in reader_options().items()
               if not spec.json}  # kept by the session as fields of its own (images)
        save_session(irv, SessionFile(dataset=folder / "set.csv",
                                      descriptors=(folder / "d.npz",),
                                      options=options_json(options), **own))
        assert session_options(load_session(irv)) == options

    check()
