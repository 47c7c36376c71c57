"""What the window says about the corrections file is true of the disk: "Saved to" only a
file that exists, "will be saved to" before, unsaved corrections with their reason, and a
file that could not be read as the reason no correction can be made."""

from __future__ import annotations

from pathlib import Path

from irviewer.view.corrections_saving import Saving

FILE = Path("/data/demo.corrections.csv")


def test_the_panel_line_says_only_what_is_true():
    assert Saving(None).panel_line() == ""
    assert Saving(FILE).panel_line() == (
        f"Corrections will be saved to {FILE}, created with the first one")
    assert Saving(FILE, exists=True).panel_line() == f"Saved to {FILE}"
    kept = Saving(FILE, exists=True, where="in your data folder")
    assert kept.panel_line() == f"Saved to {FILE} (in your data folder)"
    unsaved = Saving(FILE, exists=True, unsaved=2, why="it is being written by bob")
    assert unsaved.panel_line().startswith(
        f"Not saved yet: 2 corrections are not in {FILE} — it is being written by bob.")
    assert unsaved.alert and unsaved.line_mark() == "2 unsaved"
    refused = Saving(FILE, exists=True, refused="demo.corrections.csv could not be read (x).")
    assert refused.panel_line().startswith("No correction can be made: demo.corrections.csv "
                                           "could not be read (x). Fix the file")
    assert refused.alert and refused.line_mark().startswith("corrections off")
    assert not Saving(FILE, exists=True).alert and Saving(FILE).line_mark() == ""
