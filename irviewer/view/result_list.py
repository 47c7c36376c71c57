"""What a query's result list shows: the ranked tiles (shown rank with ignored items hidden
or shown where they ranked, score, relevance and badge), the missed positives with their
ranks, and the words around them. Qt-free; the window, presentation mode, figure export and
the comparison strips paint it.

Ranks follow the evaluation's rule (:mod:`irviewer.core.evaluation`): ignored items are
removed before ranks are counted, so a shown rank is the rank the metric used; ``raw_rank``
is the place in the full ranking, before removals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from irviewer.core.convention_names import REMOVE
from irviewer.core.dataset import Dataset
from irviewer.core.evaluation import IGNORED, NEGATIVE, POSITIVE, Evaluation, query_roles
from irviewer.core.learning_metrics import AP_AT_R
from irviewer.core.protocols import Protocol
from irviewer.core.ranking import Ranking
from irviewer.core.ranking.listed import ListedRanking, outside_index
from irviewer.formats.collection import NAME as COLLECTION
from irviewer.view.answers_view import answers_words, left_out_words
from irviewer.view.ties_view import ap_tie_range

#: Badge kinds: the core's relevance codes, plus one display state for an ignored item whose
#: ignoring group has a badge of its own (re-identification's same person, same camera).
SAME_CAMERA = 3
#: A result with no ground truth to judge it by: a visitor's photo searched against the
#: gallery before anyone says which painting it shows, or a match of a curator's photo whose
#: artwork has no other photo.
UNJUDGED = 4
#: The badge of a result shown plainly, with no relevance frame or badge at all: a match in
#: a curator's collection where the query's artwork has no other photo, so there is nothing
#: to be right or wrong about (a ✗ would read as "wrong" to a visitor).
PLAIN = 5

#: Ignored relevance groups that get their own badge instead of the plain "ignored" one.
OWN_BADGE_GROUPS = {"same_camera": SAME_CAMERA}

#: Why an item is ignored when no relevance group of the protocol names it.
SELF = "self"          # the query's own image, removed by the self-match rule
EVERY_QUERY = "global"  # removed from every query's ranking (junk ids, ignore-list labels)

#: Words for the groups a protocol can ignore, as the legend and tooltips say them.
GROUP_WORDS = {
    "junk": "junk",
    "easy": "Easy images",
    "hard": "Hard images",
    "tough": "tough patches",
    "same_camera": "same person, same camera",
    "same_sequence": "the query's own sequence",
    SELF: "the query itself",
    EVERY_QUERY: "removed for every query",
}


@dataclass(frozen=True)
class ResultTile:
    """One gallery item as a result list shows it.

    Attributes:
        index: gallery index.
        name: image name; ``title`` the dataset's display title ("" when it has none).
        path: the image file, or None.
        raw_rank: 1-based place in the full ranking before removals (None: not ranked).
        rank: 1-based rank after the protocol's removals, the one the metrics use (None for
            an ignored item, or a positive beyond a truncated list).
        score: the ranking's score (nan when not known).
        relevance: the core's code (POSITIVE, NEGATIVE, IGNORED).
        badge: what the tile's badge shows (a relevance code or SAME_CAMERA).
        ignored_by: why it is ignored: the protocol's relevance group, SELF or EVERY_QUERY
            (None when it is not ignored).
        details: the image's details in one line ("year 1565 · room 3"; "" without any:
            :meth:`~irviewer.core.dataset.Dataset.details_line`).
    """

    index: int
    name: str
    title: str
    path: Path | None
    raw_rank: int | None
    rank: int | None
    score: float
    relevance: int
    badge: int
    ignored_by: str | None = None
    details: str = ""

    def tooltip(self) -> str:
        """Return the hover text: full name, title, details, rank, score and relevance in
        words."""
        lines = [self.name]
        lines += [text for text in (self.title, self.details) if text]
        rank = f"rank {self.rank}" if self.rank is not None else (
            "ignored" if self.relevance == IGNORED else "not ranked")
        score = "" if math.isnan(self.score) else f" · score {self.score:.4f}"
        lines.append(f"{rank}{score} · {relevance_words(self)}")
        return "\n".join(lines)


@dataclass(frozen=True)
class ResultList:
    """Everything the results area shows for one query at one depth.

    ``tiles`` are in rank order; ``shown`` counts the ranked (not ignored) ones; ``ends_early``
    says the stored list ended before ``depth``. ``missed`` are the positives outside the
    shown ranks, best first (never-ranked last), and ``hardest_rank`` the rank of the last
    of them (None when it is not ranked: beyond a truncated list). ``judged`` is False when
    the query has no ground truth to show (:func:`has_ground_truth`): its tiles are
    :data:`UNJUDGED` with the :data:`PLAIN` badge, and the list is "more like this".
    """

    query: int
    depth: int
    show_ignored: bool
    tiles: tuple[ResultTile, ...]
    shown: int
    ends_early: bool
    missed: tuple[ResultTile, ...]
    hardest_rank: int | None
    judged: bool = True

    def heading(self) -> str:
        """Return the ranked results' heading (rich text)."""
        if not self.judged:
            return (f"<b>More like this</b>: the {self.shown} artworks most like it"
                    + (" (every other artwork)" if self.ends_early else ""))
        return (f"<b>Ranked results</b>: the top {self.shown}"
                + (" (the list ends here)" if self.ends_early else ""))

    def missed_heading(self) -> str:
        """Return the missed positives' heading (rich text)."""
        if not self.missed:
            return "<b>Missed positives</b>: none — every positive is shown above"
        hardest = (f" — the hardest at rank {self.hardest_rank}"
                   if self.hardest_rank is not None else "")
        return (f"<b>Missed positives</b>: {len(self.missed)} outside the top "
                f"{self.shown}{hardest}")


