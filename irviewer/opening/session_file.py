"""The ``.irv`` session file: JSON that reopens the inspector where the user left off (Qt-free).

A session names what was open (the dataset, one or more descriptor files or a precomputed
ranking, the image folder, the reader and its options) and how it was being looked at (the
protocol and conventions, the selected query, list depth, tile size, filters, and the
window's geometry as opaque strings). :func:`save_session` writes it atomically;
:func:`load_session` reads it back and turns every problem into one :class:`InputError`
sentence naming the file.

Paths are stored relative to the ``.irv`` file's folder when they lie inside it (or below
it), else absolute, always with forward slashes, so a folder holding the session and its
data can be moved or shared as a whole. Loaded paths are absolute.

Forward compatibility: keys this version does not know are ignored, not an error, so a
session written by a later irviewer of the same ``version`` still opens here (the unknown
keys are not kept when this version saves it again). Keys other than ``format``,
``version`` and ``dataset`` may be missing (hand-written sessions); they take the defaults
of :class:`SessionFile`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irviewer.core.ann.engine_spec import parse_engine_spec
from irviewer.core.ann.spec import parse_ann_spec
from irviewer.core.convention_names import AP_RULES, SELF_MATCH_RULES, one_of
from irviewer.core.errors import InputError
from irviewer.core.ranking import DEFAULT_DEPTH
from irviewer.core.rerank import parse_spec
from irviewer.formats.base import ReadOptions, read_text, reader_options
from irviewer.io.atomic import atomic_open
from irviewer.opening.request import RESULTS_SHOWN, TOP_K_RANGE, OpenRequest
from irviewer.opening.session_fields import SessionFields
from irviewer.opening.session_options import PATH_OPTIONS, option_problem

SESSION_FORMAT = "irviewer-session"
SESSION_VERSION = 1
@dataclass(frozen=True)
class SessionFile:
    """Everything a ``.irv`` file holds.

    Attributes:
        dataset: the dataset file (or folder) that was opened.
        descriptors: the descriptor files, in the order they were opened.
        rankings: precomputed rankings opened instead of (or beside) descriptor files.
        active_method: index into ``descriptors + rankings`` of the method shown.
        images: the image folder, or None.
        format: the reader's name, or None to detect it.
        options: reader options as plain JSON values, e.g. ``{"instance_rule": "dash",
            "ignore_labels": ["0"], "keep_orphans": false, "distractors": "extra.txt"}``;
            see :func:`read_options`.
        protocol, ap, self_match: the protocol's name and the AP and self-match rules shown
            (None: the protocol's own).
        selected_query: the name of the selected query, or None.
        top_k: how many results are shown per query (within ``TOP_K_RANGE``).
        tile_size: tile edge in pixels (positive; the GUI clamps it to its own range).
        show_ignored, filter_text, failures_only: the query list's filters.
        ap_range: the AP filter as fractions ``(low, high)`` within 0..1, or None.
        window: opaque strings (base64 geometry and splitter states), kept as they are.
        corrections: the dataset's label-corrections file (``<dataset>.corrections.csv`` or
            one the user chose), or None; it need not exist yet.
        ann_names: the names file of the index files' ids (``--ann-names``: line i names the
            image of FAISS id i), for every index file the session searches; None when
            their ids are read in the dataset's or the descriptor file's order.
        reranked: the re-ranked methods, as (position in ``descriptors``, SPEC) pairs in
            the order they open (:meth:`OpenRequest.reranked_pairs`).
        approximate: the approximate-search methods, as (position in ``descriptors``,
            SPEC) pairs in the order they open (:meth:`OpenRequest.approximate_pairs`); an
            index file by its absolute path. Reopening searches again (FAISS builds the
            index anew, the same every time).
        engine: the vector engine every descriptor file's queries are searched in, as
            ``(URI, collection, names field or None)``, or None: a Milvus Lite file by its
            absolute path, a server by its address (its token stays in the environment; a
            user name and password in the URI are refused on load and never saved), search
            parameters after the URI. Reopening asks the engine again, and never creates
            a Milvus Lite database.
        engines: the vector engines one descriptor file's queries are searched in (the
            window's File ▸ Add an engine method), as (position in ``descriptors``, (URI,
            collection, names field or None)) pairs, the URI as ``engine``'s. An irviewer
            that does not know this key opens without them.
        active_rerank: what derives the method shown from ``active_method``'s plain one:
            a re-ranking SPEC or an approximate setting's label (None: the plain method).
            An irviewer that does not know these keys opens the plain methods and shows the
            plain one.
        compare_method, compare_rerank: the method compare mode compares the shown one with,
            as ``active_method`` and ``active_rerank`` name the shown one (None: compare
            mode off). An irviewer that does not know these keys opens without comparing.

    Equality compares every field; ``options`` and ``window`` are dicts, so a session is
    not hashable. Construction checks the values (``InputError`` without a file name).
    """

    dataset: Path
    descriptors: tuple[Path, ...] = ()
    rankings: tuple[Path, ...] = ()
    active_method: int = 0
    images: Path | None = None
    format: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    protocol: str | None = None
    ap: str | None = None
    self_match: str | None = None
    selected_query: str | None = None
    top_k: int = RESULTS_SHOWN
    tile_size: int = 132
    show_ignored: bool = False
    filter_text: str = ""
    failures_only: bool = False
    ap_range: tuple[float, float] | None = None
    window: dict[str, str] = field(default_factory=dict)
    corrections: Path | None = None
    ann_names: Path | None = None
    reranked: tuple[tuple[int, str], ...] = ()
    approximate: tuple[tuple[int, str], ...] = ()
    engine: tuple[str, str, str | None] | None = None
    engines: tuple[tuple[int, tuple[str, str, str | None]], ...] = ()
    active_rerank: str | None = None
    compare_method: int | None = None
    compare_rerank: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "dataset", Path(self.dataset))
        if self.corrections is not None:
            object.__setattr__(self, "corrections", Path(self.corrections))
        if self.ann_names is not None:
            object.__setattr__(self, "ann_names", Path(self.ann_names))
        object.__setattr__(self, "descriptors", tuple(Path(p) for p in self.descriptors))
        object.__setattr__(self, "rankings", tuple(Path(p) for p in self.rankings))
        for key in ("reranked", "approximate"):
            object.__setattr__(self, key, tuple((int(i), str(spec))
                                                for i, spec in getattr(self, key)))
        if self.images is not None:
            object.__setattr__(self, "images", Path(self.images))
        if self.ap_range is not None:
            object.__setattr__(self, "ap_range", (float(self.ap_range[0]),
                                                  float(self.ap_range[1])))
        problem = _check_values(self)
        if problem:
            raise InputError(f"session: {problem}")

    @property
    def sources(self) -> tuple[Path, ...]:
        """Return every method's file: the descriptor files, then the rankings."""
        return (*self.descriptors, *self.rankings)


