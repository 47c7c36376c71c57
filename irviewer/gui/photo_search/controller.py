"""Search with a photo (issue #13): "here is my photo, which painting is it?". A photo
dropped on the window (or chosen with File ▸ Search with a photo…, or O in presentation
mode) is described by the shown method's extractor and verified against its best matches
in a worker thread (:meth:`irviewer.opening.photo_search.Searcher.answer`), and shown as a
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

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal
from PySide6.QtGui import QAction, QDropEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QWidget,
)

from irviewer.core.acceptance import DEFAULT_STRICTNESS, STRICTNESS
from irviewer.core.descriptors import IMAGE_SUFFIXES
from irviewer.core.errors import InputError
from irviewer.core.evaluation import Evaluation
from irviewer.gui.menus import Menus
from irviewer.opening.answer import Answer
from irviewer.opening.opener import Opened
from irviewer.opening.photo_search import Searcher
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


def answer_words(photo: Path, answer: Answer | None) -> str:
    """Return the bar's rich text: the photo's name and irviewer's answer, the title in
    italics ("This is <i>The Starry Night</i> — Vincent van Gogh")."""
    name = html.escape(photo.name)
    if answer is None:
        return f"<b>Your photo</b> {name}"
    if answer.named is not None:
        work, sep, artist = (answer.named.title or answer.artwork or "").rpartition(" — ")
        title = f"<i>{html.escape(work)}</i> — {html.escape(artist)}" if sep and work \
            else f"<i>{html.escape(artist)}</i>"
        return f"<b>Your photo</b> {name}: <b>This is {title}</b>"
    return (f"<b>Your photo</b> {name}: <b>Not in this collection.</b> Closest: "
            f"{html.escape('; '.join(answer.closest()))}")


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
    view: QWidget

    @property
    def active(self) -> bool: ...
    def show_photo(self, slide: Slide) -> None: ...


class SearchSignals(QObject):
    """``done(generation, (searcher, answer))`` or ``failed(generation, sentence)``."""

    done = Signal(int, object)
    failed = Signal(int, str)


class SearchJob(QRunnable):
    """Describe one photo, rank the gallery and verify the best matches, in the thread pool
    (the extractor never runs on the GUI thread); the searcher is built here too when not
    cached (it loads the extractor's vocabulary and the gallery's local features)."""

    def __init__(self, generation: int, opened: Opened, method: str,
                 searcher: Searcher | None, photo: Path, k: int, strictness: str,
                 signals: SearchSignals) -> None:
        super().__init__()
        self.generation, self.opened, self.method = generation, opened, method
        self.searcher, self.photo, self.k, self.signals = searcher, photo, k, signals
        self.strictness = strictness

    def run(self) -> None:
        try:
            searcher = self.searcher or Searcher.from_opened(self.opened, self.method)
            answer = searcher.answer(self.photo, self.k, self.strictness)
        except InputError as e:
            self.signals.failed.emit(self.generation, str(e))
        except MemoryError:
            self.signals.failed.emit(self.generation, f"{self.photo.name}: not enough memory "
                                     "to describe this photo; try a smaller one")
        except Exception as e:  # a bug: shown, not swallowed
            self.signals.failed.emit(self.generation, "internal error (a bug, please report "
                                     f"it): {type(e).__name__}: {e}")
        else:
            self.signals.done.emit(self.generation, (searcher, answer))


class PhotoBar(QWidget):
    """Above the inspector's results while a photo is shown: irviewer's answer, how strict
    it is, the picker that colours the matches, and the way back to the queries."""

    def __init__(self) -> None:
        super().__init__()
        self.label = QLabel("")
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.strictness = QComboBox()
        for name in STRICTNESS:
            self.strictness.addItem(name, name)
        self.strictness.setCurrentIndex(STRICTNESS.index(DEFAULT_STRICTNESS))
        self.strictness.setToolTip("How much evidence names an artwork: stricter names "
                                   "fewer (and fewer wrongly), looser more (docs/search.md)")
        self.picker = QComboBox()
        self.picker.setMinimumWidth(240)
        self.picker.setToolTip("Say which painting the photo shows to colour its matches")
        self.back = QPushButton("Back to the queries")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addWidget(self.label, 1)
        layout.addWidget(QLabel("Strictness"))
        layout.addWidget(self.strictness)
        layout.addWidget(QLabel("Colour as"))
        layout.addWidget(self.picker)
        layout.addWidget(self.back)
        self.setStyleSheet("PhotoBar { background: #E8F1F8; border: 1px solid #0072B2; }")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.setVisible(False)


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
        self.generation = 0
        self.pool = QThreadPool.globalInstance()
        self.signals = SearchSignals()
        self.signals.done.connect(self._done)
        self.signals.failed.connect(self._failed)
        self._searchers: dict[tuple[int, str], Searcher] = {}
        self.photo: Path | None = None
        self._pending = Path()
        self.answer: Answer | None = None
        self.instance: str | None = None
        self.last_error: str | None = None
        self.bar = PhotoBar()
        self.bar.picker.activated.connect(
            lambda i: self.set_instance(self.bar.picker.itemData(i)))
        self.bar.back.clicked.connect(self.close_photo)
        self.bar.strictness.activated.connect(lambda _i: self.search_again())
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
        self.generation += 1
        self._pending = Path(photo)
        k = max(self.presentation.top_n, w.depth)
        job = SearchJob(self.generation, w.opened, method,
                        self._searchers.get((id(w.opened), method)), Path(photo), k,
                        self.strictness(), self.signals)
        self.message.emit(f"Searching {Path(photo).name} with {method}…")
        if sync:
            job.run()
        else:
            self.pool.start(job)

    def strictness(self) -> str:
        """Return the strictness chosen in the bar."""
        return str(self.bar.strictness.currentData())

    def set_strictness(self, strictness: str, sync: bool = False) -> None:
        """Choose ``strictness`` and answer the photo shown again with it."""
        self.bar.strictness.setCurrentIndex(STRICTNESS.index(strictness))
        self.search_again(sync)

    def search_again(self, sync: bool = False) -> None:
        """Answer the photo shown again (the strictness changed)."""
        if self.photo is not None:
            self.search(self.photo, sync)

    # -- answering ---------------------------------------------------------------------------
    @property
    def matches(self) -> tuple:
        """Return the shown photo's matches, best first (none before an answer)."""
        return () if self.answer is None else self.answer.matches

    def _done(self, generation: int, result: tuple[Searcher, Answer]) -> None:
        if generation != self.generation or self.shown.opened is None:
            return
        searcher, answer = result
        self._searchers = {(id(self.shown.opened), self.shown.method()): searcher}
        self.photo, self.answer, self.instance = self._pending, answer, None
        self.message.emit(f"{self.photo.name}: {answer.sentence()}")
        self.show()

    def _failed(self, generation: int, message: str) -> None:
        if generation == self.generation:
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
            self.presentation.show_photo(photo_slide(ds, self.photo, top, None, self.answer))
        header, result = photo_result(ds, self.photo, self.matches[: w.depth], self.instance,
                                      self.answer)
        w.show_photo(header, result)
        self.bar.label.setText(answer_words(self.photo, self.answer))
        self.bar.label.setToolTip("" if self.answer is None else self.answer.evidence())
        self.bar.picker.clear()
        self.bar.picker.addItem("nothing (not said)", None)
        for label, title in instances.items():
            self.bar.picker.addItem(title, label)
        self.bar.picker.setCurrentIndex(max(0, self.bar.picker.findData(self.instance))
                                        if self.instance is not None else 0)
        self.bar.picker.setEnabled(bool(instances))
        self.bar.setVisible(True)
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
