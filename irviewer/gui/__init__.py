"""The Qt viewer (PySide6 + pyqtgraph). The only package that imports Qt; no metric logic."""
