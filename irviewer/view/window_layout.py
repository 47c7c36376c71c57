"""Which window an evaluation gets (Qt-free): a researcher's, or a curator's.

A benchmark, or a collection whose artworks have several photos, has ground truth: its
window shows the research tool — the metrics' columns (AP, P@1, positives, first
positive), the filters by failure and by AP, the method, protocol and conventions bar, the
PR curve and AP histogram, the corrections of its labels, each match's rank and score.

A curator's collection of one photo per artwork has none
(:func:`~irviewer.view.result_list.judged_anywhere`): every one of those would be empty
("—", an empty plot, "Failures only" of nothing) or beside the point. Its window is the
one a curator needs: the artworks with their titles, each one's photo with the artworks
most like it (titles under the tiles, no numbers), and a visitor's photo with irviewer's
answer, its matches shown plainly (no grey "?": nothing was asked to be judged). The
window (and presentation mode, and the photo search) read this layout; none of them
decides it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from irviewer.core.dataset import Dataset
from irviewer.core.errors import counted
from irviewer.core.evaluation import Evaluation
from irviewer.formats.collection import NAME as COLLECTION
from irviewer.view.result_list import judged_anywhere


@dataclass(frozen=True)
class WindowLayout:
    """What the window shows of an evaluation.

    Attributes:
        research: the research tool's parts (metrics columns, failure and AP filters, the
            method/protocol/conventions bar, the plots, the label corrections, the legend
            of relevance, the "show ignored items" switch).
        items: what the list's rows are, in the plural ("queries", "artworks").
        first_column: the header of the list's name column ("Query", "Artwork").
        tile_numbers: a tile's rank and score under it (else its title), and the slides'
            numbers under each match (M in presentation mode).
        photo_judged: whether a visitor's photo's matches wait to be judged (the grey "?"
            and the "Colour as" picker), or are shown plainly.
        click_hint: what clicking a result does, in words.
    """

    research: bool
    items: str
    first_column: str
    tile_numbers: bool
    photo_judged: bool
    click_hint: str

    def filter_hint(self) -> str:
        """Return the placeholder of the list's filter box."""
        return f"Filter {self.items} by name or title…  (Ctrl+F)"

    def count(self, shown: int, total: int) -> str:
        """Return the line under the list: "22 of 22 artworks shown"."""
        return f"{shown:,} of {total:,} {self.items} shown"


#: The research tool's window (a benchmark; a collection with several photos of an artwork).
RESEARCH = WindowLayout(True, "queries", "Query", True, True,
                        "Click a result to compare it with the query")
#: The curator's window (a collection of one photo per artwork: no ground truth at all).
CURATOR = WindowLayout(False, "artworks", "Artwork", False, False,
                       "Click an artwork to see it beside this one")


def window_layout(evaluation: Evaluation | None) -> WindowLayout:
    """Return the window ``evaluation`` gets: :data:`CURATOR` when it has no ground truth
    anywhere (a curator's collection of one photo per artwork, whatever its corrections),
    else :data:`RESEARCH` (also before anything is open)."""
    if evaluation is None or judged_anywhere(evaluation):
        return RESEARCH
    return CURATOR


def opened_line(dataset: Dataset, methods: Sequence[str]) -> str:
    """Return the status line that says what was opened: "Oxford5k: 55 queries, 5,063
    gallery images, a.npz, b.npz"; for a curator's collection, its artworks and photos
    ("Our collection: 22 artworks, 22 photos"), its one descriptor file being the
    collection's own."""
    if dataset.format != COLLECTION:
        return (f"{dataset.label()}: {dataset.n_queries:,} queries, {dataset.n_gallery:,} "
                f"gallery images, {', '.join(methods)}")
    labels = dataset.gallery_labels
    artworks = dataset.n_gallery if labels is None else len(set(labels.tolist()))
    return (f"{dataset.label()}: {counted(artworks, 'artwork')}, "
            f"{counted(dataset.n_gallery, 'photo')}")
