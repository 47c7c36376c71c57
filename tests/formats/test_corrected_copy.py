"""``apply-corrections`` as a minimal, recorded diff: a published file with no corrected pair
is copied byte for byte, a corrected one differs by exactly its corrected lines (order,
repeated lines, line endings kept), for every family it writes; a provenance record beside
the copy names every correction; an output path holding other files is refused untouched;
without ``--corrections`` the dataset's own corrections file is applied, with a note."""

from __future__ import annotations

import difflib
import json
import pickle
import shutil
from pathlib import Path

import pytest

from irviewer.cli import main
from irviewer.core.corrections import Correction
from irviewer.formats.corrections_file import corrections_place, write_corrections
from irviewer.formats.provenance import record_path, sha256_of
from irviewer.formats.safe_pickle import load_plain_pickle
from tests.conftest import shared_sample
from tests.corrections_cases import make_case


def changed_lines(a: bytes, b: bytes) -> tuple[list[bytes], list[bytes]]:
    """Return the lines only in ``a`` and only in ``b`` (with their line endings)."""
    old, new = a.splitlines(keepends=True), b.splitlines(keepends=True)
    gone, came = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new,
                                                       autojunk=False).get_opcodes():
        if tag != "equal":
            gone += old[i1:i2]
            came += new[j1:j2]
    return gone, came


def apply(dataset: Path, corrections: list[Correction], out: Path, tmp_path: Path,
          *args: str) -> int:
    path = tmp_path / "fix.corrections.csv"
    write_corrections(path, corrections)
    return main(["apply-corrections", str(dataset), "--corrections", str(path), "--out",
                 str(out), *args])


def test_oxford_copy_differs_by_exactly_the_corrected_lines(tmp_path):
    case = make_case("oxford", tmp_path / "ox")
    gt = case.dataset
    # The publisher's quirks a label fix must keep: CRLF endings, a repeated line, no final
    # newline, a README in the folder.
    (gt / "souls_1_good.txt").write_bytes(b"souls_000001\r\nbridge_000002\r\nsouls_000004\r\n"
                                          b"souls_000004\r\nsouls_000007")
    (gt / "README").write_bytes(b"published by someone\n")
    out = tmp_path / "fixed_gt"
    fix = [Correction("souls_1", "bridge_000002", "negative", "alice", "2026-11-26T10:00:00Z",
                      "a bridge, not the church"),
           Correction("souls_1", "souls_000008", "good", "bob", "2026-11-26T10:05:00Z", "")]
    assert apply(gt, fix, out, tmp_path, *case.args) == 0
    for src in gt.iterdir():
        if src.name != "souls_1_good.txt":
            assert (out / src.name).read_bytes() == src.read_bytes(), src.name
    gone, came = changed_lines((gt / "souls_1_good.txt").read_bytes(),
                               (out / "souls_1_good.txt").read_bytes())
    assert gone == [b"bridge_000002\r\n", b"souls_000007"]  # the last line gains its ending
    assert came == [b"souls_000007\r\n", b"souls_000008"]
    assert (out / "souls_1_good.txt").read_bytes() == (
        b"souls_000001\r\nsouls_000004\r\nsouls_000004\r\nsouls_000007\r\nsouls_000008")
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in gt.iterdir())


