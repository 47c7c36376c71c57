"""Opening data in the window: File ▸ Open and Add, drag and drop, progress and Cancel
(:mod:`.controller`), the Open dialog, and sessions (save, autosave, recent, restore)."""