def _check_values(s: SessionFile) -> str | None:
    """Return what is wrong with the values of ``s`` as a sentence fragment, or None."""
    if not s.sources:
        return ("names neither a descriptor file nor a ranking; add \"descriptors\" or "
                "\"rankings\"")
    for key in ("active_method", "compare_method"):
        value = getattr(s, key)
        if value is not None and not 0 <= value < len(s.sources):
            return (f"\"{key}\" is {value}; it must be between 0 and "
                    f"{len(s.sources) - 1} (an index into \"descriptors\" then \"rankings\")")
    lo, hi = TOP_K_RANGE
    if not lo <= s.top_k <= hi:
        return f"\"top_k\" is {s.top_k}; it must be between {lo} and {hi}"
    if s.tile_size < 1:
        return f"\"tile_size\" is {s.tile_size}; it must be a positive number of pixels"
    if s.ap is not None and s.ap not in AP_RULES:
        return f"\"ap\" is {s.ap!r}; use {one_of(AP_RULES)} (or null)"
    if s.self_match is not None and s.self_match not in SELF_MATCH_RULES:
        return f"\"self_match\" is {s.self_match!r}; use {one_of(SELF_MATCH_RULES)} (or null)"
    parsers: tuple[tuple[str, Callable[[str], object]], ...] = (
        ("reranked", parse_spec), ("approximate", parse_ann_spec))
    for key, parse in parsers:
        for i, spec in getattr(s, key):
            if not 0 <= i < len(s.descriptors):
                return (f"\"{key}\" names descriptor file {i} for {spec!r}; it must be "
                        f"between 0 and {len(s.descriptors) - 1} (an index into "
                        "\"descriptors\")")
            try:
                parse(spec)
            except InputError as e:
                return f"\"{key}\" holds a bad SPEC ({e})"
    problem = option_problem(s.options)
    if problem is not None:
        return problem
    if s.engine is not None and (not s.engine[0] or not s.engine[1] or not s.descriptors):
        return ("\"engine\" needs a URI, a collection and a descriptor file whose queries "
                "it searches")
    for i, (uri, collection, _names) in s.engines:
        if not 0 <= i < len(s.descriptors) or not uri or not collection:
            return (f"\"engines\" names descriptor file {i} for {collection!r}; each needs "
                    "a URI, a collection and an index into \"descriptors\"")
    for key, uri in [*(("engine", s.engine[0]) for _ in (0,) if s.engine is not None),
                     *(("engines", uri) for _, (uri, _c, _n) in s.engines)]:
        try:
            parse_engine_spec(uri)
        except InputError as e:
            return f"\"{key}\" holds a bad URI ({e})"
    if s.ap_range is not None:
        a, b = s.ap_range
        if not (0.0 <= a <= b <= 1.0):
            return (f"\"ap_range\" is [{a}, {b}]; it must be two numbers with "
                    "0 <= low <= high <= 1")
    return None


