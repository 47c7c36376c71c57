"""The plots on the right: the selected query's precision-recall curve over the mean, and
the dataset overview (AP histogram, P@k, CMC). The feature is one panel that only paints
what it is given; its face is :class:`PlotsPanel`."""

from irviewer.gui.plots.panel import PlotsPanel

__all__ = ["PlotsPanel"]
