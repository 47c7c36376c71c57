"""Adding a re-ranked method to methods already made (the window's File ▸ Add a re-ranked
method…), Qt-free: which methods can be re-ranked and why not, what a chain's neighbour
searches cost on them, and the cancellable generator that re-ranks one method's vectors.

A method "F + SPEC" made here is the one :func:`irviewer.methods.making.iter_make` makes for
a request that asks for it (``reranked=((i, SPEC),)``): the same
:class:`~irviewer.methods.spec.MethodSpec`, made from the same plain method by
:func:`irviewer.methods.making.iter_derived`; only the vectors are not read again (the plain
ranking holds them).
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.core.rerank import Chain, check_budget, parse_spec, search_cost
from irviewer.formats.hpatches_tasks import NAME as TASKS
from irviewer.methods.making import iter_derived
from irviewer.methods.method import Method, Step
from irviewer.methods.spec import DESCRIPTORS, MethodSpec, Reranked, derived_name


@dataclass(frozen=True)
class Reranking:
    """A re-ranking about to run: the new method (``spec``), the chain, and the sizes its
    cost depends on."""

    spec: MethodSpec
    chain: Chain
    n_queries: int
    n_gallery: int
    dim: int

    @property
    def method(self) -> str:
        """Return the name of the method re-ranked (its file's plain method)."""
        assert self.spec.base is not None
        return self.spec.base

    @property
    def name(self) -> str:
        """Return the new method's name ("F + SPEC")."""
        return self.spec.name

    @property
    def cost(self) -> float:
        """Return the multiply-adds of the chain's all-pairs neighbour searches
        (:func:`irviewer.core.rerank.search_cost`)."""
        return search_cost(self.chain, self.n_queries, self.n_gallery, self.dim)


def rerank_refusal(method: Method, dataset: Dataset) -> str | None:
    """Return why ``method`` cannot be re-ranked (a sentence), or None when it can: a
    precomputed ranking has no vectors, HPatches task lists rank each query's own pool, and
    a derived method is re-ranked from its plain method with a longer chain."""
    if method.made.derivation is not None:
        return (f"{method.name} is derived already; re-rank {method.base or 'its plain method'}"
                " by a longer chain instead")
    if method.kind != DESCRIPTORS or method.ranking.descriptors is None:
        return (f"{method.name} is a precomputed ranking (TREC run, .npz indices, .results): it "
                "has no vectors to re-rank")
    if dataset.format == TASKS:
        return (f"{method.name}: HPatches task lists rank each query's own pool of patches; "
                "re-ranking needs one gallery")
    return None


def plan_reranking(methods: Mapping[str, Method], dataset: Dataset, name: str,
                   spec: str) -> Reranking:
    """Return the :class:`Reranking` of method ``name`` (one of ``methods``) by ``spec``,
    checked: InputError (one sentence) for a bad SPEC, a method that cannot be re-ranked
    (:func:`rerank_refusal`), one already open, or neighbour searches over the budget
    (:func:`irviewer.core.rerank.check_budget`)."""
    chain = parse_spec(spec)
    if name not in methods:
        raise InputError(f"{name}: not a method of the data open")
    plain = methods[name]
    refusal = rerank_refusal(plain, dataset)
    if refusal is not None:
        raise InputError(refusal)
    new = derived_name(name, chain.text)
    if new in methods:
        raise InputError(f"{new} is open already (in the Method list)")
    aligned = plain.ranking.descriptors
    assert aligned is not None
    made = MethodSpec(new, plain.made.source, Reranked(chain.text), plain.made.depth, name)
    plan = Reranking(made, chain, dataset.n_queries,
                     int(np.count_nonzero(~dataset.ignored_mask)), int(aligned.dim))
    check_budget(chain, plan.n_queries, plan.n_gallery, plan.dim)
    return plan


def iter_reranked(plain: Method, plan: Reranking,
                  dataset: Dataset) -> Generator[Step, None, Method]:
    """Re-rank the vectors of ``plain`` (``plan``'s method) by its chain, yielding
    :class:`Step` progress; return the new :class:`Method` "F + SPEC" (for
    :meth:`~irviewer.opening.opener.Opened.add`). What it needs is passed in, so the
    generator may run in another thread while the open data changes; stop iterating to
    cancel."""
    made = yield from iter_derived(plain, (plan.spec,), dataset)
    return made[0]


__all__ = ["Reranking", "iter_reranked", "plan_reranking", "rerank_refusal"]