# --- paths ---------------------------------------------------------------------------------


def _absolute(path: Path) -> Path:
    """Return ``path`` made absolute (against the working folder) and normalised."""
    return Path(os.path.abspath(path))


def _store_path(path: Path, folder: Path) -> str:
    """Return ``path`` as stored: relative to ``folder`` when inside it, else absolute;
    forward slashes either way."""
    p = _absolute(path)
    try:
        rel = p.relative_to(folder)
    except ValueError:
        return p.as_posix()
    return rel.as_posix() if rel.parts else "."


def _load_path(text: str, folder: Path) -> Path:
    """Return the stored path ``text`` resolved against ``folder`` when relative."""
    p = Path(text)
    return Path(os.path.normpath(p if p.is_absolute() else folder / p))


# --- save ----------------------------------------------------------------------------------


def session_to_json(session: SessionFile, folder: Path) -> dict[str, Any]:
    """Return the JSON object for ``session`` with paths stored relative to ``folder`` (the
    ``.irv`` file's folder) where they lie inside it."""
    folder = _absolute(folder)
    options = dict(session.options)
    for key in PATH_OPTIONS:
        if isinstance(options.get(key), str) and options[key]:
            options[key] = _store_path(Path(options[key]), folder)
    return {
        "format": SESSION_FORMAT,
        "version": SESSION_VERSION,
        "dataset": _store_path(session.dataset, folder),
        "descriptors": [_store_path(p, folder) for p in session.descriptors],
        "rankings": [_store_path(p, folder) for p in session.rankings],
        "active_method": session.active_method,
        "images": None if session.images is None else _store_path(session.images, folder),
        "reader": session.format,
        "options": options,
        "protocol": session.protocol,
        "ap": session.ap,
        "self_match": session.self_match,
        "selected_query": session.selected_query,
        "top_k": session.top_k,
        "tile_size": session.tile_size,
        "show_ignored": session.show_ignored,
        "filter_text": session.filter_text,
        "failures_only": session.failures_only,
        "ap_range": None if session.ap_range is None else list(session.ap_range),
        "window": dict(session.window),
        "corrections": (None if session.corrections is None
                        else _store_path(session.corrections, folder)),
        "ann_names": (None if session.ann_names is None
                      else _store_path(session.ann_names, folder)),
        "reranked": [{"descriptor": i, "spec": spec} for i, spec in session.reranked],
        "approximate": [{"descriptor": i, "spec": spec} for i, spec in session.approximate],
        "engine": None if session.engine is None else {
            "uri": session.engine[0], "collection": session.engine[1],
            "names": session.engine[2]},
        "engines": [{"descriptor": i, "uri": uri, "collection": collection, "names": names}
                    for i, (uri, collection, names) in session.engines],
        "active_rerank": session.active_rerank,
        "compare_method": session.compare_method,
        "compare_rerank": session.compare_rerank,
    }


