"""Test set-up shared by the whole suite: no display is ever needed, and the user's data
folder (sessions the window keeps, corrections of datasets whose folder cannot be written)
is a fresh folder per test, never the user's own."""

import os
import sys

import platformdirs
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def user_data(tmp_path_factory, monkeypatch):
    """Point the user's data folder at a fresh folder and return irviewer's folder in it:
    through ``XDG_DATA_HOME`` (which platformdirs follows on Linux, also in the processes a
    test starts), and platformdirs itself elsewhere."""
    base = tmp_path_factory.mktemp("data-home")
    monkeypatch.setenv("XDG_DATA_HOME", str(base))
    if not sys.platform.startswith("linux"):
        monkeypatch.setattr(platformdirs, "user_data_path",
                            lambda appname=None, *args, **kwargs: base / appname)
    return base / "irviewer"
