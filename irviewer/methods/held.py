"""A method's data held in memory instead of a file (:class:`Held`): the vectors or the score
matrix a caller gives from Python (:mod:`irviewer.api`), which the one pipeline
(:mod:`irviewer.methods.making`) makes into a method exactly as it makes a file's.

Vectors are held as the arrays of a descriptor archive would be (``features`` + ``names``,
or ``queries`` + ``gallery`` with ``query_names`` / ``gallery_names``), so rows without names
follow the dataset's order by the same rule as a file's rows
(:func:`irviewer.formats.descriptor_files.descriptors_of_arrays`). A score matrix has one
row per query and one column per gallery image, both in the dataset's order; it is ranked
by :func:`irviewer.core.ranking.iter_rank_rows` as every score row made elsewhere is.

Nothing here copies the arrays: ranking reads them as they are (a float64 gallery is
converted chunk by chunk, as a file's is). Their sha256 is that of the numeric arrays' bytes
in C order (``array.tobytes()``), the queries' before the gallery's; names are not hashed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from threading import Thread

import numpy as np

#: How a score matrix orders the gallery: higher scores first (similarities) or lower first
#: (distances, as torchreid's ``distmat``).
HIGHER_FIRST, LOWER_FIRST = "higher first", "lower first"


def arrays_sha256(arrays: Mapping[str, np.ndarray]) -> Future[str]:
    """Return the future hex sha256 of the bytes of the numeric ``arrays`` (each in C
    order, as ``array.tobytes()``, in the mapping's order; name arrays are left out),
    computed in a thread (hashlib releases the GIL), so that a large gallery is hashed
    while it is ranked."""
    future: Future[str] = Future()
    items = [a for a in arrays.values() if a.dtype.kind in "biuf"]

    def run() -> None:
        try:
            h = hashlib.sha256()
            for a in items:
                h.update(np.ascontiguousarray(a).data)
            future.set_result(h.hexdigest())
        except BaseException as e:  # handed to whoever asks for the digest
            future.set_exception(e)

    Thread(target=run, name="sha256 of arrays", daemon=True).start()
    return future


@dataclass(frozen=True, eq=False)
class Held:
    """The data of a method held in memory.

    ``arrays`` are a descriptor archive's members (vectors and their names) when ``kind``
    is ``"descriptors"``; the one member ``scores`` (n_queries, n_gallery) when it is
    ``"scores"``, with ``order`` saying whether higher or lower values rank first.
    ``digest`` is the future sha256 of the arrays' bytes (:func:`arrays_sha256`);
    ``notes`` are sentences about the data for the user (a GPU tensor copied to the host);
    ``copied_from`` the devices the arrays were copied from to the host (none: read in
    place).
    Compared by identity: two holders of equal arrays are two methods.
    """

    kind: str
    arrays: Mapping[str, np.ndarray]
    digest: Future[str] = field(repr=False)
    order: str = HIGHER_FIRST
    notes: tuple[str, ...] = ()
    copied_from: tuple[str, ...] = ()

    @property
    def copied(self) -> bool:
        """Return True when an array was copied to the host (it lived on a GPU)."""
        return bool(self.copied_from)

    @property
    def names(self) -> tuple[str, ...] | None:
        """Return the names of the gallery (or only) table's rows, None when the vectors
        carry none (the rule of :func:`irviewer.formats.descriptor_files.descriptor_names`)."""
        for key in ("gallery_names", "names"):
            if key in self.arrays:
                return tuple(str(n) for n in self.arrays[key].tolist())
        return None

    @property
    def scores(self) -> np.ndarray:
        """Return the score matrix (a method of kind ``"scores"``)."""
        return self.arrays["scores"]


def held_vectors(arrays: Mapping[str, np.ndarray], notes: tuple[str, ...] = (),
                 copied_from: tuple[str, ...] = ()) -> Held:
    """Return vectors held in memory: ``arrays`` keyed as a descriptor archive's members."""
    return Held("descriptors", dict(arrays), arrays_sha256(arrays), notes=notes,
                copied_from=copied_from)


def held_scores(matrix: np.ndarray, order: str = HIGHER_FIRST, notes: tuple[str, ...] = (),
                copied_from: tuple[str, ...] = ()) -> Held:
    """Return a (queries, gallery) score matrix held in memory, ``order`` saying which
    values rank first."""
    return Held("scores", {"scores": matrix}, arrays_sha256({"scores": matrix}), order, notes,
                copied_from)


__all__ = ["HIGHER_FIRST", "LOWER_FIRST", "Held", "arrays_sha256", "held_scores",
           "held_vectors"]
