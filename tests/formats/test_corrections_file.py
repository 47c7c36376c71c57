"""The corrections file: round trip, optional columns, the default path, a table of bad files
with the exact sentence each gets (and exit 2 from the CLI), and saving that survives SIGKILL
at any moment (the file is always the old or the new version, never a part)."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from irviewer.cli import main
from irviewer.core.corrections import Correction
from irviewer.core.errors import InputError
from irviewer.formats.corrections_file import (
    SUFFIX,
    CorrectionsPlace,
    corrections_place,
    default_corrections_path,
    load_corrections,
    read_corrections,
    write_corrections,
)
from irviewer.formats.registry import read_dataset
from tests.corrections_cases import make_case


@pytest.fixture(scope="module")
def manifest(tmp_path_factory):
    return make_case("manifest", tmp_path_factory.mktemp("manifest"))


@pytest.fixture(scope="module")
def people(tmp_path_factory):
    return make_case("reid", tmp_path_factory.mktemp("reid"))


@pytest.fixture(scope="module")
def oxford(tmp_path_factory):
    return make_case("oxford", tmp_path_factory.mktemp("oxford"))


def test_round_trip_keeps_every_field(tmp_path, manifest):
    ds = read_dataset(manifest.dataset)
    rows = (Correction("img/a_q", "img/b1", "positive", "Ana Ñ", "2026-11-23T14:05:09Z",
                       'same frame, "other" light, second line', "ana", "lab-2", "7c1e"),
            Correction("", "img/c2", "d", "bo", "", ""))
    path = tmp_path / "x.corrections.csv"
    write_corrections(path, rows)
    assert path.read_text(encoding="utf-8").splitlines()[0] == (
        "query,item,label,author,time,note,user,machine,window")
    assert read_corrections(path, ds) == rows
    loaded = load_corrections(path, ds)
    assert len(loaded.log) == 2 and loaded.log.published is ds
    assert loaded.log.dataset.queries[1].group("positive").tolist() == [0, 1, 2, 3, 5]


def test_author_time_and_note_are_optional_and_repeated_rows_count_once(tmp_path, manifest):
    path = tmp_path / "x.csv"
    path.write_text("label,item,query\njunk,img/b1,img/a_q\n\njunk,img/b1,img/a_q\n",
                    encoding="utf-8")
    assert read_corrections(path, read_dataset(manifest.dataset)) == (
        Correction("img/a_q", "img/b1", "junk"),)


def test_default_path_is_beside_the_dataset(tmp_path):
    (tmp_path / "market.v2").mkdir()
    assert default_corrections_path(tmp_path / "demo.csv") == \
        tmp_path / "demo.corrections.csv"
    assert default_corrections_path(tmp_path / "market.v2") == \
        tmp_path / "market.v2.corrections.csv"


# -- where: beside the dataset, or in the user's data folder when its folder is read-only --

@pytest.fixture
def read_only(monkeypatch):
    """Return the set of folders ``can_write_in`` says no for (root writes in any folder,
    so a chmod alone cannot test this where tests run as root)."""
    from irviewer.io import user_data

    folders: set[Path] = set()
    real = user_data.can_write_in
    monkeypatch.setattr(user_data, "can_write_in",
                        lambda folder: Path(folder) not in folders and real(folder))
    return folders


def test_corrections_are_beside_a_dataset_whose_folder_can_be_written(tmp_path):
    place = corrections_place(tmp_path / "demo.csv")
    assert place == CorrectionsPlace(tmp_path / "demo.corrections.csv", None, False,
                                     tmp_path / "demo.corrections.csv")
    assert place.sentence() == ""
    write_corrections(place.path, [Correction("q", "i", "negative")])
    assert corrections_place(tmp_path / "demo.csv").existing == place.path


def test_a_read_only_dataset_keeps_its_corrections_in_the_user_data_folder(
        tmp_path, read_only, user_data):
    dataset = tmp_path / "shared" / "demo.csv"
    dataset.parent.mkdir()
    read_only.add(dataset.parent)
    place = corrections_place(dataset)
    assert place.kept and place.existing is None
    assert place.path.parent == user_data / "corrections"
    assert place.path.name.startswith("demo-") and place.path.name.endswith(SUFFIX)
    assert place.sentence() == (
        f"the label corrections of this dataset are kept in {place.path}, as its folder "
        f"{dataset.parent} cannot be written")
    write_corrections(place.path, [Correction("q", "i", "negative")])  # makes its folder
    again = corrections_place(dataset)  # the next opening finds them
    assert again == CorrectionsPlace(place.path, place.path, True, place.beside)
    assert not place.beside.exists()
    # the folder writable again: the kept file still comes first (it has every correction)
    read_only.clear()
    assert corrections_place(dataset).existing == place.path
    assert "(made while its folder" in corrections_place(dataset).sentence()


def test_corrections_beside_a_folder_now_read_only_are_read_and_saved_on_in_the_user_folder(
        tmp_path, read_only, user_data):
    dataset = tmp_path / "demo.csv"
    beside = tmp_path / "demo.corrections.csv"
    write_corrections(beside, [Correction("q", "i", "negative")])
    read_only.add(tmp_path)
    place = corrections_place(dataset)
    assert (place.existing, place.kept) == (beside, True)
    assert place.path.parent == user_data / "corrections"


@pytest.mark.skipif(os.name == "nt" or os.geteuid() == 0,
                    reason="POSIX permissions (root may write in any folder)")
def test_a_folder_without_write_permission_is_read_only(tmp_path, user_data):
    folder = tmp_path / "theirs"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        place = corrections_place(folder / "demo.csv")
        assert place.kept and place.path.parent == user_data / "corrections"
    finally:
        folder.chmod(0o755)


def test_eval_and_audit_say_where_the_windows_corrections_are_and_do_not_apply_them(
        tmp_path, manifest, read_only, capsys):
    # the command line applies only the file it is given; it names the one the window
    # keeps (here in the user's data folder) and the option that applies it
    import shutil

    shared = tmp_path / "shared"
    shutil.copytree(manifest.dataset.parent, shared)
    dataset = shared / manifest.dataset.name
    descriptors = shared / manifest.descriptors.name
    read_only.add(shared)
    kept = corrections_place(dataset).path
    write_corrections(kept, [Correction("img/a_q", "img/b1", "junk")])
    assert main(["eval", str(dataset), "-d", str(descriptors)]) == 0
    err = capsys.readouterr().err
    assert err == (f"note: the label corrections made in the window for this dataset are in "
                   f"{kept} (in your data folder: {shared} cannot be written); they are not "
                   f"applied (--corrections {kept} scores with them)\n")
    assert main(["eval", str(dataset), "-d", str(descriptors), "--corrections",
                 str(kept)]) == 0
    assert capsys.readouterr().err == ""
    assert main(["audit", str(dataset), "-d", str(descriptors)]) == 0
    assert capsys.readouterr().err.endswith(f"(--corrections {kept} audits with them)\n")


HEADER = "query,item,label,author,time,note\n"
BAD = [
    ("missing column", "query,item,author\nimg/a_q,img/b1,me\n",
     "bad.csv, line 1: the header lacks column(s) label; it must have query,item,label (and "
     "may have author,time,note,user,machine,window)"),
    ("empty file", "", "bad.csv is empty: a corrections file starts with the header "
                       "query,item,label,author,time,note"),
    ("unknown query", HEADER + "nosuch,img/b1,positive,,,\n",
     "bad.csv, line 2: set.csv has no query called 'nosuch'"),
    ("unknown item", HEADER + "img/a_q,img/zz,positive,,,\n",
     "bad.csv, line 2: set.csv has no gallery image called 'img/zz'"),
    ("unknown relabel image", HEADER + ",img/zz,a,,,\n",
     "bad.csv, line 2: no image of set.csv is called 'img/zz'"),
    ("label not a group", HEADER + "img/a_q,img/b1,good,,,\n",
     "bad.csv, line 2: 'good' is not a group of set.csv; use one of positive, negative, junk"),
    ("two rows contradict", HEADER + "img/a_q,img/b1,positive,,,\n,img/c1,a,,,\n"
                                     "img/a_q,img/b1,junk,,,\n",
     "bad.csv, line 4: contradicts line 2 (same query and item: 'positive' there, 'junk' "
     "here); keep one of the two rows"),
    ("two relabels contradict", HEADER + ",img/c1,a,,,\n,img/c1,b,,,\n",
     "bad.csv, line 3: contradicts line 2 (same image: 'a' there, 'b' here); keep one of the "
     "two rows"),
    ("short row", HEADER + "img/a_q,img/b1\n",
     "bad.csv, line 2: 2 fields where the header has 6"),
    ("empty label", HEADER + "img/a_q,img/b1,,,,\n", "bad.csv, line 2: the label field is empty"),
    ("binary garbage", b"query,item,label\n\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
     "bad.csv, line 4: binary data (a NUL byte); a corrections file is UTF-8 text with the "
     "header query,item,label,author,time,note,user,machine,window"),
    ("not UTF-8", b"query,item,label\nimg/a_q,img/b1,positive\n,img/c1,caf\xe9\n",
     "bad.csv, line 3: not UTF-8 text (byte 52); save the file as UTF-8"),
]


@pytest.mark.parametrize(("case", "content", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_files_get_one_sentence_naming_file_and_line(tmp_path, manifest, case, content,
                                                         message):
    path = tmp_path / "bad.csv"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_corrections(path, read_dataset(manifest.dataset))
    assert str(e.value) == message


def test_rows_the_family_refuses_name_their_line(tmp_path, people, oxford):
    path = tmp_path / "bad.csv"
    path.write_text(HEADER + ",0001_c1s1_000100_00,2,,,\n,0001_c1s1_000001_00,0,,,\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(
            "bad.csv, line 3: 0001_c1s1_000001_00 is a query and id 0 marks distractor images, "
            "which are never queries")):
        load_corrections(path, read_dataset(people.dataset))
    path.write_text(HEADER + ",bridge_000001,x,,,\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(
            "bad.csv, line 2: the query is empty (an image relabel), but gt_files has no image "
            "labels; name the query whose ground truth the row corrects")):
        load_corrections(path, read_dataset(oxford.dataset, options=oxford.options))


def test_the_cli_exits_2_with_one_line_for_a_bad_file(tmp_path, manifest, capsys):
    path = tmp_path / "bad.csv"
    path.write_text(HEADER + "img/a_q,img/b1,good,,,\n", encoding="utf-8")
    for args in (["eval", str(manifest.dataset), "-d", str(manifest.descriptors)],
                 ["apply-corrections", str(manifest.dataset), "--out",
                  str(tmp_path / "o.csv")]):
        assert main([*args, "--corrections", str(path)]) == 2
        err = capsys.readouterr().err
        assert err == ("irviewer: error: bad.csv, line 2: 'good' is not a group of set.csv; "
                       "use one of positive, negative, junk\n")
    assert not (tmp_path / "o.csv").exists()


def test_apply_corrections_refuses_to_overwrite_the_published_dataset(manifest, tmp_path,
                                                                      capsys):
    path = tmp_path / "ok.csv"
    path.write_text(HEADER, encoding="utf-8")
    before = manifest.dataset.read_bytes()
    assert main(["apply-corrections", str(manifest.dataset), "--corrections", str(path),
                 "--out", str(manifest.dataset)]) == 2
    assert "is the published dataset itself" in capsys.readouterr().err
    assert manifest.dataset.read_bytes() == before


#: A fork server: imports once, then per line on stdin forks a child that saves one of two
#: large versions of a corrections file in an endless loop (the n-th child starts with
#: version n mod 2), prints the child's pid, and
#: reaps it once the test has killed it.
SAVER = textwrap.dedent("""
    import os
    import sys
    from pathlib import Path
    from irviewer.core.corrections import Correction
    from irviewer.formats.corrections_file import write_corrections

    target = Path(sys.argv[1])
    versions = [[Correction(f"q{i}", f"image_{i:06d}", label, "author", "2026-11-23T14:00:00Z",
                            "a note, with a comma") for i in range(20000)]
                for label in ("positive", "junk")]
    print("ready", flush=True)
    for n, _ in enumerate(sys.stdin):
        pid = os.fork()
        if pid == 0:  # each child starts with the other version than the last child
            while True:
                write_corrections(target, versions[n % 2])
                n += 1
        print(pid, flush=True)
        os.waitpid(pid, 0)
        print("reaped", flush=True)
