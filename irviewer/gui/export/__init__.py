"""File ▸ Export figure: the dialog (:mod:`.dialog`) and the export run off the GUI thread.
Its face is :class:`FigureExporter` (the painter itself, shared with ``irviewer figure``, is
:mod:`irviewer.gui.figure_painter`)."""

from irviewer.gui.export.controller import FigureExporter

__all__ = ["FigureExporter"]
