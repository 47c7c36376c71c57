"""Reports (Qt-free): the documents ``irviewer eval`` and ``irviewer compare`` print and
write (tables for people, JSON with a stable schema, per-query CSV). The window's exports
use them too."""
