"""The window's colours, read from the one palette (:mod:`irviewer.view.palette`), and the
relevance badges: a badge shape for every state, so colour is never the only cue."""

from __future__ import annotations

from irviewer.core.evaluation import IGNORED, NEGATIVE, POSITIVE
from irviewer.view import palette
from irviewer.view.result_list import SAME_CAMERA, UNJUDGED

__all__ = ["RELEVANCE", "SAME_CAMERA", "legend_html"]

#: badge (a relevance code or SAME_CAMERA) -> (frame colour, badge glyph, label)
RELEVANCE = {
    POSITIVE: (palette.RELEVANT, "✓", "relevant"),
    NEGATIVE: (palette.NOT_RELEVANT, "✗", "not relevant"),
    IGNORED: (palette.IGNORED, "–", "ignored"),
    SAME_CAMERA: (palette.SAME_CAMERA, "=", "ignored: same person, same camera"),
    UNJUDGED: (palette.UNJUDGED, "?", "not judged: no ground truth"),
}
QUERY_BOX = palette.SELECTED
MEAN_CURVE = palette.MEAN_CURVE
QUERY_CURVE = palette.SELECTED
BAR = palette.HISTOGRAM_BAR  # AP histogram bars
SELECTED_BAR = palette.SELECTED  # the selected query's bin
ACTIVE_BAR = palette.ACTIVE  # the bin the table is filtered to


def legend_html(ignored: list[str] | tuple[str, ...] = (),
                badges: tuple[int, ...] = ()) -> str:
    """Return the legend shown with the results: badge, colour and meaning per state. The
    plain "ignored" state names what the protocol ignores (``ignored``, in words; left out
    when it ignores nothing); ``badges`` adds own-badge states (SAME_CAMERA) it can show."""
    parts = []
    for code, (colour, glyph, label) in RELEVANCE.items():
        if code == IGNORED:
            if not ignored:
                continue
            label = f"ignored ({', '.join(ignored)})"
        elif code not in (POSITIVE, NEGATIVE) and code not in badges:
            continue
        parts.append(f'<span style="color:{colour}; font-weight:bold">{glyph}</span> {label}')
    return " &nbsp;&nbsp; ".join(parts)
