"""What presentation mode shows, Qt-free: one *slide* per query — the query large
with its title and artist, its top N matches — and the same for a visitor's photo searched
against the gallery. A slide is built from the inspector's own view model
(:func:`~irviewer.view.result_list.result_list`, :func:`~irviewer.view.result_list.query_header`),
so a tile shows the same thing in both places; the presentation only leaves things out.

A photo has no ground truth: its matches are :data:`~irviewer.view.result_list.UNJUDGED`
until the user says which painting it shows; then a match is relevant when its instance
label is that painting's (the instance sets' rule, CLICIDE: same instance label). What the
photo *is* is irviewer's answer (:class:`irviewer.collection.answer.Answer`): a statement on
the slide ("This is …" or "Not in this collection", the matches then headed "closest").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from irviewer.collection.answer import Answer, one_of
from irviewer.collection.photo_search import method_extractor
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.core.evaluation import NEGATIVE, POSITIVE, Evaluation
from irviewer.opening.opener import Opened
from irviewer.view.result_list import (
    PLAIN,
    UNJUDGED,
    QueryHeader,
    ResultList,
    ResultTile,
    query_header,
    result_list,
)

#: How many matches a slide shows unless the user's setting says otherwise.
DEFAULT_TOP_N = 5
TOP_N_RANGE = (1, 10)
#: Seconds between slides in the slideshow unless the user's setting says otherwise.
DEFAULT_INTERVAL_S = 8
INTERVAL_RANGE_S = (1, 600)
#: Seconds without input before a kiosk goes back to the slideshow, unless set otherwise.
DEFAULT_IDLE_S = 60
IDLE_RANGE_S = (5, 3600)

#: The separator of the demo's titles ("Mona Lisa, c. 1503–19 — Leonardo da Vinci").
TITLE_ARTIST_SEPARATOR = " — "


@dataclass(frozen=True)
class Caption:
    """How a painting is named on a slide: the work (``title``, never empty: the file stem
    when the dataset has no title), the ``artist`` ("" when unknown), the image name, and
    its ``details`` in one line (year, room, ...; "" without any)."""

    title: str
    artist: str
    name: str
    details: str = ""


def caption(title: str, name: str, details: str = "") -> Caption:
    """Return the caption of an image titled ``title`` (the dataset's ``title`` column),
    named ``name``, with ``details``: "Work — Artist" is split at its last " — " into work
    and artist (the demo's titles); a title without the separator is the work alone; no
    title gives the file's stem ("leonardo_mona-lisa_d2")."""
    title = title.strip()
    if not title:
        return Caption(Path(name).stem, "", name, details)
    work, sep, artist = title.rpartition(TITLE_ARTIST_SEPARATOR)
    if not sep or not work.strip() or not artist.strip():
        return Caption(title, "", name, details)
    return Caption(work.strip(), artist.strip(), name, details)


@dataclass(frozen=True)
class Slide:
    """One screen of presentation mode.

    Attributes:
        query: the query's position in the dataset, or None for a visitor's photo.
        query_caption: how the query (or "Your photo") is named.
        query_path: its image file (None when unknown); ``query_box`` the benchmark's box.
        metrics: the query's numbers in plain words ("AP 83.1 · P@1 100 · 4 positives"),
            shown only when the user asks for metrics; "" for an unjudged photo.
        tiles: the top matches, best first, exactly as the inspector's result list has them.
        captions: one caption per tile.
        judged: False when the tiles carry no relevance (a photo nobody has identified, an
            artwork of a curator's collection with one photo): then no relevance frame is
            drawn whatever the R key says.
        matches_heading: what the matches are headed with ("" for the usual heading):
            a photo answered "not in this collection" shows its closest artworks.
        query_label, matches_label: the words over the query and over the matches ("THE
            QUERY" / "WHAT THE SYSTEM FINDS" for a benchmark's query; "THIS ARTWORK" /
            "MORE LIKE THIS" for an artwork of a collection that has no ground truth).
        tile_numbers: whether the numbers (M) include each match's rank and score: not
            where nothing is judged (a collection's artwork with one photo, a visitor's
            photo in a curator's collection).
    """

    query: int | None
    query_caption: Caption
    query_path: Path | None
    query_box: tuple[float, float, float, float] | None
    metrics: str
    tiles: tuple[ResultTile, ...]
    captions: tuple[Caption, ...]
    judged: bool
    matches_heading: str = ""
    query_label: str = "THE QUERY"
    matches_label: str = "WHAT THE SYSTEM FINDS"
    tile_numbers: bool = True


#: The words over an artwork of a curator's collection that has no ground truth, and over
#: its matches: a visitor browsing the collection sees similar artworks, not a test.
BROWSING_LABELS = ("THIS ARTWORK", "MORE LIKE THIS")


def plain(rich: str) -> str:
    """Return rich text (the inspector's header) as plain words: tags dropped, ``&nbsp;``
    runs as " · "."""
    text = re.sub(r"(?:\s*&nbsp;\s*)+", " · ", rich)
    return re.sub(r"<[^>]+>", "", text).strip()


def query_slide(evaluation: Evaluation, q: int, top_n: int = DEFAULT_TOP_N) -> Slide:
    """Return query ``q``'s slide: its header and its first ``top_n`` ranked results (the
    protocol's ignored items left out, as the inspector lists them by default). A query
    without ground truth (an artwork of a curator's collection with one photo) is shown as
    "more like this": no frames, no numbers, :data:`BROWSING_LABELS`."""
    header = query_header(evaluation, q)
    result = result_list(evaluation, q, top_n, show_ignored=False)
    slide = _slide(header, result, judged=result.judged)
    if result.judged:
        return slide
    return replace(slide, metrics="", query_label=BROWSING_LABELS[0],
                   matches_label=BROWSING_LABELS[1], tile_numbers=False)


def _slide(header: QueryHeader, result: ResultList, judged: bool) -> Slide:
    return Slide(
        query=header.query if header.query >= 0 else None,
        query_caption=caption(header.title, header.image, header.details),
        query_path=header.path, query_box=header.box, metrics=plain(header.metrics),
        tiles=result.tiles,
        captions=tuple(caption(t.title, t.name, t.details) for t in result.tiles),
        judged=judged)


def photo_result(dataset: Dataset, photo: Path, matches: list | tuple,
                 instance: str | None = None, answer: Answer | None = None,
                 plain: bool = False) -> tuple[QueryHeader, ResultList]:
    """Return the header and result list of a visitor's ``photo`` searched against the
    gallery (``matches`` best first: :class:`irviewer.collection.matches.Match`).

    Without ``instance`` nobody has said which painting the photo shows: every match is
    UNJUDGED (with the :data:`~irviewer.view.result_list.PLAIN` badge when ``plain``: a
    curator's window, where nothing waits to be judged), and the header says irviewer's
    ``answer`` (what it rests on beside it) when there is one. With it, a match is relevant
    when its instance label is ``instance`` and not relevant otherwise (no AP: the gallery
    is not searched exhaustively for the other views)."""
    tiles = []
    for m in matches:
        code = UNJUDGED if instance is None else (
            POSITIVE if m.instance == instance else NEGATIVE)
        badge = PLAIN if plain and instance is None else code
        tiles.append(ResultTile(int(m.gallery_index), m.item, m.title,
                                dataset.image_paths.get(m.item), int(m.rank), int(m.rank),
                                float(m.score), code, badge,
                                details=dataset.details_line(m.item)))
    if instance is None and answer is not None:
        title, words = answer.sentence(), answer.evidence()
    elif instance is None:
        title, words = "Your photo", "No ground truth: the matches are not coloured"
    else:
        shown = instance_titles(dataset).get(instance, instance)
        title = f"Your photo of {shown}"
        right = sum(t.relevance == POSITIVE for t in tiles)
        first = "right" if tiles and tiles[0].relevance == POSITIVE else "wrong"
        words = (f"First match {first} &nbsp; {right} of the top {len(tiles)} are this "
                 "painting")
    header = QueryHeader(-1, Path(photo).name, title, str(photo), Path(photo), None, words)
    result = ResultList(-1, len(tiles), False, tuple(tiles), len(tiles), False, (), None,
                        judged=not (plain and instance is None))  # plain: "more like this"
    return header, result


def photo_slide(dataset: Dataset, photo: Path, matches: list | tuple,
                instance: str | None = None, answer: Answer | None = None,
                plain: bool = False) -> Slide:
    """Return the slide of a visitor's photo (see :func:`photo_result`); its caption is the
    painting the user named, else irviewer's answer as a statement (:func:`answer_caption`),
    else "Your photo". ``plain`` (a curator's collection): the numbers (M) show no match's
    rank and score."""
    header, result = photo_result(dataset, photo, matches, instance)
    slide = _slide(header, result, judged=instance is not None)
    heading = ""
    if instance is not None:
        named = caption(instance_titles(dataset).get(instance, instance), instance)
    elif answer is not None:
        named = answer_caption(answer, header.name)
        heading = "" if answer.named is not None else "NOT IN THIS COLLECTION · THE CLOSEST"
    else:
        named = Caption("Your photo", "", header.name)
    return Slide(None, named, slide.query_path, None,
                 slide.metrics if instance is not None else "", slide.tiles, slide.captions,
                 slide.judged, heading, tile_numbers=not plain)


def answer_caption(answer: Answer, name: str) -> Caption:
    """Return the caption that says ``answer`` under a visitor's photo: "This is WORK" over
    its artist, or "Not in this collection" over "Closest: A; B; C" (the works alone: the
    matches beside it name their artists)."""
    if answer.named is not None:
        named = caption(answer.named.title, answer.named.item)
        if answer.also:  # one picture filed as several artworks: every title, one artist
            also = [caption(title, a) for a, title in answer.also]
            works = list(dict.fromkeys([named.title, *(c.title for c in also)]))
            artists = list(dict.fromkeys(c.artist for c in (named, *also) if c.artist))
            return Caption(f"This is {one_of(works)}", " / ".join(artists), name)
        return Caption(f"This is {named.title}", named.artist, name)
    closest = [caption(title, title).title for title in answer.closest()]
    return Caption("Not in this collection",
                   f"Closest: {'; '.join(closest)}" if closest else "", name)


def instance_titles(dataset: Dataset) -> dict[str, str]:
    """Return instance label -> display title (the first titled gallery image of that
    instance; the label itself when none is titled), in label order: the choices of the
    "This is…" picker."""
    labels = dataset.gallery_labels
    if labels is None:
        return {}
    out: dict[str, str] = {}
    for name, label in zip(dataset.gallery, labels, strict=True):
        label = str(label)
        if label and (label not in out or out[label] == label):
            out[label] = dataset.titles.get(name, "") or out.get(label, "") or label
    return dict(sorted(out.items()))


def neighbour(order: list[int], current: int | None, step: int) -> int | None:
    """Return the query ``step`` places from ``current`` in ``order`` (the inspector's list
    as sorted and filtered), wrapping round at either end (a slideshow loops); the first
    (step > 0) or last query when ``current`` is not in the list; None for an empty list."""
    if not order:
        return None
    if current not in order:
        return order[0] if step >= 0 else order[-1]
    return order[(order.index(current) + step) % len(order)]


def searchable_methods(opened: Opened) -> list[str]:
    """Return the methods of ``opened`` a photo can be searched with: descriptor files that
    name the extractor that made them
    (:func:`irviewer.collection.photo_search.method_extractor`)."""
    out = []
    for name, method in opened.methods.items():
        try:
            if method_extractor(method) is not None:
                out.append(name)
        except InputError:  # a bad extractor member: not searchable, said when tried
            continue
    return out


def no_search_sentence(method: str, searchable: list[str]) -> str:
    """Return the sentence said when ``method`` cannot search by photo: which methods can
    (or that none of the open ones can, and how a descriptor file says its extractor)."""
    if searchable:
        return (f"{method} cannot search with a photo (its descriptor file names no "
                f"extractor); choose {' or '.join(searchable)} in the Method box")
    return (f"{method} cannot search with a photo, nor can any open method: a descriptor "
            "file must name the extractor that made it (an 'extractor' member in the .npz, "
            "see docs/search.md)")
