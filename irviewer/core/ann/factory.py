"""What irviewer checks in a FAISS index factory string before FAISS sees it.

FAISS trusts the numbers of a factory string: ``HNSW0`` stops the process on an assertion,
``HNSW1`` and ``RR0,Flat`` crash it, ``IVF99999999999,Flat`` overflows its integer parser,
``Pad99999999,Flat`` asks for gigabytes per vector and ``IVF100000000,Flat`` allocates a
hundred million lists before finding too few vectors to train them. The index is built in a
child process (:mod:`irviewer.core.ann.faiss_index`), which contains whatever FAISS does;
these checks come first so that the common mistakes get a sentence that says which number
is wrong, at once. They read the factory language's components by their names
(`the index factory <https://github.com/facebookresearch/faiss/wiki/The-index-factory>`_):
``IVF<nlist>``, ``IMI<M>x<nbits>``, ``HNSW<M>``, the transforms ``PCA<d>`` (``PCAW``,
``PCAR``, ``PCAWR``), ``OPQ<M>_<d>``, ``RR<d>``, ``ITQ<d>``, ``Pad<d>``, and ``IDMap``.
"""

from __future__ import annotations

import re

from irviewer.core.errors import InputError

#: The longest factory string irviewer passes to FAISS (the longest in FAISS's wiki is 40).
MAX_FACTORY_CHARS = 200
#: The most dimensions a transform of a factory string may output.
MAX_DIMENSIONS = 65_536
#: The largest number FAISS's factory parser reads (a C ``int``).
INT_MAX = 2**31 - 1
#: The fewest links per vector an HNSW graph takes (``HNSW1`` crashes FAISS).
MIN_HNSW_LINKS = 2

_CHARACTERS = re.compile(r"[A-Za-z0-9_,()+.]+")
_START = r"(?<![A-Za-z])"
_IDMAP = re.compile(_START + r"IDMap2?")
_TRANSFORM = re.compile(_START + r"(PCAWR|PCAW|PCAR|PCA|RR|ITQ|Pad)(\d+)")
_OPQ = re.compile(_START + r"OPQ(\d+)(?:_(\d+))?")
_IVF = re.compile(_START + r"IVF(\d+)")
_IMI = re.compile(_START + r"IMI(\d+)x(\d+)")
_HNSW = re.compile(_START + r"HNSW(\d+)")


def check_factory_text(factory: str, where: str) -> None:
    """Return None when the factory string ``factory`` may go to FAISS as far as its text
    says; InputError (one sentence beginning with ``where``) for a string longer than
    :data:`MAX_FACTORY_CHARS`, a character no factory string holds, ``IDMap`` (irviewer
    numbers the gallery itself), a number that is 0 or larger than FAISS reads, HNSW with
    fewer than :data:`MIN_HNSW_LINKS` links, or a transform to more than
    :data:`MAX_DIMENSIONS` dimensions."""
    if len(factory) > MAX_FACTORY_CHARS:
        raise InputError(f"{where}: a factory string of {len(factory):,} characters; FAISS's "
                         f"are short (IVF256,Flat, OPQ16_64,IVF1024,PQ16), so irviewer takes "
                         f"at most {MAX_FACTORY_CHARS}")
    bad = next((c for c in factory if not _CHARACTERS.fullmatch(c)), None)
    if bad is not None:
        raise InputError(f"{where}: {bad!r} is not part of FAISS's factory language (letters, "
                         "digits and , _ ( ) + .)")
    if _IDMAP.search(factory):
        raise InputError(f"{where}: irviewer numbers the gallery itself (FAISS id i is gallery "
                         "image i), so a factory string takes no IDMap; leave it out")
    for m in re.finditer(r"\d+", factory):
        number = int(m[0])
        if number == 0:
            raise InputError(f"{where}: a count of 0 ({_component(factory, m.start())}); "
                             "the numbers of a factory string are counts and dimensions, "
                             "from 1")
        if number > INT_MAX:
            raise InputError(f"{where}: {number:,} is larger than FAISS reads in a factory "
                             f"string (at most {INT_MAX:,})")
    for m in _HNSW.finditer(factory):
        if int(m[1]) < MIN_HNSW_LINKS:
            raise InputError(f"{where}: {m[0]} links each vector to {m[1]} neighbour; an HNSW "
                             f"graph needs at least {MIN_HNSW_LINKS} (HNSW32 is usual)")
    for name, dims in _outputs(factory):
        if dims > MAX_DIMENSIONS:
            raise InputError(f"{where}: {name} asks for {dims:,} dimensions; irviewer builds "
                             f"indexes of at most {MAX_DIMENSIONS:,}")


def check_factory_fits(factory: str, where: str, dim: int, n_train: int) -> None:
    """Return None when the factory string can be built over ``dim``-dimensional vectors
    trained on ``n_train`` of them; InputError (one sentence) when an inverted file asks
    for more lists than there are training vectors (FAISS's k-means needs one per list at
    least) or PCA for more dimensions than the vectors have."""
    for m in _IVF.finditer(factory):
        lists = int(m[1])
        if lists > n_train:
            raise InputError(f"{where}: FAISS cannot train this index on {n_train:,} gallery "
                             f"vectors: {m[0]} asks for {lists:,} inverted lists and k-means "
                             f"needs a training vector per list at least; use at most "
                             f"IVF{n_train} (FAISS suggests 39 vectors per list)")
    for m in _IMI.finditer(factory):
        per = 2 ** min(int(m[2]), 62)
        if per > n_train:
            raise InputError(f"{where}: FAISS cannot train this index on {n_train:,} gallery "
                             f"vectors: {m[0]} asks for {per:,} centroids per sub-quantizer, "
                             "more than there are training vectors")
    for name, dims in _outputs(factory):
        if name.startswith("PCA") and dims > dim:
            raise InputError(f"{where}: {name} asks PCA for {dims:,} dimensions of "
                             f"{dim:,}-dimensional vectors; PCA keeps at most {dim:,}")


def _outputs(factory: str) -> list[tuple[str, int]]:
    """Return (component, output dimension) of every transform of the factory string."""
    out = [(m[0], int(m[2])) for m in _TRANSFORM.finditer(factory)]
    out += [(m[0], int(m[2])) for m in _OPQ.finditer(factory) if m[2]]
    return out


def _component(factory: str, at: int) -> str:
    """Return the component of the factory string around position ``at`` (between commas)."""
    start = factory.rfind(",", 0, at) + 1
    end = factory.find(",", at)
    return factory[start:end if end >= 0 else len(factory)]


__all__ = ["INT_MAX", "MAX_DIMENSIONS", "MAX_FACTORY_CHARS", "MIN_HNSW_LINKS",
           "check_factory_fits", "check_factory_text"]
