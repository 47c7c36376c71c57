"""``python -m irviewer`` runs the command-line entry point."""

from irviewer.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
