"""`irviewer index` and every command on a collection with no descriptor file: the
progress bar, the summary, and one line with exit 2 for every bad input."""

from __future__ import annotations

import io
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from irviewer.cli import main
from irviewer.cli.progress import ProgressBar, bar_line
from irviewer.collection import indexing
from irviewer.io.program import program_command
from irviewer.view.progress import clock, progress_words
from tests.collection_photos import flat_folder, folder_of_subfolders

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def small_vocabulary(monkeypatch):
    """A small vocabulary sample, so that learning takes a moment in these tests."""
    monkeypatch.setattr(indexing, "LEARN_ROWS", 3000)


def index(*args: str) -> int:
    return main(["index", *args, "--workers", "1"])


def test_index_prints_progress_skips_and_a_summary(tmp_path, capsys, monkeypatch):
    from irviewer.io import allocator

    kept = []  # the indexing process keeps freed memory (with one worker it describes)
    monkeypatch.setattr(allocator, "keep_freed_memory", lambda: kept.append(True) or True)
    flat_folder(tmp_path / "photos", 3)
    (tmp_path / "photos" / "broken.png").write_bytes(b"\x89PNG but no more")
    assert index(str(tmp_path / "photos"), "--out", str(tmp_path / "coll")) == 0
    assert kept == [True]
    out, err = capsys.readouterr()
    assert "describing the photos  3/3 [########################]" in err
    assert "irviewer: skipped broken.png: " in err
    assert err.count("broken.png") == 1
    assert out.startswith("indexed 3 artworks, 3 photos, 1 photo skipped in ")
    assert out.splitlines()[1].startswith("answers: an artwork is named when at least ")
    assert f"search it: {program_command()} search {tmp_path / 'coll'} PHOTO" in out


def test_a_collection_opens_everywhere_without_a_descriptor_file(tmp_path, capsys):
    folder_of_subfolders(tmp_path / "photos", {"mona": 3, "wave": 2, "swing": 1})
    (tmp_path / "titles.csv").write_text("id,title,artist,year\nmona,Mona Lisa,Leonardo,1503\n")
    assert index(str(tmp_path / "photos"), "--out", str(tmp_path / "coll"), "--titles",
                 str(tmp_path / "titles.csv")) == 0
    err = capsys.readouterr().err
    assert "note: artwork swing has no row in titles.csv: it is shown by its id" in err
    coll = str(tmp_path / "coll")
    assert main(["eval", coll, "--json", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "protocol instance" in out
    summary = json.loads((tmp_path / "r.json").read_text())["evaluations"][0]["summary"]
    assert summary["n_evaluated"] == 5 and summary["n_skipped"] == 1
    assert summary["mP@1"] == 1.0  # each view's nearest other photo is a view of its artwork
    assert main(["search", coll, str(tmp_path / "photos" / "mona" / "2.jpg"), "--top", "2",
                 "--json", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    first = next(line for line in out.splitlines() if line.strip().startswith("1 "))
    assert first.endswith("  mona  Mona Lisa — Leonardo  [year 1503]  (mona:2)")
    match = json.loads((tmp_path / "s.json").read_text())["results"][0]["matches"][0]
    assert match["details"] == {"year": "1503"}


def test_bad_input_table_exit_2_and_one_line(tmp_path, capsys):
    """Every bad input of a curator: exit code 2 and one line naming what to do."""
    flat_folder(tmp_path / "one", 2)
    (tmp_path / "empty").mkdir()
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "a.jpg").write_bytes(b"not a photo")
    (tmp_path / "bad.csv").write_text("id,title\nart00,a,b\n")
    folder_of_subfolders(tmp_path / "moved", {"a": 2})
    assert index(str(tmp_path / "one"), "--out", str(tmp_path / "single")) == 0
    assert index(str(tmp_path / "moved"), "--out", str(tmp_path / "mcoll")) == 0
    shutil.move(tmp_path / "moved", tmp_path / "gone")
    capsys.readouterr()
    cases = [
        (["index", str(tmp_path / "nope"), "--out", str(tmp_path / "c1")],
         "nope: no such folder; give the folder that holds the photos"),
        (["index", str(tmp_path / "empty"), "--out", str(tmp_path / "c2")],
         "holds no photo irviewer reads"),
        (["index", str(tmp_path / "junk"), "--out", str(tmp_path / "c3")],
         "none of its 1 photo could be indexed (e.g. a.jpg: is not a picture irviewer can "
         "read; save it as a JPEG or PNG); nothing was written"),
        (["index", str(tmp_path / "one"), "--out", str(tmp_path / "c4"), "--titles",
          str(tmp_path / "bad.csv")], "bad.csv, line 2: 3 fields where the first line names 2"),
        (["index", str(tmp_path / "one"), "--out", str(tmp_path / "c5"), "--extractor",
          "no-such-net"], "no extractor is called 'no-such-net' (installed: "),
        (["search", str(tmp_path / "mcoll"), str(tmp_path / "one" / "art00.jpg")],
         "mcoll: its photo folder is missing: it was ../moved beside the collection"),
    ]
    for argv, message in cases:
        assert main([*argv, *(["--workers", "1"] if argv[0] == "index" else [])]) == 2, argv
        err = capsys.readouterr().err
        errors = [line for line in err.splitlines() if line.startswith("irviewer: error: ")]
        assert len(errors) == 1 and message in errors[0], (message, err)
        assert "Traceback" not in err
        if "junk" not in argv[1]:  # found before anything is described: the only line
            assert err.count("\n") == 1, err


def test_eval_of_a_one_photo_per_artwork_collection_says_why_in_one_line_and_exits_0(
        tmp_path, capsys):
    """A curator's collection with one photo per artwork is not an error: nothing to score,
    said in one line on stdout, exit 0, no JSON written."""
    flat_folder(tmp_path / "one", 2)
    assert index(str(tmp_path / "one"), "--out", str(tmp_path / "single")) == 0
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "single"), "--json", str(tmp_path / "r.json")]) == 0
    out, err = capsys.readouterr()
    assert out == ("single: every artwork has one photo, so no photo has another view of its "
                   "artwork to be found and there is nothing to score; to score the "
                   "collection, give some artworks two or more photos (one subfolder per "
                   "artwork) and index it again\n")
    assert "error" not in err and not (tmp_path / "r.json").exists()


