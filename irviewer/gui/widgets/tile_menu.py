"""The context menu of a result tile (right click). It offers comparing the tile with the
query and copying its name; other features add their entries through hooks, each called
as ``hook(menu, tile)`` after the built-in entries (the corrections add "Mark as …")."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu, QWidget

from irviewer.view.result_list import ResultTile

TileMenuHook = Callable[[QMenu, ResultTile], None]


def tile_menu(parent: QWidget, tiles: tuple[ResultTile, ...], at: int,
              compare: Callable[[tuple[ResultTile, ...], int], None],
              hooks: list[TileMenuHook] | tuple[TileMenuHook, ...] = ()) -> QMenu:
    """Return the context menu for ``tiles[at]``: "Compare with the query" (calls
    ``compare(tiles, at)``), "Copy image name", then whatever ``hooks`` add."""
    tile = tiles[at]
    menu = QMenu(parent)
    menu.setToolTipsVisible(True)
    menu.addSection(tile.title or tile.name)
    menu.addAction("Compare with the query", lambda: compare(tiles, at))
    menu.addAction("Copy image name",
                   lambda: QGuiApplication.clipboard().setText(tile.name))
    for hook in hooks:
        hook(menu, tile)
    return menu
