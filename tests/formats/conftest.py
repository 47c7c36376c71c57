"""Fixtures shared by the format readers' tests."""

from __future__ import annotations

import pytest

from irviewer.formats import descriptor_files


@pytest.fixture(params=["read", "mapped"])
def storage(request, monkeypatch):
    """Run a test with values stored verbatim read whole (the default for arrays up to
    READ_WHOLE_BYTES) and memory-mapped (what larger arrays get); returns which."""
    if request.param == "mapped":
        monkeypatch.setattr(descriptor_files, "READ_WHOLE_BYTES", 0)
    return request.param
