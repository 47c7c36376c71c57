"""What a derived method costs against its base, typed (Qt-free): an approximate search
(FAISS index, vector engine) compared with the exact ranking of the same descriptors, query
by query (:class:`BaseComparison`), and a sweep of settings (:class:`Sweep`).

Both sides are scored by :meth:`~irviewer.opening.opener.Opened.paired`, the one rule of
every comparison: at the depth K the search returned, the base's exact list cut at K, a
positive past K counted as missed on both sides, every positive in AP's denominator. An
exhaustive index (FAISS ``Flat``, a Milvus FLAT collection) therefore gives ΔAP 0 on every
query. The base's mAP on its whole ranking is kept beside it (``map_base_full``), labelled
as such wherever it is shown. The eval report (:mod:`irviewer.reports.ann_report`), the
window's sweep dialog and ``irviewer figure --sweep`` read these values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from irviewer.core.ann.compare import LostPositive, compare_with_exact, first_reaching
from irviewer.core.ann.results import AnnRun
from irviewer.core.errors import InputError
from irviewer.opening.opener import Opened


def _mean(values: np.ndarray, evaluated: np.ndarray) -> float | None:
    chosen = np.asarray(values, dtype=np.float64)[evaluated]
    return float(np.mean(chosen)) if chosen.size else None


@dataclass(frozen=True)
class BaseComparison:
    """One derived method against its base under one protocol: the method's and base's
    names, the run (times, recalls), the ``depth`` compared at (None: both whole), the
    method's mAP, the base's mAP at that depth and on its whole ranking, and per query
    (dataset order; nan for a query left out of the means): the base's AP at the depth,
    ΔAP and ΔP@1 (method − base), and the positives the method lost with their exact ranks.
    ``base`` is None when the method has no exact ranking beside it (a descriptor file of
    queries only, searched in a vector engine): then only ``map`` is known."""

    method: str
    base: str | None
    run: AnnRun | None
    protocol: str
    depth: int | None
    map: float | None
    map_base: float | None
    map_base_full: float | None
    ap: np.ndarray
    ap_base: np.ndarray
    delta_ap: np.ndarray
    delta_p1: np.ndarray
    lost: tuple[tuple[LostPositive, ...], ...]
    evaluated: np.ndarray

    @property
    def broken(self) -> np.ndarray:
        """Return the queries (positions) whose AP the method lowered, largest loss first."""
        d = np.where(np.isfinite(self.delta_ap), self.delta_ap, 0.0)
        hurt = np.flatnonzero(d < -1e-9)
        return hurt[np.argsort(d[hurt], kind="stable")]


def against_base(opened: Opened, method: str, protocol: str, ap: str | None = None,
                 self_match: str | None = None) -> BaseComparison:
    """Return ``method`` (a method of ``opened`` derived from another) compared with its
    base under ``protocol`` (:meth:`Opened.paired`)."""
    m = opened.methods[method]
    base = opened.base_of(method)
    own = opened.evaluation(method, protocol, ap, self_match)
    evaluated = own.evaluated
    ap_own = np.asarray(own.per_query["AP"], dtype=np.float64)
    nan = np.full(len(ap_own), np.nan)
    if base is None:
        return BaseComparison(method, None, m.ann, protocol, None, _mean(ap_own, evaluated),
                              None, None, ap_own, nan, nan, nan,
                              tuple(() for _ in ap_own), evaluated)
    paired = opened.paired(base.name, method, protocol, ap, self_match)
    cmp = compare_with_exact(paired.base, paired.other)
    ap_base = np.asarray(paired.base.per_query["AP"], dtype=np.float64)
    full = np.asarray(paired.base_own.per_query["AP"], dtype=np.float64)
    ap_cut = np.asarray(paired.other.per_query["AP"], dtype=np.float64)
    return BaseComparison(method, base.name, m.ann, protocol, paired.depth,
                          _mean(ap_cut, evaluated), _mean(ap_base, evaluated),
                          _mean(full, paired.base_own.evaluated), ap_cut, ap_base,
                          cmp.delta_ap, cmp.delta_p1, cmp.lost, evaluated)


@dataclass(frozen=True)
class SweepSetting:
    """One setting of a sweep: its label (as method names show it), the method's name,
    the run, and its comparison with the base (:class:`BaseComparison`)."""

    setting: str
    method: str
    run: AnnRun
    compared: BaseComparison

    def mean_recall(self, k: int) -> float | None:
        """Return the mean recall@k by ann-benchmarks' rule (None when not computed)."""
        return self.run.mean_recall(f"recall@{k}")


@dataclass(frozen=True)
class Sweep:
    """A sweep of one index's settings over one method's queries, under one protocol: the
    base's name, the depth compared at, the base's mAP at that depth (what each setting is
    compared with) and on its whole ranking, every setting in order, and per query the
    position of the first setting that reaches the base's AP (-1: none)."""

    protocol: str
    base: str | None
    depth: int | None
    map_base: float | None
    map_base_full: float | None
    settings: tuple[SweepSetting, ...]
    first_reaching: np.ndarray
    queries: tuple[str, ...]
    evaluated: np.ndarray

    def reaching_counts(self) -> tuple[list[tuple[str, int]], int]:
        """Return ((setting label, queries first reaching their base AP there) for each
        setting some query reaches it first, in order; the queries that never do), counting
        every evaluated query once: the counts add up to the evaluated queries."""
        reach = self.first_reaching[self.evaluated]
        said = [(s.setting, int(np.count_nonzero(reach == i)))
                for i, s in enumerate(self.settings) if np.any(reach == i)]
        return said, int(np.count_nonzero(reach < 0))


def sweep_of(opened: Opened, methods: Sequence[str], protocol: str, ap: str | None = None,
             self_match: str | None = None) -> Sweep:
    """Return the :class:`Sweep` of ``methods`` (approximate methods of one base, one per
    setting, in order) under ``protocol``. InputError when they do not share one base."""
    bases = {opened.methods[m].base for m in methods}
    if len(bases) != 1:
        raise InputError(f"a sweep compares settings of one method: {', '.join(methods)} "
                         "come from different ones")
    compared = [against_base(opened, m, protocol, ap, self_match) for m in methods]
    settings = []
    for name, c in zip(methods, compared, strict=True):
        m = opened.methods[name]
        assert m.ann is not None and m.made.label is not None
        settings.append(SweepSetting(m.made.label, name, m.ann, c))
    first = compared[0]
    if first.base is None:
        reach = np.full(len(first.ap), -1, dtype=np.int64)
    else:
        paired = [opened.paired(first.base, m, protocol, ap, self_match) for m in methods]
        reach = first_reaching(paired[0].base, [p.other for p in paired])
    return Sweep(protocol, first.base, first.depth, first.map_base, first.map_base_full,
                 tuple(settings), reach, tuple(q.name for q in opened.dataset.queries),
                 first.evaluated)


__all__ = ["BaseComparison", "Sweep", "SweepSetting", "against_base", "sweep_of"]
