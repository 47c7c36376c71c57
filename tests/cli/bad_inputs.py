"""A table of bad inputs for every command, and the check every answer must pass: exit 2,
one line on stderr, no traceback, and every option the output names one the running
command takes (a sentence from a reader reaches several commands)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np

from irviewer.cli import COMMANDS, build_parser
from irviewer.cli.viewer import build_viewer_parser

VIEWER = "(viewer)"

#: An option as a message writes it: -d, --row-names (not inside a path or a word).
OPTION_WORD = re.compile(r"(?<![\w/.\-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])")


def parser_of(command: str) -> argparse.ArgumentParser:
    """Return the parser ``irviewer COMMAND`` parses with (the window's without one)."""
    if command == VIEWER:
        return build_viewer_parser()
    return build_parser(only=command)._subparsers._group_actions[0].choices[command]


def flags_of(command: str) -> set[str]:
    """Return every option string ``irviewer COMMAND`` takes."""
    return {s for a in parser_of(command)._actions for s in a.option_strings}


def options_named(text: str) -> set[str]:
    """Return the options a message names."""
    return set(OPTION_WORD.findall(text))


def make_data(root: Path) -> Path:
    """Write the files the bad inputs name into ``root``; return it."""
    from tests.formats.test_oxford import write_gt

    (root / "set.csv").write_text("image,instance,role\na1.jpg,a,both\na2.jpg,a,gallery\n"
                                  "b1.jpg,b,both\nb2.jpg,b,gallery\n")
    names = np.array(["a1", "a2", "b1", "b2"])
    rows = np.array([[1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9]], np.float32)
    np.savez(root / "A.npz", features=rows, names=names)
    np.savez(root / "B.npz", features=rows[::-1].copy(), names=names)
    np.save(root / "rows.npy", rows[:3])  # no names, and one row short
    np.savez(root / "other.npz", features=rows, names=np.array(["x", "y", "z", "w"]))
    write_gt(root / "gt")
    for folder, files in (("inst/gallery", ["monalisa1.jpg", "monalisa2.jpg"]),
                          ("inst/query", ["monalisa3.jpg"])):
        (root / folder).mkdir(parents=True)
        for name in files:
            (root / folder / name).write_bytes(b"")
    (root / "unknown.xyz").write_text("what is this\n")
    (root / "garbage.run").write_text("this is not a ranking\n")
    (root / "corr.csv").write_text("query,item,label,author,time,note\n"
                                   ",b2,a,me,2024-01-01T00:00:00Z,\n")
    (root / "bad_corr.csv").write_text("query,item,label,author,time,note\n"
                                       "nobody,b2,positive,me,2024-01-01T00:00:00Z,\n")
    (root / "photo.jpg").write_text("not an image\n")
    return root


#: Bad dataset inputs: every command reads a dataset, so each reaches every command.
DATASET_CASES = {
    "missing dataset": ["{r}/nope.csv"],
    "unrecognised dataset": ["{r}/unknown.xyz"],
    "unknown reader": ["{r}/set.csv", "--format", "nosuch"],
    "oxford without its gallery": ["{r}/gt"],
    "instance rule without labels": ["{r}/inst"],
    "missing row-name list": ["{r}/set.csv", "--row-names", "{r}/none.txt"],
    "missing ignore list": ["{r}/set.csv", "--ignore-labels", "{r}/none.txt"],
    "missing image folder": ["{r}/gt", "--images", "{r}/none"],
    # a reader option the dataset's reader does not read: refused, never ignored
    "distractors for a set that has none": ["{r}/set.csv", "--distractors", "{r}/corr.csv"],
    "an image folder for a manifest": ["{r}/set.csv", "--images", "{r}"],
    "an instance rule for Oxford's lists": ["{r}/gt", "--instance-rule", "dash"],
}
#: Bad methods, for the commands that take them.
METHOD_CASES = {
    "missing descriptor file": ["-d", "{r}/none.npz"],
    "rows without names, one short": ["-d", "{r}/rows.npy"],
    "names from another dataset": ["-d", "{r}/other.npz"],
    "a ranking that is not one": ["--ranking", "{r}/garbage.run"],
}
#: What each command needs beside the dataset for the dataset to be the problem.
GOOD = {
    "eval": ["-d", "{r}/A.npz"],
    "compare": ["-d", "{r}/A.npz", "{r}/B.npz"],
    "figure": ["-d", "{r}/A.npz", "--worst", "1", "--out", "{r}/f.png"],
    "audit": ["-d", "{r}/A.npz", "{r}/B.npz"],
    "search": ["-d", "{r}/A.npz", "{r}/photo.jpg"],
    "apply-corrections": ["--corrections", "{r}/corr.csv", "--out", "{r}/out.csv"],
    VIEWER: ["-d", "{r}/A.npz", "--screenshot", "{r}/shot.png"],
}
#: What the commands that take methods need beside one bad method.
WITH_A_METHOD = {
    "eval": [],
    "compare": ["-d", "{r}/B.npz"],
    "figure": ["--worst", "1", "--out", "{r}/f.png"],
    "audit": [],
    VIEWER: ["--screenshot", "{r}/shot.png"],
}
#: Each command's own bad inputs (argv after the command name).
OWN_CASES = {
    "eval": {
        "one method's files from two methods": ["{r}/set.csv", "-d", "{r}/A.npz", "{r}/B.npz",
                                                "--export-trec", "{r}/x"],
        "a factory string FAISS asserts on": ["{r}/set.csv", "-d", "{r}/A.npz", "--ann", "HNSW0"],
        "a parameter FAISS takes silently": ["{r}/set.csv", "-d", "{r}/A.npz", "--ann",
                                             "IVF4,Flat:nprobe=1.5"],
        "ids named for no index file": ["{r}/set.csv", "-d", "{r}/A.npz", "--ann", "Flat",
                                        "--ann-names", "{r}/corr.csv"],
        "an empty engine": ["{r}/set.csv", "-d", "{r}/A.npz", "--engine", "", "--collection",
                            "g"],
        "an engine with a password": ["{r}/set.csv", "-d", "{r}/A.npz", "--engine",
                                      "http://u:p4ss@127.0.0.1:9", "--collection", "g"],
        "a Milvus Lite database that does not exist": ["{r}/set.csv", "-d", "{r}/A.npz",
                                                       "--engine", "{r}/none.db",
                                                       "--collection", "g"],
        "unknown protocol": ["{r}/set.csv", "-d", "{r}/A.npz", "--protocol", "nosuch"],
        "a protocol the dataset cannot use": ["{r}/set.csv", "-d", "{r}/A.npz", "--protocol",
                                              "oxford"],
        "zero depth": ["{r}/set.csv", "-d", "{r}/A.npz", "--depth", "0"],
        "bad corrections": ["{r}/set.csv", "-d", "{r}/A.npz", "--corrections",
                            "{r}/bad_corr.csv"],
        "HPatches results of a manifest": ["{r}/set.csv", "-d", "{r}/A.npz",
                                           "--write-results", "{r}/x.results"],
    },
    "compare": {
        "one method": ["{r}/set.csv", "-d", "{r}/A.npz"],
        "no permutations": ["{r}/set.csv", "-d", "{r}/A.npz", "{r}/B.npz",
                            "--permutations", "0"],
        "unknown metric": ["{r}/set.csv", "-d", "{r}/A.npz", "{r}/B.npz", "--metric", "nope"],
    },
    "figure": {
        "three methods": ["{r}/set.csv", "-d", "{r}/A.npz", "{r}/B.npz", "{r}/A.npz",
                          "--worst", "1", "--out", "{r}/f.png"],
        "a gif": ["{r}/set.csv", "-d", "{r}/A.npz", "--worst", "1", "--out", "{r}/f.gif"],
        "an unknown query": ["{r}/set.csv", "-d", "{r}/A.npz", "--queries", "nope", "--out",
                             "{r}/f.png"],
        "largest changes of one method": ["{r}/set.csv", "-d", "{r}/A.npz",
                                          "--largest-changes", "1", "--out", "{r}/f.png"],
        "two protocols": ["{r}/set.csv", "-d", "{r}/A.npz", "--worst", "1", "--protocol",
                          "instance", "instance", "--out", "{r}/f.png"],
    },
    "audit": {
        "negative top": ["{r}/set.csv", "-d", "{r}/A.npz", "--top", "-1"],
        "two protocols": ["{r}/set.csv", "-d", "{r}/A.npz", "--protocol", "instance",
                          "instance"],
        "bad corrections": ["{r}/set.csv", "-d", "{r}/A.npz", "--corrections",
                            "{r}/bad_corr.csv"],
    },
    "search": {
        "not an image": ["{r}/set.csv", "-d", "{r}/A.npz", "{r}/photo.jpg"],
        "two descriptor files": ["{r}/set.csv", "-d", "{r}/A.npz", "-d", "{r}/B.npz",
                                 "{r}/photo.jpg"],
        "an unknown extractor": ["{r}/set.csv", "-d", "{r}/A.npz", "--extractor", "nope",
                                 "{r}/photo.jpg"],
    },
    "apply-corrections": {
        "bad corrections": ["{r}/set.csv", "--corrections", "{r}/bad_corr.csv", "--out",
                            "{r}/out.csv"],
        "out in a missing folder": ["{r}/set.csv", "--corrections", "{r}/corr.csv", "--out",
                                    "{r}/none/out.csv"],
    },
    VIEWER: {
        "two protocols": ["{r}/set.csv", "-d", "{r}/A.npz", "--protocol", "instance",
                          "instance", "--screenshot", "{r}/shot.png"],
        "a factory string FAISS asserts on": ["{r}/set.csv", "-d", "{r}/A.npz", "--ann",
                                              "HNSW0", "--screenshot", "{r}/shot.png"],
        "an empty engine": ["{r}/set.csv", "-d", "{r}/A.npz", "--engine", "", "--collection",
                            "g", "--screenshot", "{r}/shot.png"],
        "a bad re-ranking SPEC": ["{r}/set.csv", "-d", "{r}/A.npz", "--rerank", "aqe:n=-1",
                                  "--screenshot", "{r}/shot.png"],
        "re-ranking a ranking": ["{r}/set.csv", "--ranking", "{r}/garbage.run", "--rerank",
                                 "aqe", "--screenshot", "{r}/shot.png"],
    },
}


def cases(commands: list[str]) -> list[tuple[str, str, list[str]]]:
    """Return (command, what, argv after the command name) for every bad input."""
    out = []
    for command in commands:
        for what, argv in DATASET_CASES.items():
            out.append((command, what, [*argv, *GOOD[command]]))
        if command in WITH_A_METHOD:
            for what, argv in METHOD_CASES.items():
                out.append((command, what, ["{r}/set.csv", *argv, *WITH_A_METHOD[command]]))
        out += [(command, what, argv) for what, argv in OWN_CASES[command].items()]
    return out


HEADLESS = [c for c in COMMANDS if c in GOOD]


def check_answer(command: str, code: int, out: str, err: str) -> None:
    """Assert that a bad input got exit 2, one line on stderr (after what the command
    printed for the inputs that were good), no traceback, and names only options of
    ``command``."""
    assert code == 2, (code, out, err)
    assert "Traceback" not in err and "internal error" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) >= 1 and lines[-1].startswith("irviewer: error: "), err
    if command != "search":  # search says per photo, then how many failed
        assert len(lines) == 1, err
    assert "\u27e6" not in out + err, "a placeholder reached the user"
    assert "Open dialog" not in out + err, "the window's wording on the command line"
    named = options_named(out + err) | {flag for phrase, flag in PHRASES.items()
                                        if phrase in err}
    foreign = named - flags_of(command)
    assert not foreign, f"names options {command} does not take: {sorted(foreign)}: {err}"


#: Phrases that tell the user to give what an option gives.
PHRASES = {"a descriptor file": "-d", "descriptor file with names": "-d",
           "precomputed ranking": "--ranking"}
