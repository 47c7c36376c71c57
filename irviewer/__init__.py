"""irviewer: inspect and score image retrieval with each benchmark's own conventions.

Importing :mod:`irviewer` imports no Qt; the GUI lives in :mod:`irviewer.gui` and is
loaded only when a window is opened.
"""

__version__ = "0.1.0"
