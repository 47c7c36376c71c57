"""resources/ is found from a checkout, and from an installed wheel's irviewer/resources."""

from __future__ import annotations

from pathlib import Path

import irviewer.io.resources as paths


def test_checkout_resources_beside_the_package():
    assert paths.resources_dir() == Path(paths.__file__).resolve().parents[2] / "resources"
    assert paths.resources_dir().is_dir()


def test_installed_copy_wins(tmp_path, monkeypatch):
    package = tmp_path / "irviewer"
    (package / "resources").mkdir(parents=True)
    monkeypatch.setattr(paths, "_PACKAGE", package)
    assert paths.resources_dir() == package / "resources"
