"""Searching a dataset's gallery with a new photo: "which painting is this?" (Qt-free).

The photo is described by the extractor that made the method's descriptor file (named by
the file's ``extractor`` member, :func:`~irviewer.formats.descriptor_files.descriptor_extractor`,
or chosen by the user) and the gallery is ranked for it exactly as for a dataset query:
cosine similarity of L2-normalised vectors, equal scores in gallery order
(:meth:`irviewer.core.ranking.Ranking.score_vector`, :func:`~irviewer.core.ranking.top_of_row`).
This is the CLICIDE use case (a visitor's photo of an artwork, matched against the museum's
reference views; Jégou et al. 2010 for VLAD retrieval).

A :class:`Searcher` is immutable and its extractor stateless, so ``searcher.search(photo)``
may run in a worker thread while the window stays responsive. ``irviewer search`` is its
command line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from irviewer.collection.answer import Answer, Verifier
from irviewer.collection.matches import Match
from irviewer.core.acceptance import DEFAULT_STRICTNESS, SHORTLIST
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError, either
from irviewer.core.ranking import top_of_row
from irviewer.extract.base import Extractor, describe, input_side
from irviewer.extract.illuminant import grey_edge_balanced
from irviewer.extract.local_features import PHOTO_KEYPOINTS, PHOTO_SIDE, local_features
from irviewer.extract.registry import installed_names, load_extractor
from irviewer.formats.base import ReadOptions
from irviewer.formats.descriptor_files import descriptor_extractor, descriptor_extractor_state
from irviewer.formats.image_files import read_rgb
from irviewer.opening.opener import Method, Opened, open_now
from irviewer.opening.request import OpenRequest, demo_paths

Photo = Path | str | Image.Image
#: The share of each side of a photo that its centre keeps (:meth:`Searcher.describe_views`).
CENTRE = 0.7


def method_extractor(method: Method) -> str | None:
    """Return the name of the extractor that made ``method``'s descriptor file, or None
    when the file names none or the method is a precomputed ranking (then search by photo
    needs the user to name one). InputError when the file's ``extractor`` member is bad."""
    if method.kind != "descriptors":
        return None
    return descriptor_extractor(method.path)


def photo_label(photo: Photo) -> str:
    """Return how messages and outputs name a photo: its path as given, or "the photo"."""
    return "the photo" if isinstance(photo, Image.Image) else str(photo)


