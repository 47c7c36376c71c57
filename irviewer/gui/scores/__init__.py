"""The Scores tab: the positive and negative pairs' score histograms of the selected query
and of all queries on one axis, a threshold with precision and recall for both, and TAR at
FAR. Its face is :class:`ScoresUI`."""

from irviewer.gui.scores.controller import ScoresUI

__all__ = ["ScoresUI"]
