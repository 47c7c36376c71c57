"""Search with a photo: a visitor's photo dropped on the window (or chosen) is described and
searched in a worker, and shown as a temporary query. Its face is :class:`PhotoSearch`."""

from irviewer.gui.photo_search.controller import PhotoSearch

__all__ = ["PhotoSearch"]
