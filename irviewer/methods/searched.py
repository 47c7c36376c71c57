"""Adding approximate-search methods to methods already made (the window's File ▸ Add an
approximate index method… and Add an engine method…), Qt-free: which methods can be
searched and why not, and the cancellable generator that searches one method's vectors with
every setting of a SPEC, or in a vector engine's collection.

A method made here is the one :func:`irviewer.methods.making.iter_make` makes for a
request that asks for it (``approximate=((i, SPEC),)``, ``engines=((i, ENGINE),)``): the
same :class:`~irviewer.methods.spec.MethodSpec`, made from the same plain method by
:func:`irviewer.methods.making.iter_derived`.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass

from irviewer.core.ann.engine_spec import parse_engine_spec
from irviewer.core.ann.spec import AnnSpec, parse_ann_spec
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.formats.hpatches_tasks import NAME as TASKS
from irviewer.methods.making import iter_derived
from irviewer.methods.method import Method, Step
from irviewer.methods.spec import DESCRIPTORS, Approximate, Engine, MethodSpec, derived_name


def ann_refusal(method: Method, dataset: Dataset) -> str | None:
    """Return why ``method`` cannot be searched approximately (a sentence), or None: a
    derived method is not exact, a precomputed ranking has no vectors, and HPatches task
    lists rank per-query pools."""
    if method.made.derivation is not None:
        return f"{method.name} is not an exact ranking; index its descriptor file's method"
    if method.kind != DESCRIPTORS or method.ranking.descriptors is None:
        return (f"{method.name} is a precomputed ranking (TREC run, .npz indices, .results): "
                "it has no vectors to index")
    if dataset.format == TASKS:
        return (f"{method.name}: HPatches task lists rank each query's own pool of patches; "
                "an index needs one gallery")
    return None


@dataclass(frozen=True)
class AnnPlan:
    """An approximate search about to run: the exact method's name, the parsed SPEC and the
    new methods, one per setting."""

    method: str
    spec: AnnSpec
    specs: tuple[MethodSpec, ...]

    @property
    def names(self) -> list[str]:
        """Return the new methods' names, one per setting."""
        return [s.name for s in self.specs]


@dataclass(frozen=True)
class EnginePlan:
    """A vector engine's search about to run: the exact method's name and the new methods,
    one per setting (the engine's URI, collection, names field and search parameters are
    their derivations')."""

    method: str
    specs: tuple[MethodSpec, ...]

    @property
    def names(self) -> list[str]:
        """Return the new methods' names, one per setting (as :attr:`AnnPlan.names`)."""
        return [s.name for s in self.specs]


def _plain(methods: Mapping[str, Method], dataset: Dataset, name: str) -> Method:
    if name not in methods:
        raise InputError(f"{name}: not a method of the data open")
    refusal = ann_refusal(methods[name], dataset)
    if refusal is not None:
        raise InputError(refusal)
    return methods[name]


def _new(methods: Mapping[str, Method], specs: tuple[MethodSpec, ...]) -> None:
    for spec in specs:
        if spec.name in methods:
            raise InputError(f"{spec.name} is open already (in the Method list)")


def plan_ann(methods: Mapping[str, Method], dataset: Dataset, name: str,
             spec_text: str) -> AnnPlan:
    """Return the :class:`AnnPlan` of searching method ``name`` by ``spec_text``, checked:
    InputError (one sentence) for a bad SPEC, a method that cannot be indexed, or a setting
    already open."""
    spec = parse_ann_spec(spec_text)
    plain = _plain(methods, dataset, name)
    specs = tuple(MethodSpec(derived_name(name, s.label), plain.made.source,
                             Approximate(spec.text, s), plain.made.depth, name)
                  for s in spec.settings())
    _new(methods, specs)
    return AnnPlan(name, spec, specs)


def plan_engine(methods: Mapping[str, Method], dataset: Dataset, name: str, uri: str,
                collection: str, names_field: str | None = None) -> EnginePlan:
    """Return the :class:`EnginePlan` of searching method ``name``'s queries in
    ``collection`` at ``uri`` (one new method per setting of the search parameters after
    the URI), checked: InputError (one sentence) for an empty URI or collection, one with
    credentials or bad parameters, a method that cannot be searched, or a method already
    open."""
    if not uri.strip():
        raise InputError("Give the engine's URI: a Milvus Lite file (gallery.db) or a "
                         "server's http://host:19530")
    if not collection.strip():
        raise InputError(f"{uri}: give the collection that holds the gallery")
    plain = _plain(methods, dataset, name)
    written = parse_engine_spec(uri)
    engines = [Engine(written.uri, collection.strip(), (names_field or "").strip() or None,
                      setting.params) for setting in written.settings()]
    specs = tuple(MethodSpec(derived_name(name, engine.label), plain.made.source, engine,
                             plain.made.depth, name) for engine in engines)
    _new(methods, specs)
    return EnginePlan(name, specs)


def iter_searched(plain: Method, plan: AnnPlan | EnginePlan,
                  dataset: Dataset) -> Generator[Step, None, list[Method]]:
    """Search with ``plan`` over the exact method ``plain``'s vectors, yielding progress;
    return the new methods (for :meth:`~irviewer.opening.opener.Opened.add`). What it needs
    is passed in, so the generator may run in another thread; stop iterating to cancel."""
    return (yield from iter_derived(plain, plan.specs, dataset))


__all__ = ["AnnPlan", "EnginePlan", "ann_refusal", "iter_searched", "plan_ann", "plan_engine"]
