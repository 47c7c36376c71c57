"""An annotator's corrections on the command line, example by example (the numbers follow
the window's examples in tests/gui/corrections/test_examples.py): an unterminated quoted
field is refused in every CSV irviewer reads, naming the line where the quote opens (02);
a ``--screenshot`` run never waits for an answer (06); ``apply-corrections`` never writes
into the published dataset, the file system's root or the current folder (07); cells a
spreadsheet would run are neutralised in every CSV irviewer writes, and a corrections time
that is not ISO 8601 is refused (08); ``irviewer --help | head`` ends quietly (12). The
lock's race is 05, in tests/formats/test_file_lock.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from irviewer.cli import main
from irviewer.core.corrections import Correction
from irviewer.core.errors import InputError
from irviewer.formats.artwork_titles import read_titles
from irviewer.formats.corrections_file import write_corrections
from irviewer.formats.reviewed_file import read_reviewed
from irviewer.opening.request import demo_paths
from tests.corrections_cases import make_case

HEADER = "query,item,label,author,time,note\n"
UNCLOSED = {
    # a note whose closing quote is missing: the rows after it were read into it
    "to the end": (HEADER + 'img/a_q,img/b1,positive,ana,,"same frame\n'
                   "img/b_q,img/a1,positive,ana,,\nimg/b_q,img/a2,positive,ana,,\n", 2),
    # ... up to the next quote, which then closes it
    "to a later quote": (HEADER + "img/a_q,img/b1,positive,ana,,plain\n"
                         'img/a_q,img/b2,positive,ana,,"same frame\n'
                         'img/b_q,img/a1,positive,ana,,"seen"\n', 3),
    # a file cut off inside a quoted field
    "cut off": (HEADER + 'img/a_q,img/b1,positive,ana,,"cut of', 2),
}


def run_cli(*args: str) -> tuple[int, str]:
    """Return the exit code and stderr of ``irviewer args`` in a fresh process."""
    done = subprocess.run([sys.executable, "-m", "irviewer", *args], capture_output=True,
                          text=True, timeout=120)
    return done.returncode, done.stderr


@pytest.mark.parametrize("case", list(UNCLOSED))
def test_02_an_unclosed_quote_in_a_corrections_file_exits_2_naming_its_line(
        tmp_path, capsys, case):
    """eval --corrections and apply-corrections refuse a corrections file whose quoted
    field never closes (exit 2, one line naming the line where the quote opens), where it
    was read as one correction with the rows after it in its note."""
    text, line = UNCLOSED[case]
    data = make_case("manifest", tmp_path / "set")
    fix = tmp_path / "fix.corrections.csv"
    fix.write_text(text, encoding="utf-8")
    for args in (["eval", str(data.dataset), "-d", str(data.descriptors)],
                 ["apply-corrections", str(data.dataset), "--out", str(tmp_path / "o.csv")]):
        assert main([*args, "--corrections", str(fix)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert f"fix.corrections.csv, line {line}: a quoted field opens here" in err
    assert not (tmp_path / "o.csv").exists()


def test_02_an_accepted_suspect_list_with_an_unclosed_quote_is_refused(tmp_path, capsys):
    """A reviewed audit list (``accept`` column) is a corrections file: its unclosed quote
    is refused with the line too."""
    data = make_case("manifest", tmp_path / "set")
    fix = tmp_path / "suspects.csv"
    fix.write_text("query,item,label,author,time,note,accept\n"
                   'img/a_q,img/b1,positive,audit,,"evidence,yes\n'
                   "img/b_q,img/a1,positive,audit,,more,yes\n", encoding="utf-8")
    assert main(["eval", str(data.dataset), "-d", str(data.descriptors), "--corrections",
                 str(fix)]) == 2
    assert "suspects.csv, line 2: a quoted field opens here" in capsys.readouterr().err


def test_02_a_manifest_with_an_unclosed_quote_exits_2_naming_its_line(tmp_path, capsys):
    """A CSV manifest whose title never closes its quote is refused (its rows after it were
    swallowed into one title)."""
    data = make_case("manifest", tmp_path / "set")
    lines = data.dataset.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].rsplit(",", 1)[0] + ',"a title'
    data.dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["eval", str(data.dataset), "-d", str(data.descriptors)]) == 2
    err = capsys.readouterr().err
    assert "set.csv, line 4: a quoted field opens here" in err and err.count("\n") == 1


def test_02_titles_and_reviewed_files_name_the_line_of_an_unclosed_quote(tmp_path):
    """The curator's titles file and the review queue's reviewed file refuse it too."""
    titles = tmp_path / "titles.csv"
    titles.write_text('id,title\nmona,Mona Lisa\nwave,"The Great Wave\nstarry,Starry\n',
                      encoding="utf-8")
    with pytest.raises(InputError, match=r"titles.csv, line 3: a quoted field opens here"):
        read_titles(titles)
    reviewed = tmp_path / "x.reviewed.csv"
    reviewed.write_text('kind,query,item,label,author,time,note\nk,q,i,l,a,,"checked\n'
                        "k,q2,i2,l,a,,ok\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"x.reviewed.csv, line 2: a quoted field opens"):
        read_reviewed(reviewed)


def _demo_copy(folder: Path) -> tuple[Path, Path]:
    csv, desc = demo_paths()
    folder.mkdir()
    shutil.copy(csv, folder / "demo.csv")
    shutil.copy(desc, folder / "strong.npz")
    (folder / "images").symlink_to(csv.parent / "images")
    return folder / "demo.csv", folder / "strong.npz"


def _session(folder: Path, dataset: Path, descriptors: Path) -> Path:
    """Write a session whose view the window cannot take as saved (a query the dataset
    lacks, a splitter the window lays out otherwise): closing it would ask to save."""
    path = folder / "work.irv"
    path.write_text(json.dumps({
        "format": "irviewer-session", "version": 1, "dataset": str(dataset),
        "descriptors": [str(descriptors)], "selected_query": "no such query",
        "window": {"sizes": "10,20,30"}}), encoding="utf-8")
    return path


def test_06_a_screenshot_of_a_session_never_waits_for_an_answer(tmp_path):
    """``irviewer work.irv --screenshot s.png`` writes the PNG and exits 0 though the view
    differs from the file (closing used to ask "save?" in a modal box nobody answers), and
    a run that fails after opening exits 2 instead of hanging; the session is untouched."""
    dataset, descriptors = _demo_copy(tmp_path / "demo")
    session = _session(tmp_path, dataset, descriptors)
    before = session.read_bytes()
    code, err = run_cli(str(session), "--screenshot", str(tmp_path / "s.png"))
    assert code == 0, err
    assert (tmp_path / "s.png").stat().st_size > 0
    code, err = run_cli(str(session), "--select", "nosuch", "--screenshot",
                        str(tmp_path / "t.png"))
    assert code == 2 and "no query is called 'nosuch'" in err
    assert session.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo", "s.png", "work.irv"]


@pytest.mark.parametrize("where", ["inside", "root", "current", "holding"])
def test_07_apply_corrections_never_writes_into_the_published_dataset(tmp_path, capsys,
                                                                      monkeypatch, where):
    """``--out`` inside the published gt_files folder, ``/``, ``.`` or a folder holding
    the dataset is refused with exit 2 in one sentence, and nothing is written or looked
    through (``--out gt/sub`` wrote into the published dataset; ``/`` scanned the disk)."""
    case = make_case("oxford", tmp_path / "ox")
    published = sorted(p.name for p in case.dataset.iterdir())
    fix = tmp_path / "fix.corrections.csv"
    write_corrections(fix, [Correction("souls_1", "bridge_000003", "good")])
    monkeypatch.chdir(tmp_path)
    out = {"inside": str(case.dataset / "sub"), "root": "/", "current": ".",
           "holding": str(case.dataset.parent)}[where]
    assert main(["apply-corrections", str(case.dataset), "--corrections", str(fix),
                 "--out", out, *case.args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing was written" in err
    assert {"inside": "is inside the published dataset", "root": "is the root of the file "
            "system", "current": "is the current folder", "holding": "holds the published "
            "dataset"}[where] in err
    assert sorted(p.name for p in case.dataset.iterdir()) == published


def test_08_corrections_cells_a_spreadsheet_would_run_are_neutralised(tmp_path, capsys):
    """The author and note of a correction written as a formula are written with a leading
    apostrophe (shown as text, never run), read back as typed; a time that is not ISO 8601
    is refused with its line."""
    data = make_case("manifest", tmp_path / "set")
    fix = tmp_path / "fix.corrections.csv"
    write_corrections(fix, [Correction("img/a_q", "img/b1", "junk", "=cmd|'/c calc'!A1",
                                       "2026-11-23T14:05:09Z", "@SUM(1+1)*cmd|'/c calc'!A0")])
    rows = fix.read_text(encoding="utf-8").splitlines()
    assert rows[1] == ("img/a_q,img/b1,junk,'=cmd|'/c calc'!A1,2026-11-23T14:05:09Z,"
                       "'@SUM(1+1)*cmd|'/c calc'!A0,,,")
    assert main(["eval", str(data.dataset), "-d", str(data.descriptors), "--corrections",
                 str(fix), "--json", str(tmp_path / "r.json")]) == 0
    capsys.readouterr()
    fix.write_text(HEADER + "img/a_q,img/b1,junk,ana,yesterday,\n", encoding="utf-8")
    assert main(["eval", str(data.dataset), "-d", str(data.descriptors), "--corrections",
                 str(fix)]) == 2
    assert ("fix.corrections.csv, line 2: the time 'yesterday' is not an ISO 8601 time"
            in capsys.readouterr().err)


def test_08_a_collections_titles_and_the_exports_are_neutralised(tmp_path, capsys):
    """A title ``=cmd|'/c calc'!A1`` goes into collection.csv (and a curator's edit into
    titles.csv) as text a spreadsheet shows; the per-query export of eval neutralises a
    query name that starts like a formula, while numbers (negative scores) stay numbers."""
    from irviewer.collection.curation import write_artwork_fields
    from tests.collection_photos import flat_folder

    photos = tmp_path / "photos"
    flat_folder(photos, 2)
    titles = tmp_path / "titles.csv"
    titles.write_text("id,title\nart00,=cmd|'/c calc'!A1\nart01,-Tuesday\n", encoding="utf-8")
    assert main(["index", str(photos), "--out", str(tmp_path / "coll"), "--titles",
                 str(titles)]) == 0
    capsys.readouterr()
    manifest = (tmp_path / "coll" / "collection.csv").read_text(encoding="utf-8")
    assert ",'=cmd|'/c calc'!A1" in manifest and ",'-Tuesday" in manifest
    assert "\n=" not in manifest and ",=" not in manifest
    write_artwork_fields(tmp_path / "coll", "art01", {"title": "+1+2", "artist": "@me"})
    assert "art01,'+1+2,'@me" in titles.read_text(encoding="utf-8")
    data = make_case("manifest", tmp_path / "set")
    text = data.dataset.read_text(encoding="utf-8").replace("img/a_q.jpg,", "=a_q.jpg,")
    data.dataset.write_text(text, encoding="utf-8")
    with np.load(data.descriptors) as d:
        arrays = dict(d)
    names = [("=a_q" if n == "a_q" else n) for n in arrays["names"].tolist()]
    np.savez(data.descriptors, **{**arrays, "names": np.array(names)})
    out = tmp_path / "per_query.csv"
    assert main(["eval", str(data.dataset), "-d", str(data.descriptors), "--per-query",
                 str(out)]) == 0
    exported = out.read_text(encoding="utf-8").splitlines()
    assert any(",'=a_q," in row for row in exported)
    assert not any(",=" in row for row in exported)


def test_12_help_into_a_closed_pipe_ends_quietly():
    """``irviewer --help | head`` (the reader gone before irviewer writes) exits 0 with
    nothing on stderr, where a BrokenPipeError traceback was printed."""
    env = {**os.environ, "PYTHONUNBUFFERED": ""}
    for args in (["--help"], ["eval", "--help"]):
        process = subprocess.Popen([sys.executable, "-m", "irviewer", *args],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        err = process.stderr.read().decode()
        process.stderr.close()
        assert process.wait(60) == 0, err
        assert err == ""
