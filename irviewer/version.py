"""irviewer's version: one string, read by the package (``irviewer.__version__``), by every
report that names the version that wrote it, and by the build (``pyproject.toml``)."""

__version__ = "0.1.0"
