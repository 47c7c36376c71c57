"""Adding approximate-search methods to data already open (the window's File ▸ Add an
approximate index method…), Qt-free: which methods can be indexed and why not, and the
cancellable generator that searches one method's vectors with every setting of a SPEC.

A method "F + SETTING" made here is the one :func:`irviewer.opening.opener.iter_open` makes
for ``OpenRequest(..., ann=(SPEC,))``: the same search (:mod:`irviewer.core.ann.search`)
of the same aligned vectors, compared with the same exact ranking.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

from irviewer.core.ann.engine_spec import engine_labels, parse_engine_spec
from irviewer.core.ann.search import ann_name
from irviewer.core.ann.spec import AnnSpec, parse_ann_spec
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.formats.hpatches_tasks import NAME as TASKS
from irviewer.opening.approximate import iter_ann_methods, iter_engine_search
from irviewer.opening.method import Method, Step
from irviewer.opening.opener import Opened


def ann_refusal(method: Method, dataset: Dataset) -> str | None:
    """Return why ``method`` cannot be searched approximately (a sentence), or None: an
    approximate or re-ranked method is not exact, a precomputed ranking has no vectors, and
    HPatches task lists rank per-query pools."""
    if method.rerank is not None or method.ann is not None:
        return f"{method.name} is not an exact ranking; index its descriptor file's method"
    if method.kind != "descriptors" or method.ranking.descriptors is None:
        return (f"{method.name} is a precomputed ranking (TREC run, .npz indices, .results): "
                "it has no vectors to index")
    if dataset.format == TASKS:
        return (f"{method.name}: HPatches task lists rank each query's own pool of patches; "
                "an index needs one gallery")
    return None


def method_source(opened: Opened, name: str) -> tuple[int, str | None] | None:
    """Return (position of the method's file among the request's sources, what derives
    it from the file's plain method: a re-ranking SPEC, an approximate search's setting,
    or None for the plain method), or None for no such method: an approximate method
    belongs to the file of the exact method it searched."""
    key = opened.request.method_key(name)
    if key is not None:
        return key
    m = opened.methods.get(name)
    if m is None or m.ann is None:
        return None
    plain = next((p for p in opened.methods if name.startswith(f"{p} + ")
                  and opened.methods[p].ann is None), None)
    found = opened.request.method_key(plain) if plain is not None else None
    return None if found is None else (found[0], m.ann.setting)


@dataclass(frozen=True)
class AnnPlan:
    """An approximate search about to run: the exact method's name and the parsed SPEC."""

    method: str
    spec: AnnSpec

    @property
    def names(self) -> list[str]:
        """Return the new methods' names, one per setting."""
        return [ann_name(self.method, s) for s in self.spec.settings()]


def plan_ann(opened: Opened, name: str, spec_text: str) -> AnnPlan:
    """Return the :class:`AnnPlan` of searching method ``name`` by ``spec_text``, checked:
    InputError (one sentence) for a bad SPEC, a method that cannot be indexed, or a setting
    already open."""
    spec = parse_ann_spec(spec_text)
    refusal = ann_refusal(opened.methods[name], opened.dataset)
    if refusal is not None:
        raise InputError(refusal)
    plan = AnnPlan(name, spec)
    for new in plan.names:
        if new in opened.methods:
            raise InputError(f"{new} is open already (in the Method list)")
    return plan


def iter_ann(opened: Opened, plan: AnnPlan) -> Generator[Step, None, list[Method]]:
    """Search with ``plan``, yielding progress; return the new methods (for
    :meth:`Opened.add_methods`). What it needs is taken from ``opened`` now, so the
    generator may run in another thread; stop iterating to cancel."""
    plain = opened.methods[plan.method]
    return iter_ann_methods(plain, opened.dataset, opened.request.k, (plan.spec.text,))


@dataclass(frozen=True)
class EnginePlan:
    """A vector engine's search about to run: the exact method's name, the engine's URI,
    the collection and the field holding image names (None: the primary key)."""

    method: str
    uri: str
    collection: str
    names_field: str | None = None

    @property
    def names(self) -> list[str]:
        """Return the new methods' names, one per setting of the search parameters after
        the URI (as :attr:`AnnPlan.names`)."""
        return [f"{self.method} + {label}"
                for label in engine_labels(self.uri, self.collection)]


def plan_engine(opened: Opened, name: str, uri: str, collection: str,
                names_field: str | None = None) -> EnginePlan:
    """Return the :class:`EnginePlan` of searching method ``name``'s queries in
    ``collection`` at ``uri``, checked: InputError (one sentence) for an empty URI or
    collection, a method that cannot be searched, or a method already open."""
    if not uri.strip():
        raise InputError("Give the engine's URI: a Milvus Lite file (gallery.db) or a "
                         "server's http://host:19530")
    if not collection.strip():
        raise InputError(f"{uri}: give the collection that holds the gallery")
    refusal = ann_refusal(opened.methods[name], opened.dataset)
    if refusal is not None:
        raise InputError(refusal)
    parse_engine_spec(uri)
    plan = EnginePlan(name, uri.strip(), collection.strip(), (names_field or "").strip() or None)
    for new in plan.names:
        if new in opened.methods:
            raise InputError(f"{new} is open already (in the Method list)")
    return plan


def iter_engine_job(opened: Opened, plan: EnginePlan) -> Generator[Step, None, list[Method]]:
    """Search with ``plan``, yielding progress; return the new methods, one per setting
    (for :meth:`Opened.add_methods`); stop iterating to cancel."""
    plain = opened.methods[plan.method]
    return (yield from iter_engine_search(plain, opened.dataset, opened.request.k, plan.uri,
                                          plan.collection, plan.names_field))


__all__ = ["AnnPlan", "EnginePlan", "ann_refusal", "iter_ann", "iter_engine_job",
           "method_source", "plan_ann", "plan_engine"]
