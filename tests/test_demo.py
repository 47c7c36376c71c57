"""The built-in museum demo through the CLI: `irviewer eval --demo` runs and ranks the two
descriptor files as the README says (file consistency is in test_demo_build.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from irviewer.cli import main
from irviewer.io.resources import resources_dir

DEMO = resources_dir() / "demo"


def test_eval_demo_smoke(capsys):
    assert main(["eval", "--demo"]) == 0
    out = capsys.readouterr().out
    assert "22 queries, 154 gallery images" in out and "strong.npz" in out
    assert main(["eval", "--demo", "-d", str(DEMO / "weak.npz")]) == 0
    assert "weak.npz" in capsys.readouterr().out


def test_demo_strong_beats_weak(tmp_path):
    import json

    for name in ("strong", "weak"):
        assert main(["eval", "--demo", "-d", str(DEMO / f"{name}.npz"), "--json",
                     str(tmp_path / f"{name}.json")]) == 0
    strong, weak = (json.loads((tmp_path / f"{n}.json").read_text())["evaluations"][0]["summary"]
                    for n in ("strong", "weak"))
    assert strong["mAP"] > weak["mAP"] + 0.1 and strong["mP@1"] > weak["mP@1"]


@pytest.mark.parametrize("args", [["eval"], ["eval", "x.csv"], ["eval", "--demo", "x.csv"]])
def test_eval_argument_errors_exit_2(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2


def test_closed_pipe_is_not_an_error():
    cmd = [sys.executable, "-m", "irviewer", "eval", "--demo"]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 0 and "Traceback" not in err