def save_session(path: Path, session: SessionFile) -> None:
    """Write ``session`` to ``path`` as ``.irv`` JSON, atomically: the old file stays intact
    when anything fails. Returns nothing; InputError when the folder is missing or cannot be
    written, or when ``options`` holds a value JSON cannot store."""
    path = Path(path)
    data = session_to_json(session, _absolute(path).parent)
    try:
        text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    except (TypeError, ValueError) as e:
        raise InputError(f"{path}: cannot save the session: the reader options hold a value "
                         f"JSON cannot store ({e})") from None
    with atomic_open(path, newline="\n") as stream:
        stream.write(text)


# --- load ----------------------------------------------------------------------------------

def load_session(path: Path) -> SessionFile:
    """Return the session stored in the ``.irv`` file ``path``, with every path absolute
    (relative ones resolved against the file's folder).

    InputError, one sentence naming the file, when it cannot be read, is not JSON (with line
    and column), is not an irviewer session, was written by a newer irviewer, lacks a
    required key, holds a value of the wrong type or out of range, or names a dataset,
    descriptor file or ranking that no longer exists. The image folder is not checked (the
    GUI shows missing images as such). Unknown keys are ignored (forward compatibility).
    """
    path = Path(path)
    text = read_text(path, "a session file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not valid JSON (line {e.lineno}, column {e.colno}: "
                         f"{e.msg}); fix it in a text editor or save the session again"
                         ) from None
    except ValueError:  # a number of more digits than Python converts (4,300)
        raise InputError(f"{path}: not a session irviewer saved (it holds a number of "
                         "thousands of digits); save the session again") from None
    except RecursionError:
        raise InputError(f"{path}: not a session irviewer saved (its JSON is nested too "
                         "deeply to read); save the session again") from None
    if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT:
        raise InputError(f"{path}: not an irviewer session (it lacks \"format\": "
                         f"\"{SESSION_FORMAT}\"); open a .irv file saved by irviewer")
    r = SessionFields(path, data)
    version = r.require("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise r.wrong("version", "an integer")
    if version > SESSION_VERSION:
        raise r.fail(f"written by a newer irviewer (version {version}); this one reads "
                     f"version {SESSION_VERSION}, so update irviewer to open it")
    if version < 1:
        raise r.fail(f"\"version\" is {version}; irviewer sessions start at version 1")
    folder = _absolute(path).parent

    def a_path(key: str, value: object, what: str, check: bool = True) -> Path:
        if not isinstance(value, str) or not value:
            raise r.wrong(key, "a non-empty string (a path)")
        p = _load_path(value, folder)
        if check and not p.exists():
            raise r.fail(f"the {what} {value} named in the session no longer exists "
                         f"(looked for {p}); move it back or edit the session")
        return p

    dataset = a_path("dataset", r.require("dataset"), "dataset file")
    def paths(key: str, what: str) -> tuple[Path, ...]:
        raw = data.get(key, [])
        if isinstance(raw, str):
            raw = [raw]
        if not isinstance(raw, list) or not all(isinstance(x, str) and x for x in raw):
            raise r.wrong(key, "a list of paths (strings)")
        return tuple(a_path(key, x, what) for x in raw)

    descriptors = paths("descriptors", "descriptor file")
    rankings = paths("rankings", "ranking file")
    images_text = data.get("images")
    images = None if images_text is None else a_path("images", images_text, "", check=False)

    options = data.get("options", {})
    if not isinstance(options, dict):
        raise r.wrong("options", "an object")
    options = dict(options)
    problem = option_problem(options)
    if problem is not None:
        raise r.fail(f"{problem}; edit the session")
    for key in PATH_OPTIONS:
        if isinstance(options.get(key), str) and options[key]:
            options[key] = str(_load_path(options[key], folder))

    ap_range_raw = data.get("ap_range")
    ap_range: tuple[float, float] | None = None
    if ap_range_raw is not None:
        if (not isinstance(ap_range_raw, list) or len(ap_range_raw) != 2
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                           and math.isfinite(x) for x in ap_range_raw)):
            raise r.fail("\"ap_range\" must be null or a list of two numbers [low, high] "
                         "within 0..1; edit the session")
        ap_range = (float(ap_range_raw[0]), float(ap_range_raw[1]))
    window = data.get("window", {})
    if not isinstance(window, dict) or not all(isinstance(v, str) for v in window.values()):
        raise r.fail("\"window\" must be an object of strings; delete it to reset the "
                     "window layout")
    reranked_raw, approximate_raw = r.pairs("reranked"), r.pairs("approximate")
    engine = r.engine("engine")
    engines = r.engine_pairs("engines")
    fields: dict[str, Any] = dict(
        dataset=dataset,
        descriptors=descriptors,
        rankings=rankings,
        active_method=r.integer("active_method", 0),
        images=images,
        format=r.string("reader", None, nullable=True),
        options=options,
        protocol=r.string("protocol", None, nullable=True),
        ap=r.string("ap", None, nullable=True),
        self_match=r.string("self_match", None, nullable=True),
        selected_query=r.string("selected_query", None, nullable=True),
        top_k=r.integer("top_k", RESULTS_SHOWN),
        tile_size=r.integer("tile_size", 132),
        show_ignored=r.boolean("show_ignored", False),
        filter_text=r.string("filter_text", "", nullable=False) or "",
        failures_only=r.boolean("failures_only", False),
        ap_range=ap_range,
        window=dict(window),
        corrections=None if data.get("corrections") is None else a_path(
            "corrections", data["corrections"], "", check=False),
        ann_names=None if data.get("ann_names") is None else a_path(
            "ann_names", data["ann_names"], "", check=False),
        reranked=reranked_raw,
        approximate=approximate_raw,
        engine=engine,
        engines=engines,
        active_rerank=r.string("active_rerank", None, nullable=True),
        compare_method=r.optional_integer("compare_method"),
        compare_rerank=r.string("compare_rerank", None, nullable=True),
    )
    try:
        return SessionFile(**fields)
    except InputError as e:
        message = str(e).removeprefix("session: ")
        raise r.fail(f"{message}; edit the session") from None


