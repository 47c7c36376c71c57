"""Descriptor extractors: what turns a photo into the vector a descriptor file holds (Qt-free).

An extractor has a ``name``, an output dimension ``dim`` and is called with a PIL image to
return one float32 vector (:class:`~irviewer.extract.base.Extractor`). Extractors are found
by name in the entry-point group ``irviewer.extractors`` (:mod:`irviewer.extract.registry`);
irviewer's own, the museum demo's VLAD descriptor, is :mod:`irviewer.extract.vlad`.
"""
