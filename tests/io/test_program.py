"""The command that starts this very program, as ``irviewer index`` prints it: the desktop
app's own executable (it has no ``irviewer`` on the PATH), the ``irviewer`` script when the
PATH finds the one that runs, its full path when it does not, ``python -m irviewer``
otherwise (``tests/test_cli_index.py`` pastes a printed command into a shell)."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from irviewer.cli.index import next_commands
from irviewer.io import program
from irviewer.io.program import program_command


def test_the_desktop_app_prints_its_own_path(monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", "/opt/Museum Apps/irviewer/irviewer")
    assert program_command() == "'/opt/Museum Apps/irviewer/irviewer'"
    assert next_commands(Path("our collection")) == (
        "open it: '/opt/Museum Apps/irviewer/irviewer' 'our collection'   present it: "
        "'/opt/Museum Apps/irviewer/irviewer' 'our collection' --present   search it: "
        "'/opt/Museum Apps/irviewer/irviewer' search 'our collection' PHOTO")


def test_the_script_is_named_when_the_path_finds_it_and_located_when_not(
        monkeypatch, tmp_path):
    script = tmp_path / "bin" / "irviewer"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(script), "index"])
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    assert program_command() == "irviewer"
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))
    assert program_command() == shlex.quote(str(script))


def test_python_dash_m_is_printed_as_it_was_started(monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(Path(program.__file__).parents[1] / "__main__.py")])
    assert program_command() == f"{shlex.quote(sys.executable)} -m irviewer"

