"""The opening layer (Qt-free): one way to open data for every command and the window.

:mod:`~irviewer.opening.opener` reads a dataset and its methods, ranks and scores them (a
cancellable generator); :mod:`~irviewer.opening.request` says what to open;
:mod:`~irviewer.opening.session_file` reads and writes the window's ``.irv`` sessions.
Above :mod:`irviewer.core`, :mod:`irviewer.formats` and :mod:`irviewer.extract`; below a
curator's collections (:mod:`irviewer.collection`), the reports, the view models, the
command line and the window.
"""
