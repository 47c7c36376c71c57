"""Every command answers bad input with one sentence that names only its own options: a
table of bad inputs (tests/cli/bad_inputs.py) run through each headless command. The
window's command line runs the same table in tests/gui/test_messages.py."""

from __future__ import annotations

import pytest

from irviewer.cli import main

from .bad_inputs import HEADLESS, cases, check_answer, make_data


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_data(tmp_path_factory.mktemp("bad"))


@pytest.mark.parametrize(("command", "what", "argv"), cases(HEADLESS),
                         ids=lambda v: v if isinstance(v, str) else None)
def test_bad_input_is_one_sentence_naming_the_commands_own_options(data, capsys, command,
                                                                   what, argv):
    code = main([command, *(w.format(r=data) for w in argv)])
    captured = capsys.readouterr()
    check_answer(command, code, captured.out, captured.err)


def test_every_option_key_a_message_names_is_an_option_of_some_command():
    """A placeholder's key is how a command tells its own options from others' (a clause
    of an option it does not take is left out): a key no command has is a typo."""
    import re
    from pathlib import Path

    from .bad_inputs import VIEWER, parser_of

    root = Path(__file__).resolve().parents[2] / "irviewer"
    source = "\n".join(p.read_text(encoding="utf-8") for p in root.rglob("*.py"))
    keys = set(re.findall(r"\b(?:option|when)\(\s*['\"]([a-z_]+)['\"]", source))
    keys |= set(re.findall(r"\beither\((?:[^()]|\([^()]*\))*?,\s*(?:key=)?['\"]([a-z_]+)['\"]"
                           r"\s*\)", source))
    dests = {a.dest for c in [*HEADLESS, VIEWER] for a in parser_of(c)._actions}
    assert {"row_names", "descriptors", "depth", "extractor"} <= keys
    assert keys <= dests, keys - dests
