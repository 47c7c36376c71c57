"""Every colour irviewer paints with, in one place (Qt-free): the window (through
:mod:`irviewer.gui.theme`), the presentation's slides and the exported figures read these.

Relevance states use the Okabe-Ito palette (Okabe & Ito, "Color Universal Design", 2008),
readable with colour-blindness, and each state also has a badge shape, so colour is never the
only cue. A gain and a loss (compare mode: ΔAP, the scatter, the rank marks) are one pair,
green and orange as the relevance states, dark enough to be read as text on white and under
white text. Colours are ``#rrggbb`` strings, as Qt's ``QColor`` and style sheets take them.
"""

from __future__ import annotations

# -- relevance (Okabe-Ito) ----------------------------------------------------------------
RELEVANT = "#009E73"
NOT_RELEVANT = "#D55E00"
IGNORED = "#999999"
SAME_CAMERA = "#CC79A7"
UNJUDGED = "#8A8F98"

# -- what is selected, the mean, the histogram ---------------------------------------------
#: The query shown: its box, its curve, its histogram bin, the photo bar's frame.
SELECTED = "#0072B2"
#: Opacity (0-255) of the area under the query's PR curve, in :data:`SELECTED`.
SELECTED_FILL_ALPHA = 40
#: The bin the query table is filtered to; the frame of a banner that asks for attention.
ACTIVE = "#E69F00"
MEAN_CURVE = IGNORED
HISTOGRAM_BAR = "#9ecae1"

# -- compare mode: one gain / loss pair ----------------------------------------------------
GAIN = "#0b6e4f"
LOSS = "#b33c00"
TIE = IGNORED

# -- text and surfaces on white --------------------------------------------------------------
WHITE = "#ffffff"
TEXT = "#222222"
MUTED_TEXT = "#555555"
#: A sentence that refuses or warns (a bad option in a dialog, a query the filter hides).
ALERT_TEXT = LOSS
#: Axis text and ticks of the plots; a rank mark without a direction.
PLOT_INK = "#333333"
#: Behind a result's picture (a tile, a figure's cell).
TILE_PAPER = "#f4f2ee"
#: The label-correction mark's disc.
MARK_FILL = "#1a1a1a"
#: Rows of the review queue already decided.
REVIEWED = "#808080"
DETAIL_BACKGROUND = "#f6f6f6"
DETAIL_BORDER = "#cccccc"
BANNER_BACKGROUND = "#FFF3CD"
BANNER_TEXT = "#5C4400"
PHOTO_BAR_BACKGROUND = "#E8F1F8"

#: Grid lines of a painted figure (the approximate-search sweep's).
FIGURE_GRID = "#d0d0d0"

# -- dark surfaces: the side-by-side view and the presentation ------------------------------
VIEWER_BACKGROUND = "#2b2b2b"
VIEWER_TEXT = "#dddddd"
SLIDE_BACKGROUND = "#121212"
SLIDE_PANEL = "#1E1E1E"
SLIDE_TEXT = "#F2EFE9"
SLIDE_DIM = "#9A968F"
SLIDE_FAINT = "#5E5B57"
