"""Opening data in the window: File ▸ Open and Add, drag and drop, the progress bar and
Cancel, the Open dialog. Its face is :class:`OpeningController`."""

from irviewer.gui.opening.controller import OpeningController

__all__ = ["OpeningController"]
