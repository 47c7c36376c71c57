"""Planted label errors on the real Oxford5k ground truth (the shared reference samples, read in
place): a copy of the gt_files with, for each of a few landmarks, images taken out of the
good/ok lists of all five of its queries (true positives now labelled negative) and images put
into its good lists — of other landmarks (listed good for another landmark, none of this one),
or unrelated (listed by no landmark); optionally images *moved* from one landmark's lists to
another's (taken out of the good lists of all five queries of A, put into the good lists of all
five of B), and one query of each planted landmark whose list differs elsewhere (one of its ok
images made junk for it alone), as annotators' lists do. Each (landmark, image) is one planted
problem, a moved image one problem of two landmarks; the audit's first entries are scored
against them (:func:`planted_scores`)."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from irviewer.core.audit import WRONG_LIST, Suspect

LANDMARKS = ("all_souls", "ashmolean", "hertford", "magdalen")
#: The annotator's planted set: unrelated images added, three moved images, one query of each
#: planted landmark with a list that differs elsewhere.
ANNOTATOR = {"added_from": "unrelated", "n_moved": 3, "differ": True}


@dataclass(frozen=True)
class Plants:
    """The planted problems, (landmark, image) each: ``taken`` out of the lists, ``added``
    to the good lists; ``moved``: (from landmark, to landmark, image)."""

    taken: frozenset[tuple[str, str]]
    added: frozenset[tuple[str, str]]
    moved: frozenset[tuple[str, str, str]] = frozenset()

    @property
    def all(self) -> frozenset[tuple[str, str]]:
        return self.taken | self.added


def _read(out: Path, q: str, group: str) -> list[str]:
    return (out / f"{q}_{group}.txt").read_text().split()


def _write(out: Path, q: str, group: str, names: Sequence[str]) -> None:
    (out / f"{q}_{group}.txt").write_text("".join(f"{x}\n" for x in names))


def _queries(landmark: str) -> list[str]:
    return [f"{landmark}_{i}" for i in range(1, 6)]


def plant(gt: Path, out: Path, seed: int, landmarks: Sequence[str] = LANDMARKS,
          n_taken: int = 2, n_added: int = 2, added_from: str = "landmarks",
          n_moved: int = 0, differ: bool = False, names: Sequence[str] = ()) -> Plants:
    """Copy the gt_files folder ``gt`` to ``out`` with ``n_taken`` good images of each
    landmark taken out of all its queries' good and ok lists and ``n_added`` images added to
    its good lists: good images of other landmarks (``added_from="landmarks"``) or images no
    landmark lists (``"unrelated"``, drawn from ``names``, every image of the gallery); then
    ``n_moved`` good images of one landmark moved into another's good lists, and with
    ``differ`` one ok image of one query of each planted landmark made junk for it alone.
    Return the planted problems."""
    shutil.copytree(gt, out)
    rng = np.random.default_rng(seed)
    everything = sorted({line for f in gt.glob("*_good.txt") for line in f.read_text().split()})
    listed = {line for f in gt.glob("*.txt") if not f.name.endswith("_query.txt")
              for line in f.read_text().split()}
    unlisted = sorted(set(names) - listed)
    if added_from == "unrelated" and not unlisted:
        raise ValueError("unrelated images to add need the gallery's names")
    used: set[str] = set()
    taken: set[tuple[str, str]] = set()
    added: set[tuple[str, str]] = set()
    for lm in landmarks:
        qs = _queries(lm)
        lists = {q: {g: _read(out, q, g) for g in ("good", "ok", "junk")} for q in qs}
        selves = {(out / f"{q}_query.txt").read_text().split()[0][5:] for q in qs}
        common = set.intersection(*(set(lists[q]["good"]) for q in qs)) - selves - used
        out_of = rng.choice(sorted(common), size=n_taken, replace=False).tolist()
        mine = set().union(*(set(v) for q in qs for v in lists[q].values()))
        pool = [x for x in (everything if added_from == "landmarks" else unlisted)
                if x not in mine and x not in used]
        into = rng.choice(pool, size=n_added, replace=False).tolist()
        used |= set(out_of) | set(into)
        for q in qs:
            _write(out, q, "good", [x for x in lists[q]["good"] if x not in out_of] + into)
            _write(out, q, "ok", [x for x in lists[q]["ok"] if x not in out_of])
        if differ:
            q = qs[int(rng.integers(len(qs)))]
            ok = [x for x in _read(out, q, "ok") if x not in used]
            if ok:
                x = ok[int(rng.integers(len(ok)))]
                _write(out, q, "ok", [y for y in _read(out, q, "ok") if y != x])
                _write(out, q, "junk", [*_read(out, q, "junk"), x])
        taken |= {(lm, x) for x in out_of}
        added |= {(lm, x) for x in into}
    moved = _move(out, rng, n_moved, used)
    return Plants(frozenset(taken), frozenset(added), frozenset(moved))


def _move(out: Path, rng: np.random.Generator, n_moved: int,
          used: set[str]) -> set[tuple[str, str, str]]:
    """Move ``n_moved`` good images, each out of the good lists of all five queries of a
    landmark into the good lists of all five of another (drawn at random, an image none of
    the other's lists has); return (from, to, image) of each."""
    all_landmarks = sorted({f.name[:-len("_1_good.txt")] for f in out.glob("*_1_good.txt")})
    moved: set[tuple[str, str, str]] = set()
    while len(moved) < n_moved:
        a, b = rng.choice(all_landmarks, size=2, replace=False).tolist()
        qa, qb = _queries(a), _queries(b)
        selves = {(out / f"{q}_query.txt").read_text().split()[0][5:] for q in qa}
        theirs = {x for q in qb for g in ("good", "ok", "junk") for x in _read(out, q, g)}
        common = set.intersection(*(set(_read(out, q, "good")) for q in qa))
        choices = sorted(common - selves - used - theirs)
        if not choices:
            continue
        x = str(rng.choice(choices))
        used.add(x)
        for q in qa:
            _write(out, q, "good", [y for y in _read(out, q, "good") if y != x])
        for q in qb:
            _write(out, q, "good", [*_read(out, q, "good"), x])
        moved.add((a, b, x))
    return moved


def problems(s: Suspect) -> set[tuple[str, str]]:
    """Return every (landmark, image) a pair suspect names (empty: image-level): one for an
    entry of one list, two for an image in the wrong list."""
    if s.query is None:
        return set()
    return {(q.rsplit("_", 1)[0], s.item) for q in (s.queries or (s.query,))}


@dataclass(frozen=True)
class PlantedScores:
    """How the first entries of a listing meet the plants: planted problems found in the
    first ``n`` entries (taken, added), added ones in the first ``n_added``, moved images
    listed as one entry in the wrong list naming both landmarks in the first ``n``, and
    problems listed more than once in the first ``n``."""

    n: int
    taken: int
    added: int
    added_early: int
    n_added: int
    repeats: int
    moved: int
    plants: Plants

    @property
    def recall(self) -> float:
        return (self.taken + self.added) / len(self.plants.all)


def planted_scores(suspects: Sequence[Suspect], plants: Plants, n: int = 48,
                   n_added: int = 24) -> PlantedScores:
    """Return the :class:`PlantedScores` of the first ``n`` entries of ``suspects``."""
    first = [problems(s) for s in suspects[:n]]
    named = set().union(*first) if first else set()
    early = set().union(*(problems(s) for s in suspects[:n_added]))
    repeats = sum(len(p) for p in first) - len(named)
    moved = sum(any(s.kind == WRONG_LIST and {(a, x), (b, x)} <= problems(s)
                    for s in suspects[:n]) for a, b, x in plants.moved)
    return PlantedScores(n, len(named & plants.taken), len(named & plants.added),
                         len(early & plants.added), n_added, repeats, moved, plants)
