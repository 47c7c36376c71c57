"""The inspector: what the window shows, and the one way other features change it.

It owns the results feature's panels — the method bar (:mod:`.method_bar`), the query list
(:mod:`.query_list`), the query with its ranked results (:mod:`.panel`) and the query and
a match side by side (:mod:`.side_by_side`) — and the state they paint: the open data, the
evaluation under the chosen method and conventions, the query shown. The numbers come from
:mod:`irviewer.view` (result lists, summary); nothing here computes a metric.

Other features never touch these panels; they call the methods below and connect to the
signals: ``evaluation_shown(evaluation, changed)`` after every re-score (``changed``: the
query positions a correction re-scored, None for all), ``methods_changed()`` when a method
was added to the open data (a re-ranked one), ``query_shown(q)`` once a dataset
query is shown, ``ap_range_changed(range)`` with the list's AP filter, ``tile_clicked(tiles,
at)`` for a result clicked, and ``match_key(tiles, at, key)`` / ``match_menu_requested(tiles,
at, point)`` for the keys 1–4 and a right click in the side-by-side window.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, QPoint, Qt, Signal
from PySide6.QtWidgets import QMenu, QSplitter, QWidget

from irviewer.core.errors import InputError, window_text
from irviewer.core.evaluation import Evaluation
from irviewer.gui.results.method_bar import MethodBar
from irviewer.gui.results.panel import DEPTH_RANGE, ResultsPanel
from irviewer.gui.results.query_list import QueryListPanel
from irviewer.gui.results.side_by_side import CompareController, query_side
from irviewer.gui.widgets.thumbnails import ThumbnailCache
from irviewer.gui.widgets.tile_menu import TileMenuHook, tile_menu
from irviewer.opening.opener import Method, Opened
from irviewer.opening.request import RESULTS_SHOWN
from irviewer.view.result_list import (
    QueryHeader,
    ResultList,
    ResultTile,
    ignored_reasons,
    judged_anywhere,
    own_badges,
    query_header,
    result_list,
)
from irviewer.view.summary import summary
from irviewer.view.view_state import ViewState
from irviewer.view.window_layout import window_layout

#: Narrowest widths of the query list and of the results, in pixels.
QUERIES_WIDTH, RESULTS_WIDTH = 360, 440


class Inspector(QObject):
    """The shown data, evaluation and query, and the panels that paint them (see the
    module's docstring for the signals)."""

    evaluation_shown = Signal(object, object)
    methods_changed = Signal()
    query_shown = Signal(int)
    ap_range_changed = Signal(object)
    tile_clicked = Signal(object, int)
    match_key = Signal(object, int, str)
    match_menu_requested = Signal(object, int, QPoint)

    def __init__(self, parent: QWidget, cache: ThumbnailCache, depth: int = RESULTS_SHOWN) -> None:
        super().__init__(parent)
        self.parent_widget = parent
        self.opened: Opened | None = None
        self.evaluation: Evaluation | None = None
        self.current: int | None = None
        #: The query shown before a visitor's photo took its place (to come back to).
        self.before_photo: int | None = None
        self.bar = MethodBar()
        self.queries = QueryListPanel()
        self.results = ResultsPanel(cache, max(DEPTH_RANGE[0], min(DEPTH_RANGE[1], depth)))
        self.comparison = CompareController(parent)
        # The results and whatever a feature puts beside them (compare mode's strips), in a
        # splitter of their own: the window's panes keep their sizes.
        self.middle = QSplitter()
        self.middle.setChildrenCollapsible(False)
        self.middle.addWidget(self.results)
        self.queries.setMinimumWidth(QUERIES_WIDTH)
        self.results.setMinimumWidth(RESULTS_WIDTH)
        self._menu_hooks: list[TileMenuHook] = []
        self._extra_legend: tuple[str, ...] = ()
        self.bar.changed.connect(self.rescore)
        self.queries.query_selected.connect(self.show_query)
        self.queries.query_hidden.connect(self.results.set_hidden)
        self.queries.ap_range_changed.connect(self.ap_range_changed)
        self.results.depth_changed.connect(self._refresh)
        self.results.show_ignored_changed.connect(self._refresh)
        self.results.tile_clicked.connect(self.comparison.show_tile)
        self.results.tile_clicked.connect(self.tile_clicked)
        self.results.tile_menu_requested.connect(self._popup_tile_menu)
        self.comparison.relation_key.connect(self.match_key)
        self.comparison.menu_requested.connect(self.match_menu_requested)

    # -- the data and its evaluation -----------------------------------------------------
    def take(self, opened: Opened) -> None:
        """Take freshly opened data: its methods and protocols in the bar, no query shown
        yet (:meth:`rescore` and :meth:`first_query` show it)."""
        self.opened = opened
        self.current = self.before_photo = None
        self.bar.set_choices(list(opened.methods), list(opened.protocols), opened.request.ap)

    def rescore(self, changed: np.ndarray | None = None) -> None:
        """Show the evaluation of the chosen method, protocol and conventions (``changed``:
        only those queries' rows changed, after a label correction)."""
        if self.opened is None or not self.bar.choice()[0]:
            return
        method, protocol, ap, self_match = self.bar.choice()
        self.bar.set_protocol_defaults(self.opened.evaluation(method, protocol).protocol)
        ev = self.opened.evaluation(method, protocol, ap=ap, self_match=self_match)
        self.evaluation = ev
        shown = self.opened.methods[method]  # rows matched by position: said, every time
        self.bar.set_banner(" ".join(window_text(n) for n in shown.notes)
                            if shown.matched_by_position else None)
        if changed is None:
            self.queries.set_evaluation(ev)
        else:
            self.queries.update_queries(ev, changed)
        layout = window_layout(ev)
        self.bar.set_research(layout.research)
        self.queries.set_layout(layout)
        self.results.set_layout(layout)
        self.bar.show_summary(summary(ev))
        self._paint_legend()
        self.evaluation_shown.emit(ev, changed)
        self._refresh()

    def choice(self) -> tuple[str, str, str | None, str | None]:
        """Return (method, protocol, AP rule or None, self-match rule or None) shown."""
        return self.bar.choice()

    def show_method(self, name: str) -> None:
        """Show the method called ``name`` (the protocol and conventions stay)."""
        _method, protocol, ap, self_match = self.bar.choice()
        self.bar.set_choice(name, protocol, ap, self_match)

    def add_methods(self, methods: list[Method]) -> None:
        """Add ``methods`` (derived from open ones: re-ranked, approximate, engine) to the
        open data (:meth:`Opened.add`, which records them for sessions) and offer them; the
        method shown stays; then ``methods_changed()``."""
        assert self.opened is not None
        self.opened.add(methods)
        self.bar.set_methods(list(self.opened.methods))
        self.methods_changed.emit()

    def method(self) -> str:
        """Return the name of the method shown."""
        return self.bar.method()

    # -- the query shown -----------------------------------------------------------------
    def show_query(self, q: int) -> None:
        """Show query ``q``: its image and box, its ranked tiles and missed positives; then
        ``query_shown(q)`` (its curves, its corrected marks, compare mode's strips)."""
        ev = self.evaluation
        assert ev is not None
        self.current = q
        self.before_photo = None
        result = result_list(ev, q, self.results.shown_depth, self.results.show_ignored)
        header = query_header(ev, q)
        self.results.show_result(header, result)
        self.comparison.set_query(query_side(header), result.tiles, result.missed)
        self.query_shown.emit(q)

    def select(self, q: int) -> None:
        """Select query ``q`` in the list, or show it when the list's filters hide it."""
        if not self.queries.select_query(q):
            self.show_query(q)

    def select_query(self, name: str) -> None:
        """Select the query called ``name`` (``--select``); InputError when none is."""
        assert self.opened is not None
        self.select(self.opened.dataset.query_by_name(name))

    def first_query(self) -> None:
        """Select the first query the list shows."""
        self.queries.jump(0)

    def last_query(self) -> None:
        """Select the last query the list shows."""
        self.queries.jump(-1)

    def next_failure(self) -> bool:
        """Select the next listed query whose first result is wrong; False when none is."""
        return self.queries.next_failure()

    def listed_queries(self, limit: int | None = None) -> list[int]:
        """Return the query positions the list shows, in its order and filter (at most
        ``limit``)."""
        return self.queries.listed_queries(limit)

    def set_ap_range(self, ap_range: tuple[float, float] | None) -> None:
        """List only queries with AP in ``ap_range`` (fractions; None for all)."""
        self.queries.set_ap_range(ap_range)

    def set_compared(self, name: str, other_ap: np.ndarray | None,
                     delta: np.ndarray | None) -> None:
        """Compare mode: the list's columns of the compared method (None: none)."""
        self.queries.set_compared(name, other_ap, delta)

    def set_compared_ties(self, explained: np.ndarray | None,
                          tips: dict[int, str] | None = None) -> None:
        """Compare mode: mark the ΔAPs (per query position) that the order of tied scores
        alone could make, with their hover sentences (None: none)."""
        self.queries.set_compared_ties(explained, tips)

    def show_photo(self, header: QueryHeader, result: ResultList) -> None:
        """Show a visitor's photo and its matches where a query's results are. No dataset
        query is shown meanwhile (nothing — a correction, the keys 1–4, a re-score — acts
        on the query that was, with the photo's tiles); :meth:`leave_photo` comes back."""
        if self.current is not None:
            self.before_photo = self.current
        self.current = None
        self.results.show_result(header, result)
        self.results.set_marked(frozenset())
        self.comparison.set_query(query_side(header), result.tiles, ())

    def leave_photo(self) -> None:
        """Show the query shown before the photo again (nothing when none was)."""
        if self.current is None and self.before_photo is not None and self.evaluation:
            self.show_query(self.before_photo)

    # -- the tiles -----------------------------------------------------------------------
    @property
    def depth(self) -> int:
        """Return how many ranked results are shown."""
        return self.results.shown_depth

    @property
    def show_ignored(self) -> bool:
        """Return whether ignored items are shown where they ranked."""
        return self.results.show_ignored

    def shown_tiles(self) -> tuple[ResultTile, ...]:
        """Return every tile shown, ranked first, then missed positives."""
        return self.results.tiles()

    def selected_tile(self) -> tuple[tuple[ResultTile, ...], int] | None:
        """Return (the strip, the position in it) of the selected result tile, or None."""
        return self.results.selected_tile()

    def visible_thumbnails(self) -> list[tuple[str, Path | None]]:
        """Return the (name, path) of every tile shown (for --screenshot)."""
        return [(t.name, t.path) for t in self.results.tiles()]

    def set_marked(self, marked: frozenset[int]) -> None:
        """Mark the tiles of these gallery indices as corrected."""
        self.results.set_marked(marked)

    def set_extra_legend(self, entries: tuple[str, ...]) -> None:
        """Add ``entries`` (HTML) to the legend (the corrections' mark)."""
        self._extra_legend = entries
        self._paint_legend()

    def show_tile(self, tiles: tuple[ResultTile, ...], at: int | None,
                  sync: bool = False) -> None:
        """Show the query beside ``tiles[at]`` in the side-by-side window."""
        self.comparison.show_tile(tiles, at, sync=sync)

    def side_by_side_window(self) -> QWidget | None:
        """Return the side-by-side window (None until first opened)."""
        return self.comparison.window

    def add_tile_menu_entries(self, hook: TileMenuHook) -> None:
        """Call ``hook(menu, tile)`` when a tile's context menu is built."""
        self._menu_hooks.append(hook)

    def tile_menu(self, tiles: tuple[ResultTile, ...], at: int) -> QMenu:
        """Return the context menu of ``tiles[at]`` (with every hook's entries)."""
        return tile_menu(self.parent_widget, tiles, at, self.comparison.show_tile,
                         self._menu_hooks)

    def zoom(self, step: int) -> None:
        """Make the ranked tiles ``step`` pixels larger (smaller when negative)."""
        self.results.zoom(step)

    def toggle_ignored(self) -> None:
        """Show or hide ignored items (the I key)."""
        self.results.toggle_ignored()

    # -- the list's filter box (the window's keys) --------------------------------------
    def focus_filter(self) -> None:
        """Put the cursor in the list's filter box (Ctrl+F)."""
        self.queries.focus_filter()

    def filter_has_focus(self) -> bool:
        """Return whether the keyboard is in the filter box."""
        return self.queries.filter_has_focus()

    def clear_filter(self) -> None:
        """Empty the filter box."""
        self.queries.clear_filter_text()

    # -- places for other features' widgets ----------------------------------------------
    def add_beside_method(self, label: str, widget: QWidget) -> None:
        """Put ``widget`` after the method box (compare mode's "Compare with")."""
        self.bar.add_beside_method(label, widget)

    def add_summary_line(self, widget: QWidget) -> None:
        """Add a line under the summary (compare mode's statistics)."""
        self.bar.add_line(widget)

    def add_beside_results(self, widget: QWidget) -> None:
        """Put ``widget`` right of the results (compare mode's strips)."""
        self.middle.addWidget(widget)

    # -- the view as a value -------------------------------------------------------------
    def view_state(self, splitter_sizes: tuple[int, ...] = ()) -> ViewState:
        """Return what is shown as a :class:`ViewState` (``splitter_sizes``: the window's
        panes)."""
        method, protocol, ap, self_match = self.bar.choice()
        text, failures, ap_range = self.queries.filters()
        sort = self.queries.sort_state()
        selected = (self.opened.dataset.queries[self.current].name
                    if self.opened is not None and self.current is not None else None)
        return ViewState(
            method=method or None, protocol=protocol or None, ap=ap, self_match=self_match,
            selected_query=selected, filter_text=text, failures_only=failures,
            ap_range=ap_range, top_k=self.results.shown_depth, tile_size=self.results.tile_size,
            show_ignored=self.results.show_ignored,
            sort_column=sort[0] if sort else None,
            sort_order=sort[1] if sort else "ascending", splitter_sizes=splitter_sizes)

    def apply_view(self, state: ViewState) -> None:
        """Show ``state`` (the data is open; the window sets its panes' sizes). Values that
        no longer apply (a protocol the dataset lacks, a query that is gone) are left."""
        self.bar.set_choice(state.method, state.protocol, state.ap, state.self_match)
        self.results.set_view(state.top_k, state.tile_size, state.show_ignored)
        self.queries.set_filters(state.filter_text, state.failures_only, state.ap_range)
        if state.sort_column is not None:
            self.queries.sort_by(state.sort_column, state.sort_order)
        if state.selected_query and self.opened is not None:
            with contextlib.suppress(InputError):  # the query is gone: keep the one shown
                self.select_query(state.selected_query)

    # -- internals ----------------------------------------------------------------------
    def _refresh(self, *_args: object) -> None:
        if self.current is not None and self.evaluation is not None:
            self.show_query(self.current)

    def _paint_legend(self) -> None:
        if self.evaluation is not None:
            self.results.set_legend(ignored_reasons(self.evaluation),
                                    own_badges(self.evaluation.protocol), self._extra_legend,
                                    judged_anywhere(self.evaluation))

    def _popup_tile_menu(self, tiles: tuple[ResultTile, ...], at: int, pos: QPoint) -> None:
        menu = self.tile_menu(tiles, at)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(pos)
