"""The results area: the query (image with the benchmark's box, title, numbers), the list
depth and show-ignored controls with the legend, the ranked tiles and the missed positives.
It paints a :class:`~irviewer.view.result_list.ResultList`; it computes nothing."""

from __future__ import annotations

import html

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from irviewer.gui.theme import legend_html
from irviewer.gui.widgets.query_image import QueryImage
from irviewer.gui.widgets.thumbnails import ThumbnailCache
from irviewer.gui.widgets.tiles import TileGrid
from irviewer.opening.request import RESULTS_SHOWN
from irviewer.opening.request import TOP_K_RANGE as DEPTH_RANGE  # the k box's range, defined once
from irviewer.view import palette
from irviewer.view.result_list import QueryHeader, ResultList, ResultTile
from irviewer.view.window_layout import RESEARCH, WindowLayout


class ResultsPanel(QWidget):
    """Query header, controls, ranked tiles and missed positives.

    Signals: ``depth_changed(int)`` and ``show_ignored_changed(bool)`` when the user changes
    the controls; ``tile_clicked(tiles, at)`` with the strip clicked (a tuple of
    ``ResultTile``) and the position in it; ``tile_menu_requested(tiles, at, global point)``
    on a right click.
    """

    depth_changed = Signal(int)
    show_ignored_changed = Signal(bool)
    tile_clicked = Signal(object, int)
    tile_menu_requested = Signal(object, int, QPoint)

    def __init__(self, cache: ThumbnailCache, depth: int = RESULTS_SHOWN) -> None:
        super().__init__()
        self.query_image = QueryImage()
        self.query_title = QLabel("")
        self.query_title.setWordWrap(True)
        self.query_metrics = QLabel("")
        self.query_metrics.setTextFormat(Qt.TextFormat.RichText)
        self.query_metrics.setWordWrap(True)  # a photo's answer says what it rests on
        self.hidden_note = QLabel(f'<span style="color:{palette.ALERT_TEXT}">Hidden by the '
                                  "filter: this query is not in the list on the left</span>")
        self.hidden_note.setVisible(False)
        self.k_box = QSpinBox()
        self.k_box.setRange(*DEPTH_RANGE)
        self.k_box.setSingleStep(10)
        self.k_box.setValue(depth)
        self.k_box.setToolTip(f"How many ranked results to show ({DEPTH_RANGE[0]}–"
                              f"{DEPTH_RANGE[1]})")
        self.k_box.valueChanged.connect(self.depth_changed)
        k_row = QHBoxLayout()
        for widget in (QLabel("Show the top"), self.k_box, QLabel("results")):
            k_row.addWidget(widget)
        k_row.addStretch(1)
        self.ignored_box = QCheckBox("Show ignored items where they ranked (I)")
        self.ignored_box.toggled.connect(self.show_ignored_changed)
        self.legend = QLabel(legend_html())
        info = QVBoxLayout()
        info.addWidget(self.query_title)
        info.addWidget(self.query_metrics)
        info.addWidget(self.hidden_note)
        info.addLayout(k_row)
        info.addWidget(self.ignored_box)
        info.addWidget(self.legend)
        self.click_hint = QLabel()
        self._hint(RESEARCH.click_hint)
        info.addWidget(self.click_hint)
        info.addStretch(1)
        head = QWidget()
        head_layout = QHBoxLayout(head)
        head_layout.setContentsMargins(0, 0, 0, 0)
        head_layout.addWidget(self.query_image, 1)
        head_layout.addLayout(info, 1)

        self.grid = TileGrid(cache)
        self._query_shown = ""  # the name of the query whose tiles are shown
        self.grid.clicked.connect(lambda g: self._clicked(self.grid, g))
        self.grid.menu_requested.connect(
            lambda at, pos: self.tile_menu_requested.emit(tuple(self.grid.tiles), at, pos))
        self.missed_label = QLabel("")
        self.missed = TileGrid(cache, tile_size=96)
        self.missed.clicked.connect(lambda g: self._clicked(self.missed, g))
        self.missed.menu_requested.connect(
            lambda at, pos: self.tile_menu_requested.emit(tuple(self.missed.tiles), at, pos))
        for grid, other in ((self.grid, self.missed), (self.missed, self.grid)):
            # one tile is selected at a time, in either strip
            grid.clicked.connect(lambda _g, other=other: other.select(None))
            grid.menu_requested.connect(lambda _at, _pos, other=other: other.select(None))
        results = QWidget()
        rv = QVBoxLayout(results)
        self.results_label = QLabel("<b>Ranked results</b>")
        rv.addWidget(self.results_label)
        rv.addWidget(self.grid)
        rv.addWidget(self.missed_label)
        rv.addWidget(self.missed)
        rv.addStretch(1)
        for label in (self.results_label, self.missed_label):
            label.setWordWrap(True)
        self.results_scroll = QScrollArea()
        self.results_scroll.setWidgetResizable(True)
        self.results_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.results_scroll.setWidget(results)
        # The query above the results, in a splitter: the image grows with the room there
        # is, and the user can give the results more of it.
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(head)
        self.split.addWidget(self.results_scroll)
        self.split.setChildrenCollapsible(False)
        self.split.setStretchFactor(0, 2)
        self.split.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.split)

    @property
    def shown_depth(self) -> int:
        """Return how many ranked results are shown."""
        return self.k_box.value()

    @property
    def show_ignored(self) -> bool:
        """Return whether ignored items are shown where they ranked."""
        return self.ignored_box.isChecked()

    @property
    def tile_size(self) -> int:
        """Return the ranked tiles' edge in pixels."""
        return self.grid.tile_size

    def set_view(self, depth: int, tile_size: int, show_ignored: bool) -> None:
        """Set the list depth, the tile size and show-ignored (the depth and show-ignored
        emit their signals when they change)."""
        self.k_box.setValue(depth)
        self.grid.set_tile_size(tile_size)
        self.ignored_box.setChecked(show_ignored)

    def toggle_ignored(self) -> None:
        """Show or hide ignored items (the I key)."""
        self.ignored_box.toggle()

    def set_layout(self, layout: WindowLayout) -> None:
        """Show the research tool's parts (the "show ignored items" switch, the legend of
        relevance, the missed positives, each tile's rank and score) or the curator's
        window (titles under the tiles): :mod:`irviewer.view.window_layout`."""
        for widget in (self.ignored_box, self.legend, self.missed_label, self.missed):
            widget.setVisible(layout.research)
        for grid in (self.grid, self.missed):
            grid.set_numbers(layout.tile_numbers)
        self._hint(layout.click_hint)

    def _hint(self, text: str) -> None:
        self.click_hint.setText(f'<span style="color:{palette.MUTED_TEXT}">'
                                f"{html.escape(text)}</span>")

    def set_hidden(self, hidden: bool) -> None:
        """Say (or stop saying) that the query shown is hidden by the list's filters."""
        self.hidden_note.setVisible(hidden)

    def set_legend(self, ignored: list[str], badges: tuple[int, ...],
                   extra: tuple[str, ...] = (), judged: bool = True) -> None:
        """Show the legend for a protocol that ignores ``ignored`` (in words); without the
        relevance states when nothing shown can be judged (``judged`` False)."""
        shown = [text for text in (legend_html(ignored, badges, judged), *extra) if text]
        self.legend.setText(" &nbsp;&nbsp; ".join(shown))

    def show_result(self, header: QueryHeader, result: ResultList) -> None:
        """Paint one query's header, ranked tiles and missed positives."""
        self.query_image.show_image(header.image, header.path, header.box)
        title = header.title or header.name
        details = f"<br>{html.escape(header.details)}" if header.details else ""
        self.query_title.setText(f"<b>{title}</b><br>{header.name}{details}")
        self.query_metrics.setText(header.metrics)
        if header.name != self._query_shown:  # another query: nothing of it is selected
            self._query_shown = header.name
            self.grid.select(None)
            self.missed.select(None)
        self.grid.set_tiles(result.tiles)
        self.results_label.setText(result.heading())
        self.missed_label.setText(result.missed_heading())
        self.missed.set_tiles(result.missed)

    def tiles(self) -> tuple[ResultTile, ...]:
        """Return every tile shown, ranked first, then missed positives."""
        return (*self.grid.tiles, *self.missed.tiles)

    def zoom(self, step: int) -> None:
        """Make the ranked tiles ``step`` pixels larger (smaller when negative)."""
        self.grid.set_tile_size(self.grid.tile_size + step)

    def selected_tile(self) -> tuple[tuple[ResultTile, ...], int] | None:
        """Return (the strip, the position in it) of the selected tile (clicked, or
        right-clicked), or None."""
        for grid in (self.grid, self.missed):
            at = grid.selected_at()
            if at is not None:
                return tuple(grid.tiles), at
        return None

    def set_marked(self, marked: frozenset[int]) -> None:
        """Mark the tiles of these gallery indices (ranked and missed) as corrected."""
        self.grid.set_marked(marked)
        self.missed.set_marked(marked)

    def _clicked(self, grid: TileGrid, gallery_index: int) -> None:
        at = next(i for i, t in enumerate(grid.tiles) if t.index == gallery_index)
        self.tile_clicked.emit(tuple(grid.tiles), at)
