"""The view half of a session: what the window shows of the open data, as one frozen value
(Qt-free). The window gives it (``MainWindow.view_state()``) and takes it
(``MainWindow.apply_view(state)``); :mod:`irviewer.gui.sessions` only stores it."""

from __future__ import annotations

from dataclasses import dataclass

from irviewer.core.errors import InputError
from irviewer.opening.request import RESULTS_SHOWN

SORT_ORDERS = ("ascending", "descending")


@dataclass(frozen=True)
class ViewState:
    """What the window shows.

    Attributes:
        method: the method's display name (None: the first).
        protocol: the protocol's name (None: the dataset's first).
        ap, self_match: the AP and self-match rules (None: the protocol's own).
        selected_query: the selected query's name (None: the first row).
        filter_text, failures_only, ap_range: the query list's filters (``ap_range`` as
            fractions, None for all).
        top_k: how many ranked results are shown; tile_size: tile edge in pixels.
        show_ignored: ignored items shown where they ranked.
        sort_column, sort_order: the query list's sort (column index, "ascending" or
            "descending"; None: the list's own order).
        splitter_sizes: widths of the query list, results and plots (empty: the default).
        compare_with: the method compare mode compares the shown one with (None: off).
    """

    method: str | None = None
    protocol: str | None = None
    ap: str | None = None
    self_match: str | None = None
    selected_query: str | None = None
    filter_text: str = ""
    failures_only: bool = False
    ap_range: tuple[float, float] | None = None
    top_k: int = RESULTS_SHOWN
    tile_size: int = 132
    show_ignored: bool = False
    sort_column: int | None = None
    sort_order: str = "ascending"
    splitter_sizes: tuple[int, ...] = ()
    compare_with: str | None = None

    def __post_init__(self) -> None:
        if self.sort_order not in SORT_ORDERS:
            raise InputError(f"sort order must be ascending or descending, not "
                             f"{self.sort_order!r}")
