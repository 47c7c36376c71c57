"""The vectors and the score matrix given from Python: which were given, checked, and held
in memory as a method's data (:mod:`irviewer.methods.held`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from irviewer.api.arrays import HostArray, matrix, names_of
from irviewer.api.errors import ArgumentError
from irviewer.api.given import Given
from irviewer.core.errors import counted


def vectors_given(given: Given) -> str | None:
    """Return which vectors were given ("embeddings" or "queries"), None for none;
    ArgumentError when both kinds are, or one of queries / gallery alone."""
    if given.embeddings is not None:
        both = [k for k in ("queries", "gallery") if getattr(given, k) is not None]
        if both:
            raise ArgumentError(both[0], f"{both[0]}: give embeddings (every image's vectors) "
                                "or queries and gallery, not both")
        for key in ("query_names", "gallery_names"):
            if getattr(given, key) is not None:
                raise ArgumentError(key, f"{key}: names the rows of queries= and gallery=; "
                                    "the rows of embeddings are named by names=")
        return "embeddings"
    if (given.queries is None) != (given.gallery is None):
        missing = "gallery" if given.gallery is None else "queries"
        raise ArgumentError(missing, f"{missing}: queries and gallery go together; give "
                            f"{missing}= too (or every image's vectors as embeddings=)")
    return "queries" if given.queries is not None else None


def matrix_given(given: Given) -> str | None:
    if given.scores is not None and given.distances is not None:
        raise ArgumentError("distances", "distances: give scores (higher first) or distances "
                            "(lower first), not both")
    return "scores" if given.scores is not None else (
        "distances" if given.distances is not None else None)


def vectors_held(given: Given, rows: str, copies: Copies) -> tuple[dict[str, np.ndarray],
                                                                      list[str]]:
    """Return the vectors as a descriptor archive's members (and their names when given),
    checked; ``rows`` says which argument holds them. A copy to the host is
    recorded in ``copies``."""
    if rows == "embeddings":
        found = matrix(given.embeddings, "embeddings")
        copies.add(found, "embeddings")
        arrays = {"features": found.array}
        if given.names is not None:
            arrays["names"] = names_of(given.names, "names", len(found.array),
                                       "rows of embeddings")
        return arrays, ["embeddings"]
    q = matrix(given.queries, "queries")
    g = matrix(given.gallery, "gallery")
    for h, key in ((q, "queries"), (g, "gallery")):
        copies.add(h, key)
    if q.array.shape[1] != g.array.shape[1]:
        raise ArgumentError("gallery", f"gallery: {g.array.shape[1]:,}-d vectors, but the "
                            f"queries are {q.array.shape[1]:,}-d; give both from one model")
    arrays = {"queries": q.array, "gallery": g.array}
    for key, n, what in (("query_names", len(q.array), "queries"),
                         ("gallery_names", len(g.array), "gallery")):
        value = getattr(given, key)
        if value is not None:
            arrays[key] = names_of(value, key, n, f"rows of {what}")
    return arrays, ["queries", "gallery"]


@dataclass
class Copies:
    """The arrays copied from a GPU to the host: the sentence saying so for each, and the
    devices they came from (what a :class:`~irviewer.methods.held.Held` records)."""

    notes: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)

    def add(self, found: HostArray, argument: str) -> None:
        """Record ``found``, the array of ``argument``, when it was copied."""
        said = found.note(argument)
        if said is not None and found.device is not None:
            self.notes.append(said)
            self.devices.append(found.device)

    def said(self) -> dict[str, tuple[str, ...]]:
        """Return the keywords of :func:`~irviewer.methods.held.held_vectors` and
        :func:`~irviewer.methods.held.held_scores` that record the copies."""
        return {"notes": tuple(self.notes), "copied_from": tuple(dict.fromkeys(self.devices))}


def score_matrix(given: Given, key: str, shape: tuple[int, int], copies: Copies
            ) -> np.ndarray:
    """Return the score or distance matrix, of ``shape`` (queries, gallery) in the dataset's
    order; ArgumentError naming ``key`` for another shape."""
    found = matrix(getattr(given, key), key, "scores")
    copies.add(found, key)
    if tuple(found.array.shape) != shape:
        raise ArgumentError(key, f"{key}: a matrix of shape {tuple(found.array.shape)}, but "
                            f"there are {counted(shape[0], 'query', 'queries')} and "
                            f"{counted(shape[1], 'gallery image')}; give one row per query "
                            "and one column per gallery image")
    return found.array


def method_name(given: Given, default: str) -> str:
    name = default if given.name is None else given.name
    if not isinstance(name, str) or not name.strip() or "/" in name or "\\" in name:
        raise ArgumentError("name", f"name: {name!r} cannot name a method; give a short text "
                            "without slashes")
    return name.strip()


__all__ = ["Copies", "matrix_given", "method_name", "score_matrix", "vectors_given",
           "vectors_held"]
