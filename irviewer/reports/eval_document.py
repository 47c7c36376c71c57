"""The ``irviewer eval --json`` document of opened data, assembled in one place: the command
line (:mod:`irviewer.cli.eval`) and the Python API (:func:`irviewer.evaluate`) both call
:func:`eval_document`, so the two cannot differ."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from irviewer.reports.eval_report import (
    ScoredMethod,
    build_report,
    corrections_record,
    method_record,
)

if TYPE_CHECKING:
    from irviewer.methods.method import Method
    from irviewer.opening.opener import Opened


@dataclass(frozen=True)
class EvalDocument:
    """What ``irviewer eval`` reports: the JSON ``report`` (:func:`build_report`'s schema,
    with the approximate searches and the pair scores when asked for), the ``methods``
    scored (:meth:`Opened.reported`, in the report's order) and their evaluations
    (``scored``, one :class:`ScoredMethod` per method, in the report's entries' order)."""

    report: dict
    methods: list[Method]
    scored: list[ScoredMethod]


def eval_document(opened: Opened, ap: str | None = None, self_match: str | None = None,
                  every_convention: bool = False, pair_scores: bool = False) -> EvalDocument:
    """Return the eval report of ``opened``: every method :meth:`Opened.reported` gives,
    under every protocol with the AP and self-match rules overridden where given (None:
    each protocol's own); the dataset's notes, then each method's (a derived method's
    plain method's first) and the corrections' applied; with ``every_convention`` every
    convention side by side (``all_conventions``), with ``pair_scores`` each evaluation's
    positive and negative pairs' scores (``scores``); each approximate search against its
    exact method (:func:`add_ann`)."""
    dataset = opened.dataset
    methods = opened.reported()
    scored = []
    notes: list[str] = list(dataset.notes)
    for m in methods:
        source = method_record(m)
        if opened.corrections is not None:
            source |= corrections_record(opened.corrections)
        scored.append(ScoredMethod(m.name, source, [
            opened.evaluation(m.name, p, ap, self_match) for p in opened.protocols]))
        base = opened.base_of(m.name)
        notes += [n for n in (*(base.notes if base is not None else ()), *m.notes)
                  if n not in notes]
    if opened.corrections is not None:
        notes += opened.corrections.notes()
    report = build_report(dataset, scored, notes=notes, every_convention=every_convention)
    add_ann(report, opened, methods, ap, self_match)
    if pair_scores:
        from irviewer.core.score_distribution import pair_scores as scores_of
        from irviewer.reports.score_report import scores_record

        every = [ev for m in scored for ev in m.evaluations]  # the report's entries' order
        for entry, ev in zip(report["evaluations"], every, strict=True):
            entry["scores"] = scores_record(scores_of(ev))
    return EvalDocument(report, methods, scored)


def add_ann(report: dict, opened: Opened, methods: Sequence[Method], ap: str | None = None,
            self_match: str | None = None) -> None:
    """Add the approximate searches to the eval report: each searched method's evaluation
    gets its ``ann`` member (against its base, :func:`irviewer.opening.base_comparison.
    against_base`); every SPEC swept over several settings, its ``sweep`` record under the
    first protocol (``sweeps``, one per file and SPEC; ``sweep``, the first, as one-sweep
    reports had it); the top-level ``ann`` is the first searched method's run."""
    from irviewer.methods.spec import Approximate, Engine
    from irviewer.opening.base_comparison import against_base, sweep_of
    from irviewer.reports.ann_report import ann_member, sweep_record

    names = [q.name for q in opened.dataset.queries]
    entries = iter(report["evaluations"])
    groups: dict[tuple[str | None, str], list[str]] = {}
    for m in methods:
        for p in opened.protocols:
            entry = next(entries)
            if m.ann is not None:
                entry["ann"] = ann_member(against_base(opened, m.name, p, ap, self_match),
                                          names, opened.dataset.gallery)
        d = m.made.derivation
        if isinstance(d, Approximate):
            groups.setdefault((m.base, d.spec), []).append(m.name)
        elif isinstance(d, Engine):  # an engine's search parameters swept
            groups.setdefault((m.base, f"{d.uri} {d.collection}"), []).append(m.name)
    sweeps = [sweep_record(sweep_of(opened, group, opened.protocols[0], ap, self_match))
              for group in groups.values() if len(group) > 1]
    if sweeps:
        report["sweep"] = sweeps[0]
        report["sweeps"] = sweeps
        swept = {s["method"]: s["setting"] for record in sweeps for s in record["settings"]}
        for entry in report["evaluations"]:
            entry["setting"] = swept.get(entry["method"])


__all__ = ["EvalDocument", "add_ann", "eval_document"]