""")


def test_a_save_killed_at_any_moment_leaves_the_old_or_the_new_file(tmp_path):
    target = tmp_path / "big.corrections.csv"
    versions = {}
    for label in ("positive", "junk"):
        write_corrections(target, [Correction(f"q{i}", f"image_{i:06d}", label, "author",
                                              "2026-11-23T14:00:00Z", "a note, with a comma")
                                   for i in range(20000)])
        versions[label] = target.read_bytes()
    assert len(versions["junk"]) > 1_000_000
    script = tmp_path / "saver.py"
    script.write_text(SAVER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    server = subprocess.Popen([sys.executable, str(script), str(target)], env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    rng = random.Random(0)
    seen = set()
    try:
        assert server.stdout.readline() == "ready\n"
        for n in range(50):
            before = target.stat().st_mtime_ns
            server.stdin.write("go\n")
            server.stdin.flush()
            child = int(server.stdout.readline())
            if n % 5 == 0:  # on a loaded machine a save can outlast the random delay:
                deadline = time.monotonic() + 30  # let every fifth child finish one
                while target.stat().st_mtime_ns == before and time.monotonic() < deadline:
                    time.sleep(0.005)
            time.sleep(rng.uniform(0.0, 0.15))
            os.kill(child, signal.SIGKILL)
            assert server.stdout.readline() == "reaped\n"
            content = target.read_bytes()
            assert content in (versions["positive"], versions["junk"]), "a partial file"
            seen.add(content)
    finally:
        server.kill()
        server.wait()
        server.stdin.close()
        server.stdout.close()
    assert len(seen) == 2  # the kills landed in the middle of a run of saves


def test_rows_that_set_what_is_already_there_are_not_applied_and_said(tmp_path, manifest,
                                                                      capsys):
    """One rule for the command line and the window: a row that sets what the ground truth
    already has at its turn is not applied, not counted, and named."""
    path = tmp_path / "fix.csv"
    path.write_text(HEADER + "img/a_q,img/b1,negative,,,\n"  # b1 is a negative of a_q
                    ",img/c2,d,,,\n"                         # a real relabel
                    ",img/a1,a,,,\n", encoding="utf-8")      # a1 is labelled a already
    loaded = load_corrections(path, read_dataset(manifest.dataset))
    assert len(loaded.log) == 1 and [line for line, _ in loaded.left_out] == [2, 4]
    note = "fix.csv: lines 2, 4 set what the ground truth already has: not applied"
    assert loaded.notes() == (note,)
    out = tmp_path / "o.csv"
    assert main(["apply-corrections", str(manifest.dataset), "--corrections", str(path),
                 "--out", str(out)]) == 0
    said = capsys.readouterr()
    assert said.out.startswith(f"1 corrections from {path} applied, ")
    assert f"note: {note}\n" in said.err
    report = tmp_path / "r.json"
    assert main(["eval", str(manifest.dataset), "-d", str(manifest.descriptors),
                 "--corrections", str(path), "--json", str(report)]) == 0
    document = json.loads(report.read_text(encoding="utf-8"))
    assert document["corrections"]["n_applied"] == 1
    assert note in document["dataset"]["notes"]
