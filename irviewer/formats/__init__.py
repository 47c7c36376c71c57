"""Readers for benchmark and descriptor files (no Qt); see :mod:`irviewer.formats.registry`."""
