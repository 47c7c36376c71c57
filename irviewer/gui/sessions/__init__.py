"""Sessions: the view kept as a ``.irv`` file (File ▸ Save session), autosaved every few
seconds and on closing, File ▸ Recent, and a session's view restored once its data is open.
Its face is :class:`Sessions`."""

from irviewer.gui.sessions.controller import Sessions

__all__ = ["Sessions"]
