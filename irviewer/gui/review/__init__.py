"""Review suspects: the label audit in the background and its queue in a dock. Its face is
:class:`ReviewUI`."""

from irviewer.gui.review.controller import ReviewUI

__all__ = ["ReviewUI"]
