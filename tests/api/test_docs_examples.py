"""The Python examples of docs/api.md and of the README run, in order, in an IPython shell
as a notebook runs them (a window that view opens stays live and returns at once), each
page in one namespace, in a folder of their own; an example that imports torch runs where
torch is installed."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from tests.gui.conftest import (  # noqa: F401 - the window's test set-up, applied here too
    garbage_collected_in_the_gui_thread,
    isolated_settings,
    no_save_question,
    no_window_leaks,
)

ROOT = Path(__file__).resolve().parents[2]
PAGES = (ROOT / "docs" / "api.md", ROOT / "README.md")


def python_blocks(page: Path) -> list[str]:
    """Return the ```python blocks of ``page``, in order."""
    return re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"),
                      re.S | re.M)


def test_the_pages_have_examples():
    assert len(python_blocks(PAGES[0])) >= 10
    assert python_blocks(PAGES[1])


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_example_runs(page, tmp_path, monkeypatch, qapp):
    from IPython.terminal.interactiveshell import TerminalInteractiveShell

    monkeypatch.chdir(tmp_path)
    shell = TerminalInteractiveShell.instance(simple_prompt=False)
    has_torch = importlib.util.find_spec("torch") is not None
    try:
        for i, block in enumerate(python_blocks(page)):
            if "import torch" in block and not has_torch:
                continue
            done = shell.run_cell(block, store_history=False)
            assert done.success, f"{page.name}, example {i + 1}:\n{block}\n{done.error_in_exec}"
        if page.name == "api.md":
            shots = {"failing-query.png", "first-query.png", "made-pictures.png"}
            assert shots <= {p.name for p in tmp_path.iterdir()}
            assert (tmp_path / "museum.json").is_file()
    finally:
        for window in qapp.topLevelWidgets():
            window.close()
        shell.enable_gui(None)
        TerminalInteractiveShell.clear_instance()
