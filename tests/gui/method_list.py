"""What the tests of features that add methods (re-ranking, approximate search) share: the
Method list as the window offers it, and scipy.stats imported up front."""

from __future__ import annotations

import pytest

from irviewer.gui.main_window import MainWindow


@pytest.fixture(autouse=True)
def statistics_library():
    """scipy.stats imported: small comparisons are computed at once."""
    import scipy.stats  # noqa: F401


def offered(w: MainWindow) -> list[str]:
    """Return the methods the window's Method list offers, in order."""
    box = w.bar.method_box
    return [box.itemText(i) for i in range(box.count())]
