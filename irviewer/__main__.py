"""``python -m irviewer`` runs the command-line entry point."""

from irviewer.cli import entry

if __name__ == "__main__":
    entry()