def test_the_provenance_record_names_every_correction_and_file(tmp_path, capsys):
    case = make_case("oxford", tmp_path / "ox")
    out = tmp_path / "fixed_gt"
    fix = [Correction("souls_1", "bridge_000003", "good", "alice", "2026-11-26T10:00:00Z",
                      "same tower"),
           Correction("bridge_2", "bridge_000005", "negative", "bob", "2026-11-26T11:00:00Z",
                      "blurred")]
    assert apply(case.dataset, fix, out, tmp_path, *case.args) == 0
    assert "its provenance is in fixed_gt.provenance.json" in capsys.readouterr().out
    record = json.loads(record_path(out).read_text(encoding="utf-8"))
    assert [(c["query"], c["item"], c["label"], c["author"], c["time"], c["note"])
            for c in record["corrections"]] == [
        (c.query, c.item, c.label, c.author, c.time, c.note) for c in fix]
    corrections = tmp_path / "fix.corrections.csv"
    assert record["corrections_file"] == {"path": str(corrections.absolute()),
                                          "sha256": sha256_of(corrections.read_bytes())}
    assert record["irviewer_version"]
    files = {f["name"]: f for f in record["files"]}
    assert set(files) == {p.name for p in case.dataset.iterdir()}
    for name, f in files.items():
        assert f["published_sha256"] == sha256_of((case.dataset / name).read_bytes())
        assert f["sha256"] == sha256_of((out / name).read_bytes())
    changed = {n for n, f in files.items() if not f["unchanged"]}
    assert changed <= {"souls_1_good.txt", "souls_1_ok.txt", "souls_1_junk.txt",
                       "bridge_2_good.txt", "bridge_2_ok.txt", "bridge_2_junk.txt"}
    assert changed


def test_an_output_holding_other_files_is_refused_untouched(tmp_path, capsys):
    case = make_case("oxford", tmp_path / "ox")
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    fix = [Correction("souls_1", "bridge_000003", "good")]
    assert apply(case.dataset, fix, out, tmp_path, *case.args) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "not write" in err and "thesis.tex" in err
    assert [p.name for p in out.iterdir()] == ["thesis.tex"]
    assert (out / "thesis.tex").read_text() == "years of work"
    assert not record_path(out).exists()
    # A file that is not a previous copy is refused too.
    other = tmp_path / "notes.pkl"
    other.write_bytes(b"mine")
    rev = make_case("revisited", tmp_path / "rev")
    assert apply(rev.dataset, [Correction("qim0", "im010", "hard")], other, tmp_path) == 2
    assert other.read_bytes() == b"mine"


def test_a_previous_copy_is_written_over(tmp_path):
    case = make_case("oxford", tmp_path / "ox")
    out = tmp_path / "fixed_gt"
    assert apply(case.dataset, [Correction("souls_1", "bridge_000003", "good")], out,
                 tmp_path, *case.args) == 0
    assert apply(case.dataset, [Correction("souls_1", "bridge_000004", "good")], out,
                 tmp_path, *case.args) == 0
    good = (out / "souls_1_good.txt").read_text().split()
    assert "bridge_000004" in good and "bridge_000003" not in good


def test_manifest_copy_changes_only_the_relabelled_rows(tmp_path):
    case = make_case("manifest", tmp_path / "m")
    text = case.dataset.read_bytes().replace(b"\n", b"\r\n")
    text = text.replace(b"img/c0.jpg,c,gallery,c 0", b'"img/c0.jpg",c,gallery,"c 0"')
    case.dataset.write_bytes(text)
    out = tmp_path / "fixed.csv"
    assert apply(case.dataset, [Correction("", "img/a1", "b")], out, tmp_path) == 0
    gone, came = changed_lines(text, out.read_bytes())
    assert gone == [b"img/a1.jpg,a,gallery,a 1\r\n"]
    assert came == [b"img/a1.jpg,b,gallery,a 1\r\n"]


def test_revisited_copy_keeps_the_pickle_structure(tmp_path):
    case = make_case("revisited", tmp_path / "r")
    published = load_plain_pickle(case.dataset)
    published["gnd"][0]["hard"] = [*published["gnd"][0]["hard"][::-1], 23]  # unsorted
    published["extra"] = {"kept": True}
    case.dataset.write_bytes(pickle.dumps(published, protocol=2))
    out = tmp_path / "fixed.pkl"
    hard = published["gnd"][0]["hard"]
    moved = hard[1]
    assert apply(case.dataset, [Correction("qim0", f"im{moved:03d}", "negative")], out,
                 tmp_path) == 0
    written = load_plain_pickle(out)
    assert out.read_bytes()[:2] == b"\x80\x02"  # the publisher's pickle protocol
    assert written["extra"] == {"kept": True}
    assert written["gnd"][1:] == published["gnd"][1:]
    assert written["gnd"][0]["hard"] == [i for i in hard if i != moved]
    assert {k: v for k, v in written["gnd"][0].items() if k != "hard"} == \
        {k: v for k, v in published["gnd"][0].items() if k != "hard"}


