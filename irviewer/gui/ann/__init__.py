"""File ▸ Add an approximate index method… and Add an engine method…: the dialogs
(:mod:`.dialogs`), the search run off the GUI thread with the opening's progress and
Cancel, the new methods compared with the exact one, a sweep's figure and table. Its face
is :class:`AnnUI`."""

from irviewer.gui.ann.controller import AnnUI

__all__ = ["AnnUI"]