def read_options(session: SessionFile) -> ReadOptions:
    """Return the session's reader options as :class:`ReadOptions`, each read as its
    :class:`OptionSpec` says: from the "options" object's ``json`` key (a switch's older
    ``legacy_json`` key, holding the field's own value, first), or from the session's own
    field of that name (``images``); keys no option uses are ignored."""
    o = session.options
    values: dict[str, Any] = {}
    for name, spec in reader_options().items():
        if not spec.json:
            values[name] = getattr(session, name)
        elif spec.kind == "switch":
            default = ReadOptions.__dataclass_fields__[name].default
            if spec.legacy_json and spec.legacy_json in o:
                values[name] = bool(o[spec.legacy_json])
            else:
                flag = bool(o.get(spec.json, default != spec.negate))
                values[name] = flag != spec.negate
        elif spec.kind == "words":
            values[name] = tuple(o.get(spec.json) or ())
        elif spec.kind in ("file", "folder"):
            values[name] = Path(o[spec.json]) if o.get(spec.json) else None
        else:
            values[name] = o.get(spec.json) or None
    return ReadOptions(**values)


def open_request(session: SessionFile, k: int = DEFAULT_DEPTH) -> OpenRequest:
    """Return what opening ``session`` must read: its dataset, methods (re-ranked,
    approximate, in its vector engine), reader and options, and its corrections file."""
    engine = session.engine or (None, None, None)
    return OpenRequest(session.dataset, session.descriptors, session.rankings, session.format,
                       read_options(session), k, corrections=session.corrections,
                       ann_names=session.ann_names,
                       reranked=session.reranked, approximate=session.approximate,
                       engine=engine[0], collection=engine[1], engine_names=engine[2],
                       engines=session.engines)


__all__ = [
    "SESSION_FORMAT",
    "SESSION_VERSION",
    "SessionFile",
    "load_session",
    "open_request",
    "read_options",
    "save_session",
    "session_to_json",
]
