"""What a sweep's figure and table show (Qt-free): mAP against search time per query, one
point per setting, the base's exact mAP at the same depth as a dashed line (its whole
ranking's mAP said beside it), and per setting the table's cells. The window's sweep dialog
and ``irviewer figure --sweep`` paint this view model
(:mod:`irviewer.gui.sweep_painter`); its numbers are
:class:`irviewer.opening.base_comparison.Sweep`'s, the eval report's too."""

from __future__ import annotations

from dataclasses import dataclass

from irviewer.opening.base_comparison import Sweep


@dataclass(frozen=True)
class SweepPoint:
    """One setting as the figure draws it: its label (the parameters), time per query
    (ms) and mAP (%)."""

    label: str
    ms_per_query: float
    map_percent: float


@dataclass(frozen=True)
class SweepView:
    """A sweep's figure and table: the title, the y axis's label, the points in order, the
    exact line (mAP % and its label; None without an exact ranking), the table's columns and
    rows, and the sentence under it (queries first reaching their exact AP, adding up to
    the evaluated queries)."""

    title: str
    y_label: str
    points: tuple[SweepPoint, ...]
    exact_percent: float | None
    exact_label: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    reaching: str


#: The table's columns.
COLUMNS = ("setting", "mAP %", "recall@1", "recall@10", "recall@100", "ms/query",
           "queries broken")


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def sweep_view(sweep: Sweep, title: str = "") -> SweepView:
    """Return the :class:`SweepView` of ``sweep``."""
    points = tuple(SweepPoint(s.setting.split(":", 1)[-1] if ":" in s.setting else s.setting,
                              s.run.ms_per_query, 100 * s.compared.map)
                   for s in sweep.settings if s.compared.map is not None)
    exact = sweep.map_base
    if exact is None:
        label = ""
    elif sweep.depth is None:
        label = f"exact ranking: {100 * exact:.2f}"
    else:
        whole = "" if sweep.map_base_full is None else \
            f" (whole ranking: {100 * sweep.map_base_full:.2f})"
        label = f"exact ranking, first {sweep.depth}: {100 * exact:.2f}{whole}"
    rows = tuple((s.setting, _pct(s.compared.map), _pct(s.mean_recall(1)),
                  _pct(s.mean_recall(10)), _pct(s.mean_recall(100)),
                  f"{s.run.ms_per_query:.3f}", str(int(s.compared.broken.size)))
                 for s in sweep.settings)
    counts, never = sweep.reaching_counts()
    said = "; ".join(f"{n} at {setting}" for setting, n in counts)
    total = int(sweep.evaluated.sum())
    reaching = (f"Of {total} queries, reaching their exact AP first: {said or 'none'}"
                + (f"; {never} never" if never else "")
                + ". Recall by ann-benchmarks' rule.")
    return SweepView(title, f"mAP % ({sweep.protocol})", points,
                     None if exact is None else 100 * exact, label, COLUMNS, rows, reaching)


__all__ = ["COLUMNS", "SweepPoint", "SweepView", "sweep_view"]
