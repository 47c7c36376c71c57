"""Search with a photo: "here is my photo, which painting is it?". A photo
dropped on the window (or chosen with File ▸ Search with a photo…, or O in presentation
mode) is described by the shown method's extractor in a worker thread
(:class:`irviewer.opening.photo_search.Searcher`), and shown as a temporary query with its
matches — in the inspector's results area, or as a slide in presentation mode. The matches carry no
relevance until the user says which painting the photo shows (the "This is…" picker).
A photo that cannot be used, or a method that cannot search, is one sentence in a dialog.
It shows the photo through the inspector and presentation mode (their methods below); the
window places its bar above the results and dims the plots while ``photo_shown(True)``."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QDropEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QMessageBox,
    QWidget,
)

from irviewer.core.evaluation import Evaluation
from irviewer.core.image_names import IMAGE_SUFFIXES
from irviewer.gui.menus import Menus
from irviewer.gui.photo_search.bar import PhotoBar
from irviewer.gui.workers import Worker
from irviewer.opening.opener import Opened
from irviewer.opening.photo_search import Match, Searcher
from irviewer.opening.request import classify_paths
from irviewer.view.presentation import (
    Slide,
    instance_titles,
    no_search_sentence,
    photo_result,
    photo_slide,
    searchable_methods,
)
from irviewer.view.result_list import QueryHeader, ResultList


class Shown(Protocol):
    """What the photo search takes from the inspector."""

    opened: Opened | None
    evaluation: Evaluation | None

    @property
    def depth(self) -> int: ...
    def method(self) -> str: ...
    def show_photo(self, header: QueryHeader, result: ResultList) -> None: ...
    def leave_photo(self) -> None: ...


class Slides(Protocol):
    """What the photo search takes from presentation mode."""

    top_n: int

    @property
    def view(self) -> QWidget: ...
    @property
    def active(self) -> bool: ...
    def show_photo(self, slide: Slide, instances: dict[str, str],
                   instance: str | None) -> None: ...


def search_photo(opened: Opened, method: str, searcher: Searcher | None, photo: Path,
                 k: int) -> tuple[Searcher, list[Match]]:
    """Describe one photo and rank the gallery (in a worker: the extractor never runs on
    the GUI thread); return the searcher, built here when not cached (it loads the
    extractor's vocabulary), and the ``k`` best matches."""
    searcher = searcher or Searcher.from_opened(opened, method)
    return searcher, searcher.search(photo, k)


class PhotoSearch(QObject):
    """Searches the shown method's gallery with a photo and shows the answer; emits
    ``photo_shown(bool)`` when a photo takes the results' place or leaves it, and
    ``message(text)`` for the status line."""

    photo_shown = Signal(bool)
    message = Signal(str)

    def __init__(self, parent: QWidget, shown: Shown, presentation: Slides,
                 menus: Menus) -> None:
        super().__init__(parent)
        self.parent_widget, self.shown, self.presentation = parent, shown, presentation
        # Two at a time, as the window's threads allow; a newer photo makes the older
        # search stale.
        self.worker = Worker(self, threads=2)
        self.worker.done.connect(self._done)
        self.worker.failed.connect(self._failed)
        self._searchers: dict[tuple[int, str], Searcher] = {}
        self.photo: Path | None = None
        self._pending = Path()
        self.matches: list[Match] = []
        self.instance: str | None = None
        self.last_error: str | None = None
        self.bar = PhotoBar()
        self.bar.instance_chosen.connect(self.set_instance)
        self.bar.back.connect(self.close_photo)
        action = QAction("Search with a &photo…", parent)
        action.setShortcut("Ctrl+P")
        action.triggered.connect(self.choose)
        menus.add_file_action(action, with_opening=True)
        self.action = action

    # -- asking ------------------------------------------------------------------------------
    def choose(self) -> None:
        """File ▸ Search with a photo…: ask for an image file and search it."""
        patterns = " ".join(f"*{s}" for s in IMAGE_SUFFIXES)
        path, _ = QFileDialog.getOpenFileName(
            self.presentation.view if self.presentation.active else self.parent_widget,
            "Search with a photo", "", f"Images ({patterns});;All files (*)")
        if path:
            self.search(Path(path))

    def drop(self, event: QDropEvent) -> bool:
        """Search a dropped image file; return False (and leave the event alone) when the
        drop holds no image file, or anything else as well (that is for opening)."""
        paths = [Path(u.toLocalFile()) for u in event.mimeData().urls() if u.isLocalFile()]
        roles = classify_paths(paths)
        if not roles.images or len(roles.images) != len(paths):
            return False
        event.acceptProposedAction()
        self.search(roles.images[0])
        return True

    def search(self, photo: Path, sync: bool = False) -> None:
        """Search ``photo`` with the shown method in a worker (``sync`` for tests); a method
        that cannot search says which can."""
        w = self.shown
        self.last_error = None
        if w.opened is None or w.evaluation is None:
            self._tell("Open a dataset first: a photo is searched in its gallery")
            return
        method = w.method()
        searchable = searchable_methods(w.opened)
        if method not in searchable:
            self._tell(no_search_sentence(method, searchable))
            return
        self._pending = photo = Path(photo)
        k = max(self.presentation.top_n, w.depth)
        opened, searcher = w.opened, self._searchers.get((id(w.opened), method))
        self.message.emit(f"Searching {photo.name} with {method}…")
        self.worker.run(lambda: search_photo(opened, method, searcher, photo, k),
                        f"{photo.name}: not enough memory to describe this photo; try a "
                        "smaller one", sync=sync)

    def wait(self) -> None:
        """Block until a running search ends; its answer is dropped (closing the window)."""
        self.worker.wait()

    # -- answering ---------------------------------------------------------------------------
    def _done(self, result: tuple[Searcher, list[Match]]) -> None:
        if self.shown.opened is None:
            return
        searcher, matches = result
        self._searchers = {(id(self.shown.opened), self.shown.method()): searcher}
        self.photo, self.matches, self.instance = self._pending, matches, None
        self.message.emit(f"{self.photo.name}: best match {matches[0].title or matches[0].item}"
                          if matches else f"{self.photo.name}: no match")
        self.show()

    def _failed(self, message: str) -> None:
        self._tell(message)

    def set_instance(self, instance: str | None) -> None:
        """Say which painting the photo shows (None: nobody knows): its matches are then
        coloured by that instance."""
        self.instance = instance
        self.show()

    def show(self) -> None:
        """Show the photo and its matches where the user is looking."""
        w = self.shown
        if self.photo is None or w.opened is None:
            return
        ds = w.opened.dataset
        instances = instance_titles(ds)
        if self.presentation.active:
            top = self.matches[: self.presentation.top_n]
            self.presentation.show_photo(photo_slide(ds, self.photo, top, self.instance),
                                         instances, self.instance)
        header, result = photo_result(ds, self.photo, self.matches[: w.depth], self.instance)
        w.show_photo(header, result)
        self.bar.show_photo(f"<b>Your photo</b> {self.photo.name}: its "
                            f"{len(result.tiles)} best matches in the gallery", instances,
                            self.instance)
        self.photo_shown.emit(True)  # the plots are the last query's, not the photo's

    def photo_left(self, *_args: object) -> None:
        """A dataset query is shown again: the photo's bar goes (``photo_shown(False)``)."""
        if self.bar.isVisible():
            self.bar.setVisible(False)
            self.photo_shown.emit(False)

    def close_photo(self) -> None:
        """Leave the photo: the inspector shows the query it showed before again."""
        self.photo_left()
        self.shown.leave_photo()

    def _tell(self, message: str) -> None:
        """Say ``message`` in a (non-blocking) dialog over what the user looks at."""
        self.last_error = message
        parent = self.presentation.view if self.presentation.active else self.parent_widget
        box = QMessageBox(QMessageBox.Icon.Warning, "Search with a photo", message,
                          parent=parent)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
