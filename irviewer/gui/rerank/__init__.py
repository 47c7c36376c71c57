"""File ▸ Add a re-ranked method: the dialog (:mod:`.dialog`) and the re-ranking run off
the GUI thread, its progress in the status bar with Cancel. Its face is :class:`RerankUI`."""

from irviewer.gui.rerank.controller import RerankUI

__all__ = ["RerankUI"]
