"""Widgets several features share: thumbnails decoded off the GUI thread, the tile grid,
the query image, and a tiles context menu."""
