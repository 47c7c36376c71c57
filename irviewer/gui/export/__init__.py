"""File ▸ Export figure: the dialog (:mod:`.dialog`) and the painter that writes a figure
layout as PDF, SVG or PNG (:mod:`.figure_painter`, also used by ``irviewer figure``)."""