def tile_caption(tile: ResultTile, numbers: bool = True) -> tuple[str, str]:
    """Return the words under a tile, (left, right): its rank ("#3", "ignored") and score;
    without ``numbers`` (a curator's window:
    :class:`~irviewer.view.window_layout.WindowLayout`), its title (else its name) and
    nothing."""
    if not numbers:
        return tile.title or tile.name, ""
    rank = f"#{tile.rank}" if tile.rank is not None else "ignored"
    return rank, "" if math.isnan(tile.score) else f"{tile.score:.3f}"


def relevance_words(tile: ResultTile) -> str:
    """Return the tile's relevance in words ("relevant", "ignored: junk", ...)."""
    if tile.relevance == POSITIVE:
        return "relevant"
    if tile.relevance == NEGATIVE:
        return "not relevant"
    if tile.relevance == UNJUDGED:
        return ("not judged: its artwork has no other photo" if tile.badge == PLAIN
                else "not judged: no ground truth")
    return f"ignored: {GROUP_WORDS.get(tile.ignored_by or '', tile.ignored_by or '')}"


def has_ground_truth(evaluation: Evaluation, q: int) -> bool:
    """Return whether query ``q``'s results can be judged right or wrong: False for a photo
    of a curator's collection whose artwork has no other photo (no positive, in the
    published ground truth and every correction), True otherwise. A research benchmark's
    query without positives keeps its judgement: its ground truth says none is relevant."""
    return not (evaluation.dataset.format == COLLECTION
                and int(evaluation.per_query["n_positives"][q]) == 0)


def judged_anywhere(evaluation: Evaluation) -> bool:
    """Return whether any query of ``evaluation`` has ground truth to show (False for a
    curator's collection whose artworks have one photo each: then no legend of ✓ and ✗)."""
    return not (evaluation.dataset.format == COLLECTION
                and not np.any(np.asarray(evaluation.per_query["n_positives"]) > 0))


def titles(dataset: Dataset) -> dict[str, str]:
    """Return image name -> display title for the images the dataset titles (queries' meta
    ``title``, and ``dataset.titles`` where the reader keeps one for every image)."""
    return dataset.image_titles


