"""A vector engine as ``--engine`` names it: the URI (a Milvus Lite database or a server),
never with credentials, and the search parameters after it (``gallery.db:nprobe=8``,
``http://host:19530:ef=64,128``; a comma list sweeps), checked as far as the text allows
and then against the collection's index type (:data:`INDEX_PARAMETERS`, from Milvus's
index documentation), and sent in Milvus's names (:func:`search_params`). Pure: nothing
here reaches the engine (:mod:`irviewer.core.ann.milvus_engine` does).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from irviewer.core.ann.factory import INT_MAX
from irviewer.core.ann.spec import (
    MAX_BEAM,
    Parameter,
    check_sweep_size,
    engine_label,
    parse_params,
    shorten,
    show_value,
    split_spec,
)
from irviewer.core.errors import InputError, either

#: How a message names the engine: the option on the command line, the field in the window.
ENGINE_WHERE = either("--engine", "vector engine", key="engine")
#: The environment variable a Milvus token is read from.
TOKEN_VARIABLE = "IRVIEWER_MILVUS_TOKEN"

_USERINFO = re.compile(r"(?<=://)[^/?#]*@")


def without_credentials(uri: str) -> str:
    """Return ``uri`` without the user name and password a server's address may carry
    (``http://user:password@host:19530`` gives ``http://host:19530``)."""
    return _USERINFO.sub("", str(uri))


@dataclass(frozen=True)
class EngineSetting:
    """The engine's URI with one value per search parameter: one method "F +
    milvus:COLLECTION:PARAMS"."""

    uri: str
    params: tuple[tuple[str, float], ...] = ()

    @property
    def params_text(self) -> str:
        """Return the parameters as written after the URI ("nprobe=8"; "" when none)."""
        return ",".join(f"{k}={show_value(v)}" for k, v in self.params)


@dataclass(frozen=True)
class EngineSpec:
    """A vector engine as ``--engine`` names it: its URI (without credentials) and each
    search parameter's values (more than one: a sweep)."""

    uri: str
    params: tuple[tuple[str, tuple[float, ...]], ...] = ()

    @property
    def text(self) -> str:
        """Return the engine as written, parameters after the URI."""
        if not self.params:
            return self.uri
        return f"{self.uri}:" + ",".join(f"{k}=" + ",".join(show_value(v) for v in vs)
                                         for k, vs in self.params)

    def settings(self) -> tuple[EngineSetting, ...]:
        """Return every setting of the sweep (one when nothing is swept), the first
        parameter varying slowest."""
        names = [k for k, _ in self.params]
        combos = itertools.product(*(vs for _, vs in self.params))
        return tuple(EngineSetting(self.uri, tuple(zip(names, c, strict=True)))
                     for c in combos)


def parse_engine_spec(text: str) -> EngineSpec:
    """Return the engine ``text`` names: a Milvus Lite path or a server's URI, then search
    parameters after a colon as a FAISS SPEC takes them (``gallery.db:nprobe=8,16``);
    InputError (one sentence, never repeating a password) for an empty URI, a URI holding
    credentials (the token comes from :data:`TOKEN_VARIABLE`), or parameters that do not
    parse or a value a parameter Milvus knows (:data:`MILVUS_PARAMETERS`) does not take.
    FAISS's names of Milvus's parameters become Milvus's (:data:`ALIASES`). Which
    parameters the collection takes is checked when its index type is known
    (:func:`search_params`)."""
    raw = str(text).strip()
    if not raw:
        raise InputError(f"{ENGINE_WHERE}: the URI is empty; give a Milvus Lite database "
                         "(gallery.db) or a Milvus server (http://host:19530)")
    shown = shorten(without_credentials(raw))
    if without_credentials(raw) != raw:
        raise InputError(f"{ENGINE_WHERE} {shown}: irviewer takes no user name or password "
                         f"in the URI, where the shell's history and saved sessions would "
                         f"keep them; put them in the environment variable {TOKEN_VARIABLE} "
                         "(user:password, or an API key)")
    uri, rest = split_spec(raw)
    where = f"{ENGINE_WHERE} {shown}"
    if not uri:
        raise InputError(f"{where}: no URI before the search parameters")
    params = parse_params(rest, where)
    names = [ALIASES.get(k, k) for k, _ in params]
    if len(set(names)) < len(names):
        raise InputError(f"{where}: ef is given twice (efSearch is FAISS's name for it); give "
                         "its values as one list (ef=64,128)")
    for name, values in params:
        parameter = MILVUS_PARAMETERS.get(ALIASES.get(name, name))
        if parameter is None:
            continue
        for value, written in values:
            problem = parameter.problem(value, written, name)
            if problem is not None:
                raise InputError(f"{where}: {problem}")
    spec = EngineSpec(uri, tuple((ALIASES.get(k, k), tuple(dict.fromkeys(v for v, _ in vs)))
                                 for k, vs in params))
    check_sweep_size(where, spec.params)
    return spec


def engine_labels(engine: str, collection: str) -> list[str]:
    """Return :func:`engine_label` of every setting of the engine ``engine`` (a URI with
    its search parameters, ``--engine``'s value) in ``collection``, in order; one plain
    label when ``engine`` does not parse (opening says why)."""
    try:
        settings = parse_engine_spec(engine).settings()
    except InputError:
        return [engine_label(collection)]
    return [engine_label(collection, s.params_text) for s in settings]


#: Milvus's search parameters (the ``params`` of a search request), by name; the values
#: are those its index documentation gives.
MILVUS_PARAMETERS: dict[str, Parameter] = {p.name: p for p in (
    Parameter("nprobe", "the inverted lists an IVF index searches", 1, 65_536),
    Parameter("ef", "the width of HNSW's search beam", 1, MAX_BEAM),
    Parameter("search_list", "the candidate list of DiskANN", 1, MAX_BEAM),
    Parameter("reorder_k", "the candidates ScaNN re-ranks", 1, MAX_BEAM),
    Parameter("refine_k", "how many more candidates a refined index re-ranks", 1, 1024,
              whole=False),
    Parameter("rbq_query_bits", "the bits of a RaBitQ query", 0, 8),
    Parameter("itopk_size", "the intermediate results of CAGRA", 1, MAX_BEAM),
    Parameter("search_width", "the entry points of CAGRA", 1, INT_MAX),
    Parameter("level", "the precision level of AUTOINDEX", 1, 5),
)}
#: The search parameters each index type takes (Milvus's index documentation); an index
#: type not listed gets the parameters as given, for the engine to check.
INDEX_PARAMETERS: dict[str, tuple[str, ...]] = {
    "FLAT": (), "BRUTE_FORCE": (), "GPU_BRUTE_FORCE": (),
    "IVF_FLAT": ("nprobe",), "IVF_SQ8": ("nprobe",), "IVF_PQ": ("nprobe",),
    "GPU_IVF_FLAT": ("nprobe",), "GPU_IVF_PQ": ("nprobe",),
    "IVF_RABITQ": ("nprobe", "rbq_query_bits", "refine_k"), "SCANN": ("nprobe", "reorder_k"),
    "HNSW": ("ef",), "HNSW_SQ": ("ef", "refine_k"), "HNSW_PQ": ("ef", "refine_k"),
    "HNSW_PRQ": ("ef", "refine_k"), "DISKANN": ("search_list",),
    "GPU_CAGRA": ("itopk_size", "search_width"), "AUTOINDEX": ("level",),
}
#: FAISS's names for Milvus's parameters, taken as Milvus's (``efSearch`` is ``ef``).
ALIASES = {"efSearch": "ef"}
#: The ``ef`` Milvus Lite searches an HNSW index with when none is given
#: (``milvus_lite/index/faiss_hnsw.py``, milvus-lite 3).
LITE_DEFAULT_EF = 64


def search_params(index_type: str, collection: str, setting: EngineSetting,
                  where: str) -> dict[str, Any]:
    """Return the ``params`` of Milvus's search request for ``setting`` on ``collection``,
    whose vector index is of ``index_type``, whole numbers as integers; InputError (one
    sentence beginning with ``where``) for a parameter the index type does not take or a
    value the parameter does not take."""
    takes = INDEX_PARAMETERS.get(index_type.upper())
    out: dict[str, Any] = {}
    for name, value in setting.params:
        given = name
        if takes is not None and name not in takes:
            what = ("takes no search parameter" if not takes else
                    f"takes {', '.join(takes)}, not")
            raise InputError(f"{where}: the {index_type} index of the collection "
                             f"{collection} {what} {given}")
        parameter = MILVUS_PARAMETERS.get(name)
        if parameter is not None:
            problem = parameter.problem(value, show_value(value), given)
            if problem is not None:
                raise InputError(f"{where}: {problem}")
        out[name] = int(value) if float(value).is_integer() else float(value)
    return out


def search_beam(index_type: str, params: dict[str, Any], local: bool) -> int | None:
    """Return the width of the search beam an HNSW collection is searched with: the ``ef``
    given, or Milvus Lite's default (:data:`LITE_DEFAULT_EF`); None for another index type
    or a server's default (which Milvus does not say)."""
    if not index_type.upper().startswith("HNSW"):
        return None
    if "ef" in params:
        return int(params["ef"])
    return LITE_DEFAULT_EF if local else None


__all__ = ["ALIASES", "ENGINE_WHERE", "INDEX_PARAMETERS", "LITE_DEFAULT_EF", "MILVUS_PARAMETERS",
           "TOKEN_VARIABLE", "EngineSetting", "EngineSpec", "engine_labels", "parse_engine_spec",
           "search_beam", "search_params", "without_credentials"]
