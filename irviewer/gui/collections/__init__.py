"""A curator's own collections in the window: File ▸ New collection from a folder…, Add
photos to this collection…, Update this collection (:mod:`.controller`)."""

from irviewer.gui.collections.controller import Collections

__all__ = ["Collections"]
