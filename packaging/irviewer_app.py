"""The packaged app's entry point (PyInstaller runs this file): irviewer's own command
line, so a double-click (no arguments) opens the window on the museum demo, and the same
program answers ``irviewer index``, ``search``, ``eval``... ``freeze_support`` first: the
indexer's worker processes are this same program started again (``spawn``), and must run
their task rather than open a window."""

import multiprocessing

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from irviewer.cli import entry

    entry()
