"""Search with a photo: "here is my photo, which painting is it?". A photo
dropped on the window (or chosen with File ▸ Search with a photo…, or O in presentation
mode) is described by the shown method's extractor and verified against its best matches
in a worker thread (:meth:`irviewer.collection.photo_search.Searcher.answer`), and shown as a
temporary query with irviewer's answer ("This is …" or "Not in this collection") and its
matches — in the inspector's results area, or as a slide in presentation mode. The bar's
strictness box asks for more or less evidence before an artwork is named. The matches carry
no relevance until the user says which painting the photo shows (the bar's picker).
A photo that cannot be used, or a method that cannot search, is one sentence in a dialog.
It shows the photo through the inspector and presentation mode (their methods below); the
window places its bar above the results and dims the plots while ``photo_shown(True)``."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QDropEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QWidget,
)

from irviewer.collection.answer import Answer, one_of
from irviewer.collection.photo_search import Searcher
from irviewer.core.evaluation import Evaluation
from irviewer.core.image_names import IMAGE_SUFFIXES
from irviewer.gui.menus import Menus
from irviewer.gui.photo_search.bar import PhotoBar
from irviewer.gui.widgets.warning import warn
from irviewer.gui.workers import Worker
from irviewer.opening.opener import Opened
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
from irviewer.view.window_layout import window_layout


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
    def show_photo(self, slide: Slide) -> None: ...


def search_photo(opened: Opened, method: str, searcher: Searcher | None, photo: Path,
                 k: int, strictness: str) -> tuple[Searcher, Answer]:
    """Describe one photo, rank the gallery and verify the best matches (in a worker: the
    extractor never runs on the GUI thread); return the searcher, built here when not
    cached (it loads the extractor's vocabulary and the gallery's local features), and the
    answer with the ``k`` best matches."""
    searcher = searcher or Searcher.from_opened(opened, method)
    return searcher, searcher.answer(photo, k, strictness)


def answer_words(photo: Path, answer: Answer | None) -> str:
    """Return the bar's rich text: the photo's name and irviewer's answer, the title in
    italics ("This is <i>The Starry Night</i> — Vincent van Gogh")."""
    name = html.escape(photo.name)
    if answer is None:
        return f"<b>Your photo</b> {name}"
    if answer.named is not None:
        titles = []
        for named in answer.titles():
            work, sep, artist = named.rpartition(" — ")
            titles.append(f"<i>{html.escape(work)}</i> — {html.escape(artist)}" if sep and work
                          else f"<i>{html.escape(artist)}</i>")
        return f"<b>Your photo</b> {name}: <b>This is {one_of(titles)}</b>"
    return (f"<b>Your photo</b> {name}: <b>Not in this collection.</b> Closest: "
            f"{html.escape('; '.join(answer.closest()))}")


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
        self.answer: Answer | None = None
        self.instance: str | None = None
        self.last_error: str | None = None
        self.bar = PhotoBar()
        self.bar.instance_chosen.connect(self.set_instance)
        self.bar.back.connect(self.close_photo)
        self.bar.strictness_chosen.connect(lambda _s: self.search_again())
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
        strictness = self.strictness()
        self.message.emit(f"Searching {photo.name} with {method}…")
        self.worker.run(lambda: search_photo(opened, method, searcher, photo, k, strictness),
                        f"{photo.name}: not enough memory to describe this photo; try a "
                        "smaller one", sync=sync)

    def wait(self) -> None:
        """Block until a running search ends; its answer is dropped (closing the window)."""
        self.worker.wait()

    # -- answering ---------------------------------------------------------------------------
    def strictness(self) -> str:
        """Return the strictness chosen in the bar."""
        return self.bar.chosen_strictness()

    def set_strictness(self, strictness: str, sync: bool = False) -> None:
        """Choose ``strictness`` and answer the photo shown again with it."""
        self.bar.choose_strictness(strictness)
        self.search_again(sync)

    def search_again(self, sync: bool = False) -> None:
        """Answer the photo shown again (the strictness changed)."""
        if self.photo is not None:
            self.search(self.photo, sync)

    @property
    def matches(self) -> tuple:
        """Return the shown photo's matches, best first (none before an answer)."""
        return () if self.answer is None else self.answer.matches

    def _done(self, result: tuple[Searcher, Answer]) -> None:
        if self.shown.opened is None:
            return
        searcher, answer = result
        self._searchers = {(id(self.shown.opened), self.shown.method()): searcher}
        self.photo, self.answer, self.instance = self._pending, answer, None
        self.message.emit(f"{self.photo.name}: {answer.sentence()}")
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
        judged = window_layout(w.evaluation).photo_judged  # a curator's: shown plainly
        instances = instance_titles(ds) if judged else {}
        if self.presentation.active:
            top = self.matches[: self.presentation.top_n]
            self.presentation.show_photo(photo_slide(ds, self.photo, top, None, self.answer,
                                                     plain=not judged))
        header, result = photo_result(ds, self.photo, self.matches[: w.depth], self.instance,
                                      self.answer, plain=not judged)
        w.show_photo(header, result)
        self.bar.show_photo(answer_words(self.photo, self.answer), instances, self.instance,
                            "" if self.answer is None else self.answer.evidence(),
                            judging=judged)
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
        warn(parent, message, "Search with a photo")
