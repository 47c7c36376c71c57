"""The options of :func:`irviewer.evaluate` and :func:`irviewer.view` (``eval``'s, by
keyword), checked one by one, and the one :class:`~irviewer.opening.request.OpenRequest`
the data and the options make: what every command and the window open, opened here by the
same generator (:func:`~irviewer.opening.opener.iter_open`), its refusals as one sentence
naming the argument."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from irviewer.api.data import read_options_of
from irviewer.api.errors import KEYWORDS, ArgumentError, api_text, argument_error
from irviewer.api.given import Given, Prepared
from irviewer.core.convention_names import AP_RULES, SELF_MATCH_RULES
from irviewer.core.errors import InputError
from irviewer.core.ranking import DEFAULT_DEPTH
from irviewer.opening.opener import Opened, iter_open
from irviewer.opening.request import OpenRequest


@dataclass(frozen=True)
class Options:
    """The options of ``irviewer eval``, checked: the protocol (None: the dataset's own),
    the AP and self-match rules (None: each protocol's own), the depth of the result
    lists, the re-ranking SPECs, the approximate-search SPECs (and the file naming their
    index files' ids), a vector engine's collection, and the corrections file applied to
    the ground truth."""

    protocol: str | None = None
    ap: str | None = None
    self_match: str | None = None
    depth: int = DEFAULT_DEPTH
    rerank: tuple[str, ...] = ()
    ann: tuple[str, ...] = ()
    engine: str | None = None
    collection: str | None = None
    engine_names: str | None = None
    corrections: Path | None = None
    ann_names: Path | None = None


def options_of(protocol: str | None = None, ap: str | None = None,
               self_match: str | None = None, depth: int = DEFAULT_DEPTH,
               rerank: str | Sequence[str] | None = None, ann: str | Sequence[str] | None = None,
               engine: str | None = None, collection: str | None = None,
               engine_names: str | None = None,
               corrections: str | os.PathLike[str] | None = None,
               ann_names: str | os.PathLike[str] | None = None) -> Options:
    """Return the options checked: ArgumentError naming the one that is unknown or does not
    parse (a protocol, an AP or self-match rule, a depth under 1, a SPEC)."""
    from irviewer.core.ann.spec import parse_ann_spec
    from irviewer.core.protocols import PROTOCOLS
    from irviewer.core.rerank import parse_spec

    for key, value, known in (("protocol", protocol, tuple(PROTOCOLS)),
                              ("ap", ap, AP_RULES), ("self_match", self_match,
                                                     SELF_MATCH_RULES)):
        if value is not None and value not in known:
            raise ArgumentError(key, f"{key}: {value!r} is not one irviewer knows; give one of "
                                f"{', '.join(known)}")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ArgumentError("depth", f"depth: {depth!r} results per query; give a whole "
                            "number, at least 1")
    specs = {}
    parsers: tuple[tuple[str, str | Sequence[str] | None, Callable[[str], object]], ...] = (
        ("rerank", rerank, parse_spec), ("ann", ann, parse_ann_spec))
    for key, texts_given, parse in parsers:
        texts = _texts(texts_given, key)
        for text in texts:
            try:
                parse(text)
            except InputError as e:
                raise argument_error(key, e) from None
        specs[key] = texts
    if engine is not None and not collection:
        raise ArgumentError("collection", "collection: name the collection of the engine "
                            f"{engine} that holds the gallery")
    files: dict[str, Path | None] = {}
    given_files: tuple[tuple[str, str | os.PathLike[str] | None], ...] = (
        ("corrections", corrections), ("ann_names", ann_names))
    for key, path_given in given_files:
        found = files[key] = None if path_given is None else Path(path_given).expanduser()
        if found is not None and not found.is_file():
            raise ArgumentError(key, f"{key}: {found}: no such file")
    return Options(protocol, ap, self_match, depth, specs["rerank"], specs["ann"], engine,
                   collection, engine_names, files["corrections"], files["ann_names"])


def _texts(value: str | Sequence[str] | None, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else list(value)
    if not all(isinstance(x, str) and x.strip() for x in items):
        raise ArgumentError(key, f"{key}: give a SPEC as text, or a list of them")
    return tuple(x.strip() for x in items)


def request_of(given: Given, prepared: Prepared, options: Options) -> OpenRequest:
    """Return the request that opens ``prepared`` with ``options``: what ``irviewer eval``
    would build from its command line for the same data."""
    read = isinstance(given.dataset, str | os.PathLike)
    for key in ("format", "read_options"):
        if getattr(given, key) is not None and not read:
            raise ArgumentError(key, f"{key}: says how to read a dataset's files; give it with "
                                "a dataset's path (the data given needs no reader)")
    derived = [k for k, v in (("rerank", options.rerank), ("ann", options.ann),
                              ("engine", options.engine)) if v]
    if derived and not prepared.descriptors and prepared.held:
        raise ArgumentError(derived[0], f"{derived[0]}: works on vectors, and a score matrix "
                            "has none; give the vectors (embeddings=, or queries= and "
                            "gallery=) instead")
    return OpenRequest(
        dataset=prepared.dataset_path, descriptors=prepared.descriptors,
        rankings=prepared.rankings, format=given.format,
        options=read_options_of(given.read_options), k=options.depth,
        protocol=options.protocol, ap=options.ap, self_match=options.self_match,
        corrections=options.corrections, rerank=options.rerank, ann=options.ann,
        engine=options.engine, collection=options.collection,
        engine_names=options.engine_names, ann_names=options.ann_names,
        held_dataset=prepared.dataset,
        held=prepared.held)


def open_request(request: OpenRequest, prepared: Prepared) -> Opened:
    """Return ``request`` opened by the one opening path (read, ranked, scored); what it
    refuses as an ArgumentError naming the argument it is about: the dataset or the
    corrections while the ground truth is read, a SPEC while a derived method is made,
    else the vectors (or files) that were being matched to the dataset."""
    steps = iter_open(request)
    stage = ""
    try:
        while True:
            stage = next(steps).stage
    except StopIteration as done:
        opened: Opened = done.value
        return opened
    except InputError as e:
        raise argument_error(blamed(e, request, stage, prepared.vectors_argument),
                             e) from None


def blamed(message: object, request: OpenRequest, stage: str = "",
           vectors_argument: str = "embeddings") -> str:
    """Return the argument a refusal ``message`` of the opening of ``request`` is about
    (see :func:`open_request`): ``stage`` is the opening's last progress stage ("": unknown,
    the window's opening), ``vectors_argument`` the argument holding the vectors."""
    worded = api_text(message)
    named = next((key for key, word in KEYWORDS.items()
                  if word.endswith("=") and worded.startswith(word) and key != "row_names"),
                 None)
    if named is not None:  # the sentence starts with the option it is about
        return named
    message = str(message)
    if stage == "reading the dataset" or (not stage and not _about_methods(message, request)):
        corrections = request.corrections
        if corrections is not None and message.startswith(Path(corrections).name):
            return "corrections"
        return "dataset"
    if stage.startswith("re-ranking"):
        return "rerank"
    files = [p for p in request.sources() if request.held_at(p) is None]
    for path in files:
        if message.startswith(path.name):
            return "descriptors" if path in request.descriptors else "ranking"
    plain = stage.startswith(("reading the descriptors", "ranking", "reading the ranking",
                              "scoring"))
    if not plain and (request.ann or request.engine):
        return "ann" if request.ann else "engine"
    if vectors_argument == "queries" and "quer" not in message.split(",")[0]:
        return "gallery"
    return vectors_argument


def _about_methods(message: str, request: OpenRequest) -> bool:
    """Return True when ``message`` starts with the name of one of ``request``'s methods."""
    return any(message.startswith(Path(p).name) for p in request.sources())


__all__ = ["Options", "blamed", "open_request", "options_of", "request_of"]
