"""Relevance colours and badges: the Okabe-Ito palette, readable with colour-blindness, and a
badge shape for every state so colour is never the only cue."""

from __future__ import annotations

from irviewer.core.evaluation import IGNORED, NEGATIVE, POSITIVE

#: A display state only (the core's code is IGNORED): re-identification removes the same
#: person seen by the query's own camera, and the tile says so.
SAME_CAMERA = 3

#: relevance code -> (frame colour, badge glyph, label)
RELEVANCE = {
    POSITIVE: ("#009E73", "✓", "relevant"),
    NEGATIVE: ("#D55E00", "✗", "not relevant"),
    IGNORED: ("#999999", "–", "ignored (junk, the query itself)"),
    SAME_CAMERA: ("#CC79A7", "=", "ignored: same person, same camera"),
}
QUERY_BOX = "#0072B2"
MEAN_CURVE = "#999999"
QUERY_CURVE = "#0072B2"
BAR = "#9ecae1"          # AP histogram bars
SELECTED_BAR = "#0072B2"  # the selected query's bin
ACTIVE_BAR = "#E69F00"    # the bin the table is filtered to


def legend_html(same_camera: bool = False) -> str:
    """Return the legend shown under the results: badge, colour and meaning per state (the
    same-camera state only for datasets that have it)."""
    parts = [f'<span style="color:{c}; font-weight:bold">{g}</span> {label}'
             for code, (c, g, label) in RELEVANCE.items()
             if code != SAME_CAMERA or same_camera]
    return " &nbsp;&nbsp; ".join(parts)
CMC_CURVE = "#009E73"     # the CMC curve (alone on its plot)
