"""Relevance colours and badges: the Okabe-Ito palette, readable with colour-blindness, and a
badge shape for every state so colour is never the only cue."""

from __future__ import annotations

from irviewer.core.evaluation import IGNORED, NEGATIVE, POSITIVE

#: relevance code -> (frame colour, badge glyph, label)
RELEVANCE = {
    POSITIVE: ("#009E73", "✓", "relevant"),
    NEGATIVE: ("#D55E00", "✗", "not relevant"),
    IGNORED: ("#999999", "–", "ignored (junk, same camera, the query itself)"),
}
QUERY_BOX = "#0072B2"
MEAN_CURVE = "#999999"
QUERY_CURVE = "#0072B2"


def legend_html() -> str:
    """Return the legend shown under the results: badge, colour and meaning per state."""
    parts = [f'<span style="color:{c}; font-weight:bold">{g}</span> {label}'
             for c, g, label in RELEVANCE.values()]
    return " &nbsp;&nbsp; ".join(parts)
