"""Presentation mode (View ▸ Presentation, F11, ``irviewer --present``): a full-screen slide
per query for an audience (:mod:`.slide`). Its face is :class:`Presentation`."""

from irviewer.gui.presentation.controller import Presentation

__all__ = ["Presentation"]
