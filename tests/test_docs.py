"""What the user reads is true: the test command the README shows is the one CI runs, and
every command line the README and docs/ show parses with irviewer's own parsers."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

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
    for checker in ("ruff check irviewer tests", "lint-imports", "mypy", "pytest", "vulture"):
        assert checker in command, checker


# -- the command lines the README and docs/ show ------------------------------------------

def documented_command_lines() -> list[tuple[str, str]]:
    """Return (file, command line) for every ``irviewer ...`` line in a code block or an
    indented example of README.md and docs/*.md, its trailing ``# comment`` cut off."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        in_block = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("```"):
                in_block = not in_block
                continue
            text = line.strip().removeprefix("$ ")
            if (in_block or line.startswith("    ")) and text.startswith("irviewer "):
                found.append((path.name, re.sub(r"\s+#\s.*$", "", text)))
    return found


def parse_command_line(argv: list[str]) -> argparse.Namespace:
    """Parse ``argv`` (without ``irviewer``) as irviewer.cli.main does, without running it;
    SystemExit on an error."""
    from irviewer.cli import COMMANDS, build_parser
    from irviewer.cli.viewer import build_viewer_parser

    if not argv or argv[0] not in COMMANDS:
        return build_viewer_parser().parse_args(argv)
    parser = build_parser(only=argv[0])
    args, extra = parser.parse_known_args(argv)
    if extra and getattr(args._module, "INTERMIXED", False):
        return args._parser.parse_intermixed_args(argv[1:])
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def command_parser(argv: list[str]) -> argparse.ArgumentParser:
    from irviewer.cli import COMMANDS, build_parser
    from irviewer.cli.viewer import build_viewer_parser

    if argv and argv[0] in COMMANDS:
        return build_parser(only=argv[0])._subparsers._group_actions[0].choices[argv[0]]
    return build_viewer_parser()


def is_synopsis(line: str) -> bool:
    """Return True for a usage synopsis (``[-d B.npz ...]``, ``(A | B)``), not an example."""
    return any(c in line for c in "[]|(")


COMMAND_LINES = documented_command_lines()


def test_the_docs_show_command_lines_of_every_command():
    from irviewer.cli import COMMANDS

    shown = {shlex.split(line)[1] for _, line in COMMAND_LINES}
    assert set(COMMANDS) <= shown, set(COMMANDS) - shown
    assert any(not is_synopsis(line) and shlex.split(line)[1].startswith("-")
               for _, line in COMMAND_LINES)  # the viewer's own


@pytest.mark.parametrize(("where", "line"), [c for c in COMMAND_LINES if not is_synopsis(c[1])])
def test_every_example_parses_with_the_real_parser(where, line, capsys):
    try:
        parse_command_line(shlex.split(line)[1:])
    except SystemExit:
        pytest.fail(f"{where}: `{line}` does not parse: {capsys.readouterr().err.strip()}")


@pytest.mark.parametrize(("where", "line"), [c for c in COMMAND_LINES if is_synopsis(c[1])])
def test_every_option_of_a_synopsis_exists(where, line):
    argv = shlex.split(line.replace("[", " ").replace("]", " ").replace("(", " ")
                       .replace(")", " ").replace("|", " "))[1:]
    known = command_parser(argv)._option_string_actions
    unknown = [t for t in argv if t.startswith("-") and t not in known]
    assert unknown == [], f"{where}: `{line}` names unknown options"


# -- the architecture page draws the window's real features -------------------------------

def gui_features() -> set[str]:
    """Return the window's feature subpackages (every subpackage of gui/ but widgets)."""
    gui = ROOT / "irviewer" / "gui"
    return {p.parent.name for p in gui.glob("*/__init__.py")} - {"widgets"}


def test_the_architecture_page_and_the_contracts_list_every_feature_of_the_window():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: tomli (import-linter's own dependency there)
        import tomli as tomllib

    contracts = {c["id"]: c for c in tomllib.loads(
        (ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"][
            "contracts"]}
    layer = next(layer for layer in contracts["gui-features"]["layers"] if "|" in layer
                 and "results" in layer)
    assert {name.strip() for name in layer.split("|")} == gui_features()
    assert {m.removeprefix("irviewer.gui.") for m in contracts["gui-faces"][
        "allowed_importers"]} == gui_features()
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert set(re.findall(r"\| `gui/([a-z_]+)/` \|", page)) == gui_features()
    assert "docs/architecture.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_each_feature_of_the_window_has_one_face():
    import importlib

    for feature in sorted(gui_features()):
        package = importlib.import_module(f"irviewer.gui.{feature}")
        assert len(package.__all__) == 1, feature
        face = getattr(package, package.__all__[0])
        assert face.__module__.startswith(f"irviewer.gui.{feature}."), feature