@dataclass(frozen=True)
class Searcher:
    """A method's gallery, ready to be searched with photos by ``extractor``."""

    dataset: Dataset
    method: Method
    extractor: Extractor
    verifier: Verifier = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "verifier", Verifier.of(self.dataset))

    @classmethod
    def from_opened(cls, opened: Opened, method: str | None = None,
                    extractor: str | None = None) -> Searcher:
        """Return the searcher of ``method`` (a key of ``opened.methods``; None: the first).

        ``extractor`` names the extractor to describe photos with; None takes the one the
        descriptor file names, with what it learnt when the file names that too (a
        collection's vocabulary, :func:`descriptor_extractor_state`).
        InputError with one sentence when the method has no gallery vectors (a precomputed
        ranking), when no extractor is named anywhere (the sentence says how to name one),
        when the named one is not installed or what it learnt is missing, or when its
        vectors do not have the file's dimension.
        """
        m = opened.first if method is None else opened.methods[method]
        if m.rerank is not None:
            raise InputError(f"{m.name} is a re-ranked method: re-ranking depends on every "
                             "query, so a new photo cannot be scored by it; search with "
                             f"{m.name.split(' + ')[0]}, the plain method")
        if m.kind != "descriptors" or m.ranking.descriptors is None:
            raise InputError(f"{m.name} is a precomputed ranking: it has no gallery vectors "
                             "to compare a photo with; search with a descriptor file")
        recorded = method_extractor(m)
        name = extractor or recorded
        if name is None:
            give = either(f"give --extractor NAME (installed: {installed_names()}) or ", "",
                          "extractor")
            raise InputError(f"{m.path.name} does not name the extractor that made it; "
                             f"{give}store the name as an 'extractor' string in the .npz")
        state = descriptor_extractor_state(m.path) if name == recorded else None
        try:
            chosen = load_extractor(name, state)
        except InputError as e:
            if extractor is None:  # the file named it
                raise InputError(f"{m.path.name} was made by extractor {name!r}, which is not "
                                 f"available ({e}); install it"
                                 f"{either(' or give --extractor NAME', '', 'extractor')}"
                                 ) from None
            raise
        dim = m.ranking.descriptors.dim
        if chosen.dim != dim:
            raise InputError(f"extractor {chosen.name!r} makes {chosen.dim:,}-d vectors but "
                             f"{m.path.name} holds {dim:,}-d ones; give the extractor that "
                             "made the file")
        return cls(opened.dataset, m, chosen)

    def describe(self, photo: Photo) -> np.ndarray:
        """Return the photo's float32 descriptor (a file is decoded safely:
        :func:`~irviewer.formats.image_files.read_rgb`); InputError with one sentence for
        a missing, non-image, truncated or decompression-bomb file, or a blank photo."""
        image = photo if isinstance(photo, Image.Image) else \
            read_rgb(photo, input_side(self.extractor))[0]
        return describe(self.extractor, image, photo_label(photo))

    def describe_views(self, photo: Photo, label: str | None = None
                       ) -> list[list[np.ndarray]]:
        """Return the photo's descriptors, in two groups: the whole photo and its centre
        (the middle :data:`CENTRE` of each side, where a visitor puts the artwork, without
        the wall around it), each as taken and with the colour of the light divided out
        (:func:`~irviewer.extract.illuminant.grey_edge_balanced`). InputError as
        :meth:`describe`."""
        side = input_side(self.extractor)
        if isinstance(photo, Image.Image):  # reduced as a file is (read_rgb)
            image = photo.convert("RGB")
            if side is not None and max(image.size) > side:
                image.thumbnail((side, side))
        else:
            image = read_rgb(photo, side)[0]
        label = label or photo_label(photo)
        w, h = image.size
        mw, mh = round(w * (1 - CENTRE) / 2), round(h * (1 - CENTRE) / 2)
        centre = image.crop((mw, mh, w - mw, h - mh))
        return [[describe(self.extractor, view, label),
                 describe(self.extractor, grey_edge_balanced(view), label)]
                for view in (image, centre)]

    def rank(self, views: np.ndarray | list, k: int = 5) -> list[Match]:
        """Return the ``k`` best gallery matches, best first, of one descriptor vector, of
        one photo described several ways (a list of vectors: each gallery image scores its
        best cosine), or of groups of them (a list of lists: the mean over the groups of
        each group's best cosine; :meth:`describe_views`)."""
        groups = views if isinstance(views, list) and views and isinstance(views[0], list) \
            else [views if isinstance(views, list) else [views]]
        ranking = self.method.ranking
        row = None
        for group in groups:
            best = ranking.score_vector(group[0])
            for other in group[1:]:
                best = np.maximum(best, ranking.score_vector(other))
            row = best if row is None else row + best
        assert row is not None
        row = row / len(groups)
        indices, scores = top_of_row(row, k)
        ds = self.dataset
        labels = ds.gallery_labels
        return [Match(rank=r + 1, gallery_index=int(g), item=ds.gallery[g],
                      instance="" if labels is None else str(labels[g]),
                      title=ds.titles.get(ds.gallery[g], ""), score=float(s),
                      details=tuple(ds.details.get(ds.gallery[g], ())))
                for r, (g, s) in enumerate(zip(indices, scores, strict=True))]

    def search(self, photo: Photo, k: int = 5) -> list[Match]:
        """Return the ``k`` gallery images most similar to ``photo`` (a path or a PIL
        image), best first; InputError with one sentence for a photo that cannot be used
        (see :meth:`describe`). Safe to call from a worker thread.

        The photo is described whole and by its centre, each as taken and with the light's
        colour divided out (:meth:`describe_views`); a gallery image scores the mean over
        whole and centre of its better cosine. A visitor's photo under a warm lamp still
        finds its painting, and the wall around a painting weighs less
        (``tests/benchmarks/bench_index.py --compare`` prints the visitor photos found
        this way, described once as taken, and without the centre)."""
        if k < 1:
            raise InputError(f"the number of matches must be at least 1, not {k}")
        return self.rank(self.describe_views(photo), k)

    def answer(self, photo: Photo, k: int = 5, strictness: str = DEFAULT_STRICTNESS
               ) -> Answer:
        """Return the :class:`~irviewer.collection.answer.Answer` for ``photo``: the artwork
        it shows, verified geometrically against its best matches, or None ("not in this
        collection"), with its ``k`` best matches (see :meth:`search`). The photo is
        decoded once, at :data:`~irviewer.extract.local_features.PHOTO_SIDE` px for its
        local features (and reduced from that for the descriptor). InputError as
        :meth:`search`, and for an unknown ``strictness``. Safe from a worker thread."""
        if k < 1:
            raise InputError(f"the number of matches must be at least 1, not {k}")
        side = max(PHOTO_SIDE, input_side(self.extractor) or PHOTO_SIDE)
        if isinstance(photo, Image.Image):
            image = photo.convert("RGB")
            if max(image.size) > side:
                image.thumbnail((side, side))
        else:
            image = read_rgb(photo, side)[0]
        matches = self.rank(self.describe_views(image, photo_label(photo)), max(k, SHORTLIST))
        features = local_features(image, PHOTO_SIDE, PHOTO_KEYPOINTS)
        return self.verifier.answer(photo_label(photo), features, matches, k, strictness)


def open_searcher(dataset: Path, descriptors: Path | None = None, extractor: str | None = None,
                  format: str | None = None, options: ReadOptions | None = None) -> Searcher:
    """Return the searcher of a dataset and one descriptor file (None: the dataset's
    default, a collection's own), opened by the one opening path
    (:func:`irviewer.opening.opener.open_now`); see :meth:`Searcher.from_opened`."""
    request = OpenRequest(Path(dataset), () if descriptors is None else (Path(descriptors),),
                          format=format, options=options or ReadOptions(), k=1)
    return Searcher.from_opened(open_now(request), extractor=extractor)


def open_demo_searcher() -> Searcher:
    """Return the searcher of the built-in museum demo (its strong descriptor file)."""
    manifest, strong = demo_paths()
    return open_searcher(manifest, strong)
