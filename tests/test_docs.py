"""What the user reads is true: the commands the README shows are the ones that run."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_test_command() -> str:
    """Return the README's test command: the bash block under "run the whole suite"."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"run the whole suite\*\*.*?```bash\n(.*?)\n```", text, re.S)
    assert found is not None, "the README lost its test command"
    return found.group(1).strip()


def test_ci_runs_exactly_the_readme_test_command():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert readme_test_command() in script.splitlines()


def test_the_test_command_runs_every_checker():
    command = readme_test_command()
    for checker in ("ruff check irviewer tests", "lint-imports", "mypy", "pytest"):
        assert checker in command, checker
