"""Methods (Qt-free): what a method is (:mod:`.spec`: one typed value for every kind — a
descriptor file, a precomputed ranking, a re-ranked, approximate or vector-engine method —
with its derivation, depth and tie rule), the one pipeline that makes them
(:mod:`.making`), a method made (:mod:`.method`), and the window's additions of derived
methods to methods already made (:mod:`.reranked`, :mod:`.searched`).

Above :mod:`irviewer.formats` (it reads descriptor files and rankings); below
:mod:`irviewer.opening`, whose request plans the methods and whose opener makes and scores
them.
"""
