""":func:`view`: the window on data held in Python — from a script (it returns when the
window closes), from IPython or Jupyter (it returns at once, the window live: Qt's event
loop runs while the prompt waits, as napari integrates it), or rendered offscreen to a PNG
(``screenshot=``, like ``irviewer --screenshot``).

Qt is loaded here only when :func:`view` is called: importing :mod:`irviewer.api` imports
no Qt. The window opens its data the one way every window does
(:meth:`~irviewer.gui.main_window.MainWindow.open_request`), with the request
:func:`irviewer.evaluate` builds for the same arguments.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irviewer.api.data import prepare
from irviewer.api.errors import ArgumentError, argument_error, fresh
from irviewer.api.given import DatasetLike, Given, ImagesLike, in_memory_place
from irviewer.api.images import image_locations
from irviewer.api.requests import blamed, options_of, request_of
from irviewer.api.result import Result
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.core.ranking import DEFAULT_DEPTH
from irviewer.io.user_data import make_room_for
from irviewer.opening.request import RESULTS_SHOWN, TOP_K_RANGE, OpenRequest

if TYPE_CHECKING:
    from irviewer.gui.main_window import MainWindow


class Viewer:
    """A window :func:`view` opened: select a query, render it to a PNG, close it. From a
    script :func:`view` returns it closed (the window was closed by the user); from IPython
    or Jupyter, live."""

    def __init__(self, window: MainWindow) -> None:
        self._window = window

    @property
    def closed(self) -> bool:
        """Return True once the window is closed."""
        return not self._window.isVisible()

    @property
    def selected(self) -> str | None:
        """Return the name of the query shown (None: none)."""
        opened, q = self._window.opened, self._window.current
        return None if opened is None or q is None else opened.dataset.queries[q].name

    @property
    def queries(self) -> tuple[str, ...]:
        """Return the names of the queries the window lists."""
        opened = self._window.opened
        return () if opened is None else opened.dataset.query_names

    def select(self, query: str) -> None:
        """Show query ``query``; ArgumentError naming ``query`` when no query is called so."""
        try:
            self._window.select_query(query)
        except InputError as e:
            raise argument_error("query", e) from None

    def screenshot(self, path: str | os.PathLike[str]) -> Path:
        """Render the window, every visible thumbnail loaded, to the PNG ``path`` (written
        atomically); return the path. ArgumentError when it cannot be written."""
        from irviewer.gui.app import screenshot

        try:
            screenshot(self._window, Path(path), None)
        except InputError as e:
            raise argument_error("screenshot", e) from None
        return Path(path)

    def close(self) -> None:
        """Close the window (an open session of a dataset read from files is kept as the
        window keeps it)."""
        self._window.close()

    def __repr__(self) -> str:
        opened = self._window.opened
        what = "nothing" if opened is None else (
            f"{opened.dataset.label()}, {opened.dataset.n_queries:,} queries, "
            f"{', '.join(opened.methods)}")
        state = "closed" if self.closed else f"showing {self.selected or 'no query'}"
        return f"<irviewer window on {what}: {state}>"


def view(data: object = None, more: object = None, /, *,
         dataset: DatasetLike | None = None,
         embeddings: object = None, names: object = None, labels: object = None,
         queries: object = None, gallery: object = None,
         query_names: object = None, gallery_names: object = None,
         query_labels: object = None, gallery_labels: object = None,
         query_cams: object = None, gallery_cams: object = None,
         scores: object = None, distances: object = None,
         descriptors: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
         ranking: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
         name: str | None = None, format: str | None = None,
         read_options: Mapping[str, object] | None = None,
         images: ImagesLike | None = None, select: str | None = None,
         screenshot: str | os.PathLike[str] | None = None, results: int = RESULTS_SHOWN,
         block: bool | None = None,
         protocol: str | None = None, ap: str | None = None, self_match: str | None = None,
         depth: int = DEFAULT_DEPTH, rerank: str | Sequence[str] | None = None,
         ann: str | Sequence[str] | None = None, engine: str | None = None,
         collection: str | None = None, engine_names: str | None = None,
         corrections: str | os.PathLike[str] | None = None,
         ann_names: str | os.PathLike[str] | None = None) -> Viewer:
    """Open the window on the data :func:`irviewer.evaluate` takes (the same arguments, and
    a :class:`~irviewer.api.result.Result` of it as the first argument), and return it as a
    :class:`Viewer`.

    ``images`` says where the pictures are: a folder (each image found by its name), one
    path per row of the arrays (the embeddings' rows, or the queries' then the gallery's),
    a mapping from image name to path (or to a picture), or a function of the image name
    that returns a PIL image, an array or a path (called when a picture is shown, one call
    at a time). Without it, a dataset read from files shows its own images.

    ``select`` names the query shown first. ``screenshot``: render the window offscreen to
    that PNG, the query ``select`` shown, and return (the viewer closed), as ``irviewer
    --screenshot``. Otherwise from IPython or Jupyter the window stays live and this
    returns at once (Qt's event loop is integrated as ``%gui qt`` does), and from a script
    this returns when the window is closed; ``block`` True or False forces either.
    ``results`` is how many results the window shows per query. ArgumentError (one
    sentence naming the argument) for anything that cannot be used, before any window
    opens.
    """
    low, high = TOP_K_RANGE
    try:
        if isinstance(results, bool) or not isinstance(results, int) \
                or not low <= results <= high:
            raise ArgumentError("results", f"results: {results!r} results per query; give a "
                                f"whole number from {low} to {high}")
        if block is not None and not isinstance(block, bool):
            raise ArgumentError("block", f"block: give True, False or None, not {block!r}")
        if isinstance(data, Result):
            if more is not None:
                raise ArgumentError("data", "data: a Result holds its data; give nothing "
                                    "else by position")
            request, order, argument = data.request, data.rows, data.vectors_argument
        else:
            given = Given.of(data, more, dataset=dataset, embeddings=embeddings, names=names,
                             labels=labels, queries=queries, gallery=gallery,
                             query_names=query_names, gallery_names=gallery_names,
                             query_labels=query_labels, gallery_labels=gallery_labels,
                             query_cams=query_cams, gallery_cams=gallery_cams, scores=scores,
                             distances=distances, descriptors=descriptors, ranking=ranking,
                             name=name, format=format, read_options=read_options)
            options = options_of(protocol, ap, self_match, depth, rerank, ann, engine,
                                 collection, engine_names, corrections, ann_names)
            prepared = prepare(given)
            request, order = request_of(given, prepared, options), prepared.rows
            argument = prepared.vectors_argument
        if images is not None:
            request = _with_images(request, images, order)
        return _show(request, select, screenshot, results, block, argument)
    except ArgumentError as e:
        raise fresh(e) from None


def _with_images(request: OpenRequest, images: ImagesLike, order: Sequence[str]
                 ) -> OpenRequest:
    """Return ``request`` with its dataset held in memory (read now when it was a path),
    its pictures where ``images`` says (:func:`~irviewer.api.images.image_locations`),
    the reader's own kept for the images they do not name."""
    from irviewer.opening.opener import read_request_dataset

    dataset: Dataset | None = request.held_dataset
    if dataset is None:
        try:
            dataset = read_request_dataset(request)
        except InputError as e:
            raise argument_error("dataset", e) from None
    found = image_locations(images, dataset, order or dataset.gallery)
    merged = found if not dataset.image_paths else {**dataset.image_paths, **found}
    return replace(request, held_dataset=replace(dataset, image_paths=merged))


def _show(request: OpenRequest, select: str | None,
          screenshot: str | os.PathLike[str] | None, results: int,
          block: bool | None, argument: str) -> Viewer:
    """Open ``request`` in a new window and show it as :func:`view` says."""
    shell = _ipython()
    if screenshot is None and not _can_show():
        raise ArgumentError("screenshot", "screenshot: there is no display to show a window "
                            "on (DISPLAY is not set); give screenshot= to render it to a PNG, "
                            "or run where there is a display")
    if screenshot is not None and not _can_show():
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt

    from irviewer.gui.app import application
    from irviewer.gui.main_window import MainWindow

    held = request.held_dataset
    if held is not None and held.path is None:  # where the window keeps its corrections
        request = replace(request, dataset=in_memory_place(held))
        make_room_for(Path(request.dataset))
    app = application()
    window = MainWindow(top_k=results, keep_sessions=False)
    if screenshot is not None:  # laid out and painted, never mapped on a screen
        window.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
    window.open_request(request, sync=True)
    viewer = Viewer(window)
    try:
        if window.last_error is not None:
            raise ArgumentError(blamed(window.last_error, request, "", argument),
                                window.last_error)
        if select is not None:
            try:
                window.select_query(select)
            except InputError as e:
                raise argument_error("select", e) from None
        if screenshot is not None:
            viewer.screenshot(screenshot)
            window.close()
            return viewer
    except ArgumentError:
        window.close()
        raise
    window.show()
    window.raise_()
    if block is False or (block is None and shell is not None and _integrate(shell)):
        return viewer
    app.exec()
    return viewer


def _ipython() -> Any:
    """Return the running IPython shell (a terminal or a Jupyter kernel), None when there
    is none; IPython is never imported here."""
    module = sys.modules.get("IPython")
    get = getattr(module, "get_ipython", None)
    return get() if callable(get) else None


def _integrate(shell: Any) -> bool:
    """Run Qt's event loop while ``shell`` waits for input (``%gui qt``), as napari does;
    return True when it does (False: a shell that cannot, e.g. ``--simple-prompt``)."""
    if str(getattr(shell, "active_eventloop", "") or "").startswith("qt"):
        return True
    try:
        shell.enable_gui("qt")
    except Exception:  # a shell without Qt integration: blocking instead
        return False
    return str(getattr(shell, "active_eventloop", "") or "").startswith("qt")


def _can_show() -> bool:
    """Return False on a Linux without a display and without a Qt platform chosen (Qt
    would abort the process), True elsewhere."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


__all__ = ["Viewer", "view"]