def test_holidays_copy_changes_only_the_regrouped_lines(tmp_path):
    case = make_case("holidays", tmp_path / "h")
    text = case.dataset.read_bytes().replace(b"100101.jpg\n", b"photos/100101.jpg\n")
    case.dataset.write_bytes(text)
    out = tmp_path / "fixed.dat"
    assert apply(case.dataset, [Correction("", "100101", "1002")], out, tmp_path) == 0
    gone, came = changed_lines(text, out.read_bytes())
    assert (gone, came) == ([b"photos/100101.jpg\n"], [b"photos/100101.jpg 1002\n"])
    # Back in the group its name says: the group field goes again.
    again = tmp_path / "again.dat"
    assert apply(out, [Correction("", "100101", "1001")], again, tmp_path) == 0
    assert again.read_bytes() == text


def test_without_corrections_the_datasets_own_file_is_applied(tmp_path, capsys):
    case = make_case("manifest", tmp_path / "m")
    own = corrections_place(case.dataset).path
    write_corrections(own, [Correction("", "img/a1", "b", "alice")])
    out = tmp_path / "fixed.csv"
    assert main(["apply-corrections", str(case.dataset), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"no --corrections given: applied {own}, the dataset's own corrections file" in err
    assert b"img/a1.jpg,b,gallery" in out.read_bytes()
    own.unlink()
    assert main(["apply-corrections", str(case.dataset), "--out", str(tmp_path / "x.csv")]) == 2
    assert "has none yet" in capsys.readouterr().err


def test_real_oxford_gt_diff_is_the_corrected_lines_only(tmp_path):
    gt = shared_sample("oxford5k-gt")
    published = tmp_path / "published"
    shutil.copytree(gt, published)
    names = sorted({line.strip() for p in gt.glob("*_good.txt")
                    for line in p.read_text().split()} |
                   {line.split()[0].removeprefix("oxc1_")
                    for p in gt.glob("*_query.txt") for line in p.read_text().splitlines()} |
                   {line.strip() for p in gt.glob("*_ok.txt")
                    for line in p.read_text().split()} |
                   {line.strip() for p in gt.glob("*_junk.txt")
                    for line in p.read_text().split()})
    rows = tmp_path / "rows.txt"
    rows.write_text("\n".join(names) + "\n")
    good = (gt / "hertford_1_good.txt").read_text().split()
    other = (gt / "magdalen_1_good.txt").read_text().split()[0]
    fix = [Correction("hertford_1", good[0], "negative"),
           Correction("hertford_1", other, "good"),
           Correction("all_souls_2", (gt / "all_souls_2_junk.txt").read_text().split()[0],
                      "ok")]
    out = tmp_path / "fixed"
    assert apply(published, fix, out, tmp_path, "--row-names", str(rows)) == 0
    differ = sorted(p.name for p in gt.iterdir()
                    if (out / p.name).read_bytes() != p.read_bytes())
    assert differ == ["all_souls_2_junk.txt", "all_souls_2_ok.txt", "hertford_1_good.txt"]
    total = 0
    for name in differ:
        gone, came = changed_lines((gt / name).read_bytes(), (out / name).read_bytes())
        total += len(gone) + len(came)
    assert total == 4
    assert len(json.loads(record_path(out).read_text())["corrections"]) == 3


@pytest.mark.parametrize("family", ["manifest", "revisited", "holidays", "oxford"])
def test_no_correction_changes_nothing(family, tmp_path):
    case = make_case(family, tmp_path / "c")
    path = tmp_path / "empty.corrections.csv"
    write_corrections(path, [])
    out = tmp_path / f"copy{case.out.suffix}"
    assert main(["apply-corrections", str(case.dataset), "--corrections", str(path), "--out",
                 str(out), *case.args]) == 0
    if case.dataset.is_dir():
        for src in case.dataset.iterdir():
            assert (out / src.name).read_bytes() == src.read_bytes()
    else:
        assert out.read_bytes() == case.dataset.read_bytes()
