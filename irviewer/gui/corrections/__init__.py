"""Label corrections in the window: the undo stack and sidecar (:mod:`.store`), the tile
menus and keys, the dock and the published / corrected switch. Its face is
:class:`CorrectionsUI`."""

from irviewer.gui.corrections.controller import CorrectionsUI

__all__ = ["CorrectionsUI"]