def ignored_reasons(evaluation: Evaluation) -> list[str]:
    """Return what the protocol ignores in a result list, in words, for the legend ("junk",
    "Easy images", "the query itself"): the ignored groups with members in this dataset
    (an instance set's ``junk`` only once a correction puts an item there; groups with a
    badge of their own are left to their badge), and the query's own image where the
    self-match rule removes it. Images removed for every query are never ranked, so never
    shown, and not listed."""
    p, ds = evaluation.protocol, evaluation.dataset
    reasons = [GROUP_WORDS.get(g, g) for g in p.ignored
               if g in ds.groups and g not in OWN_BADGE_GROUPS and ds.has_members(g)]
    if p.self_match == REMOVE and ds.has_self_images:
        reasons.append(GROUP_WORDS[SELF])
    return reasons


def own_badges(protocol: Protocol) -> tuple[int, ...]:
    """Return the badges beyond relevant / not relevant / ignored that ``protocol`` can show
    (SAME_CAMERA where it ignores same-camera images)."""
    return tuple(OWN_BADGE_GROUPS[g] for g in protocol.ignored if g in OWN_BADGE_GROUPS)


def _ignored_by(evaluation: Evaluation, q: int, items: np.ndarray) -> list[str | None]:
    """Return, per gallery index, why the protocol ignores it for query ``q`` (None: not)."""
    query, protocol = evaluation.dataset.queries[q], evaluation.protocol
    mask = evaluation.dataset.ignored_mask
    _, ignored = query_roles(query, protocol, mask)
    out: list[str | None] = []
    for g in items.tolist():
        if g < 0:
            out.append(None)
        elif mask[g]:
            out.append(EVERY_QUERY)
        elif g in ignored:
            group = next((name for name in protocol.ignored if g in query.group(name)), None)
            out.append(group if group is not None else SELF)
        else:
            out.append(None)
    return out


def outside_tile(ranking: Ranking, code: int, raw_rank: int, rank: int | None,
                 score: float) -> ResultTile:
    """Return the tile of a listed result that is no gallery image (a placeholder of a
    :class:`~irviewer.core.ranking.listed.ListedRanking`: a name outside the gallery, a
    repeated prediction): not relevant, named by what the file wrote, index -1."""
    name = (ranking.outside[int(outside_index(code))] if isinstance(ranking, ListedRanking)
            else "")
    return ResultTile(-1, name, "", None, raw_rank, rank, score, NEGATIVE, NEGATIVE, None,
                      "not a gallery image: a wrong answer at its place")


def _tile(dataset: Dataset, names: dict[str, str], g: int, raw_rank: int | None,
          rank: int | None, score: float, relevance: int, ignored_by: str | None) -> ResultTile:
    name = dataset.gallery[g]
    badge = OWN_BADGE_GROUPS.get(ignored_by or "", relevance) if relevance == IGNORED else relevance
    return ResultTile(int(g), name, names.get(name, ""), dataset.image_paths.get(name),
                      raw_rank, rank, float(score), int(relevance), int(badge), ignored_by,
                      dataset.details_line(name))


def result_list(evaluation: Evaluation, q: int, depth: int, show_ignored: bool,
                scores: np.ndarray | None = None) -> ResultList:
    """Return what query ``q``'s results show: its first ``depth`` ranked results (after the
    protocol's removals; ignored items where they ranked when ``show_ignored``) and the
    positives outside them.

    ``scores`` is the query's full score row where known (:meth:`Ranking.score_row`), giving
    missed positives their scores; without it they show the stored score or nan.
    """
    ds, ranking = evaluation.dataset, evaluation.ranking
    names = titles(ds)
    top = ranking.top_indices[q]
    top = top[top != -1]  # -1 pads; a placeholder (<= -2) holds its place, named apart
    real = top >= 0
    codes = np.full(len(top), NEGATIVE, dtype=np.int8)
    codes[real] = evaluation.relevance(q, top[real])
    why = _ignored_by(evaluation, q, top)
    top_scores = ranking.top_scores[q][: len(top)]
    tiles: list[ResultTile] = []
    shown = 0
    for raw, (g, code, score, reason) in enumerate(zip(top, codes, top_scores, why,
                                                       strict=True)):
        ignored = code == IGNORED
        if ignored and not show_ignored:
            continue
        if not ignored and shown >= depth:
            break
        rank = None if ignored else shown + 1
        shown += not ignored
        tiles.append(_tile(ds, names, int(g), raw + 1, rank, float(score), int(code), reason)
                     if g >= 0 else outside_tile(ranking, int(g), raw + 1, rank, float(score)))
    idx, ranks = evaluation.missed_positives(q, shown)
    known = _known_scores(evaluation, q, idx, scores)
    raw_ranks = ranking.rank_items(q, idx) if len(idx) else np.zeros(0, dtype=np.int64)
    missed = tuple(
        _tile(ds, names, int(g), int(raw) + 1 if raw >= 0 else None,
              int(r) + 1 if r >= 0 else None, float(s), POSITIVE, None)
        for g, r, raw, s in zip(idx, ranks, raw_ranks, known, strict=True))
    hardest = int(ranks[-1]) + 1 if len(ranks) and ranks[-1] >= 0 else None
    judged = has_ground_truth(evaluation, q)
    if not judged:
        tiles = [replace(t, relevance=UNJUDGED, badge=PLAIN) for t in tiles]
    return ResultList(int(q), int(depth), bool(show_ignored), tuple(tiles), shown,
                      shown < depth, missed, hardest, judged)


