"""The label audit's entry points: :func:`audit` and :func:`iter_audit` (the stages of
:mod:`irviewer.core.audit.kinds` in order, cancellable), and the protocol it judges labels by."""


from __future__ import annotations

from collections.abc import Iterator, Mapping

from irviewer.core.audit.context import Context
from irviewer.core.audit.kinds import KIND_STAGES
from irviewer.core.audit.suspects import KINDS, AuditOptions, AuditResult, AuditStep
from irviewer.core.corrections import GEOMETRY_LABELS, family
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.core.protocols import Protocol, check_applicable, get_protocol
from irviewer.core.ranking import Ranking

__all__ = ["audit", "audit_protocol", "iter_audit"]


def audit(dataset: Dataset, rankings: Mapping[str, Ranking], protocol: str | None = None,
          options: AuditOptions | None = None) -> AuditResult:
    """Return the :class:`AuditResult` of ``dataset`` under the methods' ``rankings``."""
    last = None
    for step in iter_audit(dataset, rankings, protocol, options):
        last = step
    assert last is not None and last.result is not None
    return last.result


def audit_protocol(dataset: Dataset, name: str | None = None) -> Protocol:
    """Return the protocol the audit judges labels by: ``name``, else the dataset's protocol
    with the most positive groups (revisited Medium: easy and hard both count)."""
    if name is not None:
        protocol = get_protocol(name)
        check_applicable(protocol, dataset.groups, dataset.label())
        return protocol
    return max((get_protocol(p) for p in dataset.protocols), key=lambda p: len(p.positive))


def iter_audit(dataset: Dataset, rankings: Mapping[str, Ranking], protocol: str | None = None,
               options: AuditOptions | None = None) -> Iterator[AuditStep]:
    """Run the audit, yielding an :class:`AuditStep` per stage; the last carries the result.

    Stop iterating to cancel. InputError for a dataset whose labels come from geometry
    (HPatches), no method, or a ranking of another query count.
    """
    if family(dataset) == "hpatches":
        raise InputError(f"{dataset.label()}: {GEOMETRY_LABELS}")
    if not rankings:
        raise InputError(f"{dataset.label()}: give at least one descriptor file or ranking "
                         "to audit the labels with")
    for name, r in rankings.items():
        if r.n_queries != dataset.n_queries:
            raise InputError(f"{name}: the ranking has {r.n_queries} queries but "
                             f"{dataset.label()} has {dataset.n_queries}")
    ctx = Context.build(dataset, dict(rankings), audit_protocol(dataset, protocol),
                        options or AuditOptions())
    total = len(KIND_STAGES)
    for i, (stage, run) in enumerate(KIND_STAGES):
        yield AuditStep(stage, i, total)
        run(ctx)
    suspects = sorted(ctx.suspects, key=lambda s: (-s.order(), KINDS.index(s.kind),
                                                   s.query or "", s.item))
    result = AuditResult(tuple(suspects), ctx.protocol.name, tuple(rankings),
                         tuple(ctx.notes))
    yield AuditStep("done", total, total, result)
