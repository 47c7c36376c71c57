"""`irviewer figure`: each selection end to end, the message for each bad input, and a run
without a display in a fresh process (it goes offscreen by itself)."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from PIL import Image

from irviewer.cli import main
from tests.figure_case import make_case
from tests.test_architecture import ROOT


@pytest.fixture
def case(tmp_path, qapp):
    make_case(tmp_path)
    return tmp_path


def figure(case, *extra: str) -> int:
    return main(["figure", str(case / "set.csv"), "-d", str(case / "first.npz"), *extra])


def test_worst_query_as_png(case, capsys):
    out = case / "fig.png"
    assert figure(case, "--worst", "1", "--top", "3", "--out", str(out)) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out} (")
    with Image.open(out) as im:
        assert im.info["dpi"] == pytest.approx((300, 300), abs=0.01)
        # one row of the query and 3 tiles: about 4 tiles of 72 pt wide at 300 dpi
        assert 4 * 300 < im.width < 6 * 300


def test_two_methods_largest_changes_as_svg(case):
    out = case / "fig.svg"
    rc = figure(case, "-d", str(case / "second.npz"), "--largest-changes", "1", "--top", "2",
                "--label", "Ours", "--label", "Baseline", "--scores", "--out", str(out))
    assert rc == 0
    words = " ".join(ET.parse(out).getroot().itertext())
    assert "Query A · Ours · AP 83.3" in words and "Query A · Baseline · AP 58.3" in words
    assert "qb" not in words.split()  # only the query that changed


def test_queries_by_name_as_pdf(case):
    out = case / "fig.pdf"
    assert figure(case, "--queries", "qb", "qa", "--out", str(out)) == 0
    assert out.read_bytes().startswith(b"%PDF-")


@pytest.mark.parametrize(("extra", "message"), [
    (("--worst", "1", "--out", "f.gif"), "f.gif: a figure is written as .pdf, .svg or .png"),
    (("--largest-changes", "1", "--out", "f.png"), "--largest-changes needs two methods"),
    (("--queries", "nope", "--out", "f.png"), "no query called 'nope'"),
    (("--worst", "1", "--top", "0", "--out", "f.png"), "--top must be a whole number"),
    (("--worst", "1", "--protocol", "nope", "--out", "f.png"), "unknown protocol 'nope'"),
    (("--worst", "1", "-d", "x.npz", "-d", "y.npz", "--out", "f.png"),
     "a figure shows one or two methods (-d / --ranking), not 3"),
])
def test_bad_input_is_one_sentence(case, capsys, extra, message):
    assert figure(case, *extra) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"irviewer: error: {message}") and err.count("\n") == 1


def test_runs_without_a_display(case):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = case / "fig.png"
    result = subprocess.run(
        [sys.executable, "-m", "irviewer", "figure", str(case / "set.csv"), "-d",
         str(case / "first.npz"), "--best", "2", "--out", str(out)],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert out.is_file()


def test_plain_beside_reranked(case, capsys):
    out = case / "fig.svg"
    assert figure(case, "--rerank", "aqe:n=1", "--largest-changes", "1", "--out",
                  str(out)) == 0
    text = out.read_text()
    assert "first.npz + aqe:n=1" in text  # the second column names the re-ranked method
    assert figure(case, "--rerank", "aqe", "dba", "--worst", "1", "--out", str(out)) == 2
    assert capsys.readouterr().err.strip() == (
        "irviewer: error: a figure shows one or two methods (-d / --ranking, each -d once "
        "more per --rerank), not 3")
