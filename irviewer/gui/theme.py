"""Relevance colours and badges: the Okabe-Ito palette, readable with colour-blindness, and a
badge shape for every state so colour is never the only cue."""

from __future__ import annotations

from irviewer.core.evaluation import IGNORED, NEGATIVE, POSITIVE
from irviewer.view.result_list import PLAIN, SAME_CAMERA, UNJUDGED

__all__ = ["RELEVANCE", "SAME_CAMERA", "legend_html"]

#: badge (a relevance code or SAME_CAMERA) -> (frame colour, badge glyph, label)
RELEVANCE = {
    POSITIVE: ("#009E73", "✓", "relevant"),
    NEGATIVE: ("#D55E00", "✗", "not relevant"),
    IGNORED: ("#999999", "–", "ignored"),
    SAME_CAMERA: ("#CC79A7", "=", "ignored: same person, same camera"),
    UNJUDGED: ("#8A8F98", "?", "not judged: no ground truth"),
    PLAIN: ("#D8D4CC", "", "shown plainly: nothing to judge it by"),
}
QUERY_BOX = "#0072B2"
MEAN_CURVE = "#999999"
QUERY_CURVE = "#0072B2"
BAR = "#9ecae1"          # AP histogram bars
SELECTED_BAR = "#0072B2"  # the selected query's bin
ACTIVE_BAR = "#E69F00"    # the bin the table is filtered to


def legend_html(ignored: list[str] | tuple[str, ...] = (),
                badges: tuple[int, ...] = (), judged: bool = True) -> str:
    """Return the legend shown with the results: badge, colour and meaning per state. The
    plain "ignored" state names what the protocol ignores (``ignored``, in words; left out
    when it ignores nothing); ``badges`` adds own-badge states (SAME_CAMERA) it can show.
    Nothing when no result can be judged (``judged`` False: a collection of one photo per
    artwork shows no frames, so there is nothing to explain)."""
    if not judged:
        return ""
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
