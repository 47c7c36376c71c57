"""What the window says about where the corrections live and whether they are saved
(Qt-free): the Corrections panel's line under its table and the mark on the corrections
line. Every sentence is true of the file system as it is: a file is said to hold the
corrections only once it exists ("will be saved to" before), a correction not yet in the
file is said to be unsaved with the reason, and a file that could not be read is named as
the reason no correction can be made."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from irviewer.core.errors import counted


@dataclass(frozen=True)
class Saving:
    """Where the corrections go and how far they got: ``path`` the corrections file (None:
    no dataset), ``exists`` whether it is on disk, ``unsaved`` how many corrections are not
    in it yet and ``why`` (the sentence of the last failed save), ``refused`` the sentence
    of a file that could not be read (no correction can be made until it can), ``where``
    why the file is in the user's data folder ("" when beside the dataset)."""

    path: Path | None
    exists: bool = False
    unsaved: int = 0
    why: str = ""
    refused: str = ""
    where: str = ""

    @property
    def alert(self) -> bool:
        """Return True when the panel's line says something is wrong (unsaved, refused)."""
        return bool(self.unsaved or self.refused)

    def panel_line(self) -> str:
        """Return the Corrections panel's line, e.g. "Saved to …/demo.corrections.csv",
        "Corrections will be saved to …/demo.corrections.csv (created with the first one)",
        "Not saved yet: 1 correction — …; saved as soon as …" ("" with no dataset)."""
        if self.path is None:
            return ""
        if self.refused:
            return (f"No correction can be made: {self.refused} Fix the file (irviewer reads "
                    "it again as soon as it changes) or choose another (File ▸ Corrections "
                    "file…).")
        if self.unsaved:
            return (f"Not saved yet: {counted(self.unsaved, 'correction')} "
                    f"{'is' if self.unsaved == 1 else 'are'} not in {self.path} — {self.why}. "
                    "irviewer saves as soon as it can, and keeps them in its autosave "
                    "meanwhile.")
        kept = f" ({self.where})" if self.where else ""
        if not self.exists:
            return f"Corrections will be saved to {self.path}{kept}, created with the first one"
        return f"Saved to {self.path}{kept}"

    def line_mark(self) -> str:
        """Return the words the corrections line adds ("" when all is saved): "1 unsaved",
        "corrections off"."""
        if self.refused:
            return "corrections off: the file could not be read"
        if self.unsaved:
            return f"{self.unsaved} unsaved"
        return ""
