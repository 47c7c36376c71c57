"""The results feature: the method bar, the query list, a query's ranked results and the
query and a match side by side. Its face is :class:`Inspector` (the window and the other
features talk to it, never to its panels)."""

from irviewer.gui.results.controller import Inspector

__all__ = ["Inspector"]
