"""Compare mode: a second method's AP and ΔAP in the query table, a scatter of AP against
AP, the paired statistics, and both ranked lists side by side. Its face is
:class:`CompareMode`."""

from irviewer.gui.compare.controller import CompareMode

__all__ = ["CompareMode"]
