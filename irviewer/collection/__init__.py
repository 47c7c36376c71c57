"""A curator's collection (Qt-free): indexing a folder of photos (:mod:`.indexing`, the
photos described in worker processes by :mod:`.describing`, the answers' rule calibrated by
:mod:`.calibration`), the curator's edits (:mod:`.curation`), a visitor's photo searched
(:mod:`.photo_search`) and answered (:mod:`.answer`, its matches :mod:`.matches`), and the
watched inbox of a kiosk (:mod:`.photo_inbox`).

Above the opening layer (a collection opens as a dataset with its descriptor file, through
:mod:`irviewer.opening`); below the view models, the command line and the window.
"""