def test_the_printed_commands_work_when_pasted_with_a_space_in_the_name(tmp_path):
    """``--out "our collection"``: the open / present / search commands index prints start
    this very program (here ``python -m irviewer``: no ``irviewer`` on the PATH is
    assumed) and are quoted for the shell; the search one, pasted into a shell as printed,
    answers."""
    flat_folder(tmp_path / "photos", 3)
    out = tmp_path / "our collection"
    done = subprocess.run([sys.executable, "-m", "irviewer", "index", str(tmp_path / "photos"),
                           "--out", str(out), "--workers", "1"], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    line = done.stdout.splitlines()[-1]
    commands = dict(part.split(": ", 1) for part in line.split("   "))
    assert set(commands) == {"open it", "present it", "search it"}
    program = [sys.executable, "-m", "irviewer"]
    assert shlex.split(commands["open it"]) == [*program, str(out)]
    assert shlex.split(commands["present it"]) == [*program, str(out), "--present"]
    photo = shlex.quote(str(tmp_path / "photos" / "art01.jpg"))
    pasted = commands["search it"].replace("PHOTO", photo)
    searched = subprocess.run(["bash", "-c", pasted], capture_output=True, text=True,
                              timeout=300, cwd=ROOT)
    assert searched.returncode == 0, searched.stderr
    assert "art01" in searched.stdout


def test_search_and_eval_without_a_descriptor_file_on_a_plain_dataset_say_how(tmp_path, capsys):
    (tmp_path / "set.csv").write_text("image,instance,role\na.jpg,a,both\n")
    with pytest.raises(SystemExit):
        main(["eval", str(tmp_path / "set.csv")])
    assert "a collection made by irviewer index needs neither" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["search", str(tmp_path / "set.csv"), str(tmp_path / "a.jpg")])
    assert "(a collection made by irviewer index needs none)" in capsys.readouterr().err


