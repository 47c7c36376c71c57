"""File ▸ Add an approximate index method… and Add an engine method…: the dialogs
(:mod:`.dialogs`), the search run off the GUI thread with the opening's progress and
Cancel, the new methods compared with the exact one, a sweep's figure
(:mod:`.sweep_figure`, also ``irviewer figure --sweep``'s). Its face is :class:`AnnUI`."""

from irviewer.gui.ann.controller import AnnUI
from irviewer.gui.ann.sweep_figure import export_sweep

__all__ = ["AnnUI", "export_sweep"]
