"""Adding a re-ranked method to data already open (the window's File ▸ Add a re-ranked
method…), Qt-free: which methods can be re-ranked and why not, what a chain's neighbour
searches cost on them, and the cancellable generator that re-ranks one method's vectors.

A method "F + SPEC" made here is the one :func:`irviewer.opening.opener.iter_open` makes
for ``OpenRequest(..., reranked=((i, SPEC),))``: the same chain
(:func:`irviewer.core.rerank.iter_rerank`) on the same aligned vectors, with the plain
ranking's lists for a first ``aqe``; only the vectors are not read again (the plain
ranking holds them).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, replace

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import AlignedDescriptors
from irviewer.core.errors import InputError
from irviewer.core.rerank import Chain, check_budget, parse_spec, search_cost
from irviewer.formats.hpatches_tasks import NAME as TASKS
from irviewer.opening.opener import Method, Opened, Step, iter_reranking
from irviewer.opening.request import reranked_name


@dataclass(frozen=True)
class Reranking:
    """A re-ranking about to run: which method (its name and its position ``index`` among
    the request's descriptor files), the chain, and the sizes its cost depends on."""

    method: str
    index: int
    chain: Chain
    n_queries: int
    n_gallery: int
    dim: int

    @property
    def name(self) -> str:
        """Return the new method's name ("F + SPEC")."""
        return reranked_name(self.method, self.chain.text)

    @property
    def cost(self) -> float:
        """Return the multiply-adds of the chain's all-pairs neighbour searches
        (:func:`irviewer.core.rerank.search_cost`)."""
        return search_cost(self.chain, self.n_queries, self.n_gallery, self.dim)


def rerank_refusal(opened: Opened, name: str) -> str | None:
    """Return why the method ``name`` cannot be re-ranked (a sentence), or None when it
    can: a precomputed ranking has no vectors, HPatches task lists rank each query's own
    pool, and a re-ranked method is re-ranked from its plain method with a longer chain."""
    m = opened.methods[name]
    if m.rerank is not None:
        key = opened.request.method_key(name)
        plain = opened.request.method_named(key[0]) if key is not None else None
        return (f"{name} is re-ranked already; re-rank {plain or 'its plain method'} by a "
                "longer chain instead")
    if m.kind != "descriptors" or m.ranking.descriptors is None:
        return (f"{name} is a precomputed ranking (TREC run, .npz indices, .results): it "
                "has no vectors to re-rank")
    if opened.dataset.format == TASKS:
        return (f"{name}: HPatches task lists rank each query's own pool of patches; "
                "re-ranking needs one gallery")
    return None


def plan_reranking(opened: Opened, name: str, spec: str) -> Reranking:
    """Return the :class:`Reranking` of method ``name`` by ``spec``, checked: InputError
    (one sentence) for a bad SPEC, a method that cannot be re-ranked
    (:func:`rerank_refusal`), one already open, or neighbour searches over the budget
    (:func:`irviewer.core.rerank.check_budget`)."""
    chain = parse_spec(spec)
    refusal = rerank_refusal(opened, name)
    if refusal is not None:
        raise InputError(refusal)
    key = opened.request.method_key(name)
    if key is None:
        raise InputError(f"{name}: not a method of the data open")
    index = key[0]
    if reranked_name(name, chain.text) in opened.methods:
        raise InputError(f"{reranked_name(name, chain.text)} is open already (in the "
                         "Method list)")
    aligned = opened.methods[name].ranking.descriptors
    assert aligned is not None
    plan = Reranking(name, index, chain, opened.dataset.n_queries,
                     int(np.count_nonzero(~opened.dataset.ignored_mask)), int(aligned.dim))
    check_budget(chain, plan.n_queries, plan.n_gallery, plan.dim)
    return plan


def iter_reranked(opened: Opened, plan: Reranking) -> Generator[Step, None, Method]:
    """Re-rank the vectors of ``plan``'s method by its chain, yielding :class:`Step`
    progress; return the new :class:`Method` "F + SPEC" (for :meth:`Opened.add_reranked`,
    with ``plan.index``). What it needs is taken from ``opened`` now, so the generator may
    run in another thread while ``opened`` changes; stop iterating to cancel."""
    plain = opened.methods[plan.method]
    dataset, k = opened.dataset, opened.request.k
    aligned = plain.ranking.descriptors
    assert aligned is not None
    return _iter_reranked(plain, plan, aligned, dataset, k)


def _iter_reranked(plain: Method, plan: Reranking, aligned: AlignedDescriptors,
                   dataset: Dataset, k: int) -> Generator[Step, None, Method]:
    ranking = yield from iter_reranking(plan.chain, aligned, dataset, k, plain.ranking,
                                        f"re-ranking {plan.method} by {plan.chain.text}: ")
    return replace(plain, name=plan.name, ranking=ranking, rerank=plan.chain,
                   evaluations={})


__all__ = ["Reranking", "iter_reranked", "plan_reranking", "rerank_refusal"]
