"""Planted label errors on the real Oxford5k ground truth (the shared reference samples, read in
place): a copy of the gt_files with, for each of a few landmarks, images taken out of the
good/ok lists of all five of its queries (true positives now labelled negative) and images of
other landmarks (listed good for another landmark, for none of this one) put into its good
lists. Each (landmark, image) is one planted problem, as an annotator meets it; the audit's
first entries are scored against them (:func:`planted_scores`)."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from irviewer.core.audit import Suspect

LANDMARKS = ("all_souls", "ashmolean", "hertford", "magdalen")


@dataclass(frozen=True)
class Plants:
    """The planted problems, (landmark, image) each: ``taken`` out of the lists, ``added``
    to the good lists."""

    taken: frozenset[tuple[str, str]]
    added: frozenset[tuple[str, str]]

    @property
    def all(self) -> frozenset[tuple[str, str]]:
        return self.taken | self.added


def plant(gt: Path, out: Path, seed: int, landmarks: Sequence[str] = LANDMARKS,
          n_taken: int = 2, n_added: int = 2) -> Plants:
    """Copy the gt_files folder ``gt`` to ``out`` with ``n_taken`` good images of each
    landmark taken out of all its queries' good and ok lists and ``n_added`` images of other
    landmarks added to its good lists; return the planted problems."""
    shutil.copytree(gt, out)
    rng = np.random.default_rng(seed)
    everything = sorted({line for f in gt.glob("*_good.txt") for line in f.read_text().split()})
    taken: set[tuple[str, str]] = set()
    added: set[tuple[str, str]] = set()
    for lm in landmarks:
        qs = [f"{lm}_{i}" for i in range(1, 6)]
        lists = {q: {g: (out / f"{q}_{g}.txt").read_text().split()
                     for g in ("good", "ok", "junk")} for q in qs}
        selves = {(out / f"{q}_query.txt").read_text().split()[0][5:] for q in qs}
        common = set.intersection(*(set(lists[q]["good"]) for q in qs)) - selves
        out_of = rng.choice(sorted(common), size=n_taken, replace=False).tolist()
        listed = set().union(*(set(v) for q in qs for v in lists[q].values()))
        into = rng.choice([x for x in everything if x not in listed], size=n_added,
                          replace=False).tolist()
        for q in qs:
            good = [x for x in lists[q]["good"] if x not in out_of] + into
            (out / f"{q}_good.txt").write_text("".join(f"{x}\n" for x in good))
            ok = [x for x in lists[q]["ok"] if x not in out_of]
            (out / f"{q}_ok.txt").write_text("".join(f"{x}\n" for x in ok))
        taken |= {(lm, x) for x in out_of}
        added |= {(lm, x) for x in into}
    return Plants(frozenset(taken), frozenset(added))


def problem(s: Suspect) -> tuple[str, str] | None:
    """Return the (landmark, image) a pair suspect is about (None: image-level)."""
    return None if s.query is None else (s.query.rsplit("_", 1)[0], s.item)


@dataclass(frozen=True)
class PlantedScores:
    """How the first entries of a listing meet the plants: planted problems found in the
    first ``n`` entries (taken, added), added ones in the first ``n_added``, and problems
    listed more than once in the first ``n``."""

    n: int
    taken: int
    added: int
    added_early: int
    n_added: int
    repeats: int
    plants: Plants

    @property
    def recall(self) -> float:
        return (self.taken + self.added) / len(self.plants.all)


def planted_scores(suspects: Sequence[Suspect], plants: Plants, n: int = 48,
                   n_added: int = 24) -> PlantedScores:
    """Return the :class:`PlantedScores` of the first ``n`` entries of ``suspects``."""
    first = [problem(s) for s in suspects[:n]]
    keys = [k for k in first if k is not None]
    early = {problem(s) for s in suspects[:n_added]}
    return PlantedScores(n, len(set(keys) & plants.taken), len(set(keys) & plants.added),
                         len(early & plants.added), n_added, len(keys) - len(set(keys)),
                         plants)