def test_the_viewer_renders_a_collection_without_a_descriptor_file(tmp_path):
    flat_folder(tmp_path / "photos", 3)
    assert index(str(tmp_path / "photos"), "--out", str(tmp_path / "coll")) == 0
    for extra in ([], ["--present"]):
        shot = tmp_path / f"shot{len(extra)}.png"
        done = subprocess.run([sys.executable, "-m", "irviewer", str(tmp_path / "coll"),
                               "--screenshot", str(shot), *extra], capture_output=True,
                              text=True, timeout=180, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        with Image.open(shot) as im:
            assert im.size[0] >= 800


def test_clock_and_bar_line():
    assert clock(59.4) == "0:59" and clock(61) == "1:01" and clock(3725) == "1:02:05"
    assert bar_line("describing", 0, 0, 1.0) == "describing"
    assert bar_line("describing", 5, 20, 2.0) == (
        "describing  5/20 [######------------------]  2.5/s  0:06 left")
    assert progress_words("describing", 5, 20, 2.0) == "describing  5/20  2.5/s  0:06 left"
    assert progress_words("describing", 0, 20, 0.0) == "describing  0/20"


def test_progress_into_a_log_writes_a_line_per_tenth_and_messages_between():
    stream = io.StringIO()
    bar = ProgressBar(stream)
    for done in range(0, 101):
        bar.update("describing", done, 100)
        if done == 50:
            bar.message("irviewer: skipped x.jpg: the file is empty")
    bar.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 12  # 0 %, 10 %, ..., 100 %, and the message
    assert lines[6] == "irviewer: skipped x.jpg: the file is empty"
    assert lines[-1].startswith("describing  100/100 [########################]")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_redraws_one_line():
    stream = Terminal()
    bar = ProgressBar(stream)
    bar.update("describing", 0, 4)
    bar.message("irviewer: skipped x.jpg: the file is empty")
    bar.update("describing", 4, 4)
    bar.close()
    text = stream.getvalue()
    assert text.count("\n") == 2 and "\r" in text
    assert text.rstrip("\n").endswith("describing  4/4 [########################]" +
                                      text.rstrip("\n").rsplit("]", 1)[1])


def test_threads_alone_the_old_switch_is_refused_naming_describe_in(tmp_path, capsys):
    """``--threads`` without a number once meant "describe in threads": an old script is
    refused with one line, never run with another meaning."""
    flat_folder(tmp_path / "one", 2)
    for argv in (["index", str(tmp_path / "one"), "--out", str(tmp_path / "c"), "--threads"],
                 ["index", "--threads", "--out", str(tmp_path / "c"), str(tmp_path / "one")]):
        with pytest.raises(SystemExit) as stopped:
            main(argv)
        assert stopped.value.code == 2
        err = capsys.readouterr().err
        assert "use --describe-in threads" in err and err.count("\n") == 1, err
    assert not (tmp_path / "c").exists()


def test_workers_more_than_the_threads_allowed_are_refused(tmp_path, capsys, monkeypatch):
    flat_folder(tmp_path / "one", 2)
    out = str(tmp_path / "c")
    with pytest.raises(SystemExit):
        main(["index", str(tmp_path / "one"), "--out", out, "--threads", "2", "--workers", "3"])
    assert ("--workers 3 describes 3 photos at once, more than the 2 threads --threads allows"
            in capsys.readouterr().err)
    monkeypatch.setenv("IRVIEWER_THREADS", "1")
    with pytest.raises(SystemExit):
        main(["index", str(tmp_path / "one"), "--out", out, "--workers", "2"])
    assert "more than the 1 thread IRVIEWER_THREADS allows" in capsys.readouterr().err


def test_index_describes_in_threads_one_worker_per_thread_allowed(tmp_path, capsys,
                                                                  monkeypatch):
    seen = []
    real = indexing.Pool

    def pool(mode, workers):
        seen.append((mode, workers))
        return real(mode, workers)

    monkeypatch.setattr(indexing, "Pool", pool)
    flat_folder(tmp_path / "one", 3)
    assert main(["index", str(tmp_path / "one"), "--out", str(tmp_path / "c"),
                 "--describe-in", "threads", "--threads", "2"]) == 0
    assert seen and set(seen) == {("threads", 2)}
