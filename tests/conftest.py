"""Test set-up shared by the whole suite: no display is ever needed, the user's data folder
(sessions the window keeps, corrections of datasets whose folder cannot be written) is a
fresh folder per test, never the user's own, and the shared reference samples are found
beside the checkout."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import platformdirs
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[1]
#: Real benchmark files (ground truth, descriptors) kept beside the repository, at
#: ``<repository root>/../shared/samples``: read in place, never copied in (their licences
#: are not the repository's).
SHARED_SAMPLES = ROOT.parent / "shared" / "samples"


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


def shared_sample(*parts: str) -> Path:
    """Return the shared sample at ``parts`` below :data:`SHARED_SAMPLES`; skip the calling
    test, saying which file is absent, when it is not there."""
    path = SHARED_SAMPLES.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared reference samples are read from "
                    "<repository root>/../shared/samples when they are there")
    return path


@pytest.fixture
def shared_samples() -> Callable[..., Path]:
    """Return :func:`shared_sample`: ``shared_samples("oxford5k-gt")`` is that folder, or
    the test is skipped with the reason."""
    return shared_sample