def _known_scores(evaluation: Evaluation, q: int, items: np.ndarray,
                  row: np.ndarray | None) -> np.ndarray:
    """Return the scores of ``items`` for query ``q``: from the full row when given, else
    the ranking's stored items of interest, else the query's recomputed score row
    (:meth:`Ranking.score_row`, one vector-matrix product); nan where none is known (a
    ranking read from a file)."""
    if not len(items):
        return np.zeros(0)
    if row is None:
        out = _stored_scores(evaluation, q, items)
        if not np.isnan(out).any() or not evaluation.ranking.has_score_rows:
            return out
        row = evaluation.ranking.score_row(q)
    out = np.asarray(row, dtype=float)[items]
    out[~np.isfinite(out)] = np.nan
    return out


def _stored_scores(evaluation: Evaluation, q: int, items: np.ndarray) -> np.ndarray:
    idx, _, stored = evaluation.ranking.items(q)
    pos = np.searchsorted(idx, items)
    pos_c = np.minimum(pos, max(len(idx) - 1, 0))
    found = (pos < len(idx)) & (idx[pos_c] == items) if len(idx) else np.zeros(
        len(items), dtype=bool)
    out = np.full(len(items), np.nan)
    out[found] = stored[pos_c[found]]
    return out


#: What the header says of a curator's photo whose artwork has no other photo.
ONLY_PHOTO = ("the only photo of this artwork: nothing to score; below, the artworks most "
              "like it")


@dataclass(frozen=True)
class QueryHeader:
    """What the results area shows above the tiles: the query's name, title, image (file
    and the benchmark's query box), its numbers in words (rich text) and its image's
    details in one line ("" without any)."""

    query: int
    name: str
    title: str
    image: str
    path: Path | None
    box: tuple[float, float, float, float] | None
    metrics: str
    details: str = ""


def query_header(evaluation: Evaluation, q: int) -> QueryHeader:
    """Return query ``q``'s header: AP, AP@R where the protocol reports MAP@R, P@1 and
    positives, or why it is skipped."""
    ds = evaluation.dataset
    query = ds.queries[q]
    pq = evaluation.per_query
    ap, p1 = float(pq["AP"][q]), float(pq["P@1"][q])
    answers = answers_words(evaluation, q)
    at_r = (f"AP@R <b>{100 * float(pq[AP_AT_R][q]):.1f}</b> &nbsp; "
            if AP_AT_R in pq else "")
    metrics = (ONLY_PHOTO if not has_ground_truth(evaluation, q) else
               left_out_words(evaluation, q) if math.isnan(ap) else
               f"AP <b>{100 * ap:.1f}</b>{ap_tie_range(evaluation, q)} &nbsp; {at_r}"
               f"P@1 <b>{100 * p1:.0f}</b> &nbsp; {int(pq['n_positives'][q])} positives"
               + (f" &nbsp; {answers}" if answers else ""))
    title = str(query.meta.get("title") or "")
    return QueryHeader(int(q), query.name, title, query.image, ds.image_paths.get(query.image),
                       query.box, metrics, ds.details_line(query.image))
