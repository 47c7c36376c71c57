"""The approximate-index SPEC: which FAISS index, and which search parameters.

Grammar (``irviewer eval ... --ann SPEC``)::

    SPEC   := INDEX [":" PARAMS]
    INDEX  := a FAISS index factory string ("IVF256,Flat", "IVF1024,PQ32", "HNSW32",
              "OPQ16,IVF256,PQ16": FAISS's own language, built from the descriptor file's
              gallery rows) | the path of a FAISS index file built over those rows
    PARAMS := NAME "=" VALUE ("," VALUE)* ([",:"] NAME "=" VALUE ("," VALUE)*)*

``IVF256,Flat:nprobe=8``, ``HNSW32:efSearch=64``, ``index.faiss:nprobe=1,2,4,8,16``. A
parameter is anything FAISS's ``ParameterSpace`` sets (``nprobe``, ``efSearch``,
``quantizer_efSearch``, ``ht``, ...); a comma list of values *sweeps* it, one setting per
value (several swept parameters: every combination, the first parameter slowest). A factory
string never holds a colon or a path separator, and a path names an existing file or ends
in an index suffix; the parameters follow the first colon after which ``NAME=`` stands, so
a path with a colon (``C:\\x.faiss``) still reads.

Everything is checked before FAISS sees it, since FAISS's own checks end the process: a
factory string's numbers (:mod:`irviewer.core.ann.factory`) and every parameter's name and
value (:data:`FAISS_PARAMETERS`: ``nprobe=0``, ``efSearch=-5``, ``nprobe=1.5`` and
``nprobe=1e12`` are refused in one sentence). A vector engine's URI takes parameters the
same way (``gallery.db:nprobe=8``, :func:`irviewer.core.ann.milvus_engine.parse_engine_spec`),
checked against the collection's index type once it is known.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path

from irviewer.core.ann.factory import INT_MAX, check_factory_text
from irviewer.core.errors import InputError, either

#: How a message names the SPEC: the option on the command line, the field in the window.
WHERE = either("--ann", "approximate index", key="ann")

#: Suffixes by which a SPEC names an index file that does not exist (yet).
INDEX_SUFFIXES = (".faiss", ".index", ".idx", ".ivf", ".hnsw", ".bin")

#: The most settings one SPEC may sweep (every combination of its values).
MAX_SETTINGS = 1000
#: The widest search beam (HNSW's efSearch, Milvus's ef): FAISS allocates and clears a heap
#: of that many entries per search, so efSearch=2000000000 took 83 s per query on 42
#: vectors; 2**20 is far beyond any recall a beam still buys.
MAX_BEAM = 2**20

_PARAM_START = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*=")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Parameter:
    """A search parameter: what it sets, and the values it takes (``low`` to ``high``,
    whole numbers unless ``whole`` is False)."""

    name: str
    what: str
    low: float
    high: float
    whole: bool = True

    def problem(self, value: float, written: str, given: str | None = None) -> str | None:
        """Return why ``value`` (written ``written``, the parameter named ``given``: its
        name, or ``quantizer_NAME``) is not a value of this parameter, as the end of a
        sentence, or None when it is one."""
        name = given or self.name
        takes = (f"{name} ({self.what}) takes "
                 + (f"whole numbers from {show_value(self.low)}" if self.whole else
                    f"numbers from {show_value(self.low)}")
                 + (f" to {self.high:,.0f}" if self.high < INT_MAX else ""))
        if self.whole and not float(value).is_integer():
            return f"{name}={written} is not a whole number; {takes}"
        if value < self.low:
            return f"{name}={written} is below {show_value(self.low)}; {takes}"
        if value > self.high:
            return (f"{name}={written} is above {self.high:,.0f}, the most "
                    + (f"FAISS takes; {takes}" if self.high >= INT_MAX else f"it takes; {takes}"))
        return None


#: FAISS's search parameters (what ``ParameterSpace.set_index_parameter`` sets), by name;
#: ``quantizer_NAME`` sets NAME on an inverted file's coarse quantizer.
FAISS_PARAMETERS: dict[str, Parameter] = {p.name: p for p in (
    Parameter("nprobe", "the inverted lists an IVF index searches", 1, INT_MAX),
    Parameter("efSearch", "the width of HNSW's search beam", 1, MAX_BEAM),
    Parameter("max_codes", "the most codes an IVF index visits, 0 for all", 0, 2.0**53),
    Parameter("ht", "the Hamming threshold of polysemous PQ codes", 0, INT_MAX),
    Parameter("k_factor", "how many more results IVFPQR re-ranks", 1, 1024, whole=False),
    Parameter("k_factor_rf", "how many more results a refined index re-ranks", 1, 1024),
)}
#: FAISS's parameters that are not for searching.
_NOT_SEARCH = {"efConstruction": "HNSW's parameter for building the graph",
               "verbose": "FAISS's logging"}


def faiss_parameter(name: str) -> Parameter | None:
    """Return the FAISS search parameter ``name`` (``quantizer_`` prefixes read through),
    or None when FAISS has no such search parameter."""
    while name.startswith("quantizer_"):
        name = name.removeprefix("quantizer_")
    return FAISS_PARAMETERS.get(name)


def check_faiss_parameter(where: str, name: str, value: float, written: str) -> None:
    """Return None when ``name=written`` is a FAISS search parameter and one of its values;
    InputError (one sentence beginning with ``where``) otherwise."""
    parameter = faiss_parameter(name)
    if parameter is None:
        base = name.rsplit("quantizer_", 1)[-1]
        if base in _NOT_SEARCH:
            raise InputError(f"{where}: {name} is not a search parameter ({_NOT_SEARCH[base]}); "
                             "search parameters are " + _faiss_names())
        raise InputError(f"{where}: FAISS has no search parameter {name}; it has "
                         + _faiss_names())
    problem = parameter.problem(value, written, name)
    if problem is not None:
        raise InputError(f"{where}: {problem}")


def _faiss_names() -> str:
    names = list(FAISS_PARAMETERS)
    return (", ".join(f"{n} (IVF)" if n == "nprobe" else f"{n} (HNSW)" if n == "efSearch"
                      else n for n in names[:-1])
            + f", {names[-1]}, and quantizer_NAME for an IVF index's quantizer")


@dataclass(frozen=True)
class AnnSetting:
    """One index with one value per search parameter: what one method "F + SETTING" is."""

    index: str
    is_file: bool
    params: tuple[tuple[str, float], ...] = ()

    @property
    def text(self) -> str:
        """Return the setting as a SPEC ("IVF256,Flat:nprobe=8")."""
        if not self.params:
            return self.index
        return f"{self.index}:" + ",".join(f"{k}={show_value(v)}" for k, v in self.params)

    @property
    def params_text(self) -> str:
        """Return the parameters alone ("nprobe=8"; "" when none)."""
        return ",".join(f"{k}={show_value(v)}" for k, v in self.params)

    @property
    def label(self) -> str:
        """Return the setting as method names and tables show it: an index file by its file
        name, then the parameters ("IVF256,Flat:nprobe=8", "gallery.faiss:nprobe=8")."""
        if not self.is_file:
            return self.text
        base = Path(self.index).name
        return f"{base}:{self.params_text}" if self.params else base


@dataclass(frozen=True)
class AnnSpec:
    """A parsed SPEC: the index (factory string or file) and each search parameter's
    values (more than one value: a sweep)."""

    index: str
    is_file: bool
    params: tuple[tuple[str, tuple[float, ...]], ...] = ()

    @property
    def text(self) -> str:
        """Return the SPEC in its canonical form."""
        if not self.params:
            return self.index
        return f"{self.index}:" + ",".join(
            f"{k}=" + ",".join(show_value(v) for v in vs) for k, vs in self.params)

    @property
    def is_sweep(self) -> bool:
        """Return True when a parameter takes more than one value."""
        return any(len(vs) > 1 for _, vs in self.params)

    @property
    def swept(self) -> tuple[str, ...]:
        """Return the names of the parameters that take more than one value."""
        return tuple(k for k, vs in self.params if len(vs) > 1)

    def settings(self) -> tuple[AnnSetting, ...]:
        """Return every setting of the sweep (one when nothing is swept), in order: every
        combination of the values, the first parameter varying slowest."""
        names = [k for k, _ in self.params]
        combos = itertools.product(*(vs for _, vs in self.params))
        return tuple(AnnSetting(self.index, self.is_file, tuple(zip(names, c, strict=True)))
                     for c in combos)


def engine_label(collection: str, params_text: str = "") -> str:
    """Return what follows "F + " in the name of a method searched in a vector engine's
    ``collection`` with the search parameters ``params_text`` ("milvus:paintings",
    "milvus:paintings:nprobe=8")."""
    return f"milvus:{collection}" + (f":{params_text}" if params_text else "")


def parse_ann_spec(text: str) -> AnnSpec:
    """Return the :class:`AnnSpec` that ``text`` writes (grammar above), checked before
    FAISS sees it; InputError (one sentence) for an empty SPEC, a parameter without a value,
    a value that is not a number, a parameter given twice, a parameter FAISS has not or a
    value it does not take (:func:`check_faiss_parameter`), a sweep of more than
    :data:`MAX_SETTINGS` settings, or a factory string whose text FAISS would choke on
    (:func:`irviewer.core.ann.factory.check_factory_text`)."""
    raw = str(text).strip()
    if not raw:
        raise InputError(f"{WHERE}: the SPEC is empty; give a FAISS index factory string "
                         "(e.g. IVF256,Flat:nprobe=8) or an index file")
    index, rest = split_spec(raw)
    if not index:
        raise InputError(f"{WHERE} {shorten(raw)}: no index before the parameters; give a FAISS "
                         "factory string (e.g. IVF256,Flat) or an index file")
    is_file = _names_file(index)
    where = f"{WHERE} {shorten(raw)}"
    if not is_file:
        check_factory_text(index, where)
    params = parse_params(rest, where)
    for name, values in params:
        for value, written in values:
            check_faiss_parameter(where, name, value, written)
    spec = AnnSpec(index, is_file, tuple((k, tuple(dict.fromkeys(v for v, _ in vs)))
                                         for k, vs in params))
    check_sweep_size(where, spec.params)
    return spec


def parse_params(rest: str, where: str) -> list[tuple[str, list[tuple[float, str]]]]:
    """Return the parameters written ``rest`` (what follows a SPEC's index: ``NAME=VALUE
    (,VALUE)*`` separated by ``,`` or ``:``) as (name, [(value, as written), ...]) in
    order; InputError (one sentence beginning with ``where``) for a name that is not one,
    a parameter given twice or without a value, or a value that is not a finite number."""
    params: dict[str, list[tuple[float, str]]] = {}
    current: str | None = None
    for token in (t.strip() for t in re.split(r"[,:]", rest) if rest):
        if not token:
            continue
        if "=" in token:
            name, value = (s.strip() for s in token.split("=", 1))
            if not _NAME.fullmatch(name):
                raise InputError(f"{where}: {shorten(name)!r} is not a parameter name")
            if name in params:
                raise InputError(f"{where}: {name} is given twice; give its values "
                                 f"as one list ({name}=1,2,4)")
            current, params[name] = name, []
        else:
            value = token
        if current is None:
            raise InputError(f"{where}: a value {shorten(token)!r} without a parameter name")
        params[current].append((_number(where, current, value), value))
    for name, values in params.items():
        if not values:
            raise InputError(f"{where}: {name} has no value")
    return list(params.items())


def check_sweep_size(where: str, params: tuple[tuple[str, tuple[float, ...]], ...]) -> None:
    """Return None when the parameters sweep at most :data:`MAX_SETTINGS` settings;
    InputError (one sentence) otherwise."""
    n = 1
    for _, values in params:
        n *= len(values)
    if n > MAX_SETTINGS:
        raise InputError(f"{where}: the parameters' values make {n:,} settings to search; "
                         f"irviewer sweeps at most {MAX_SETTINGS:,} at once")


def shorten(text: str, at_most: int = 80) -> str:
    """Return ``text`` as a message shows it: at most ``at_most`` characters, a character
    that does not print as \ufffd."""
    text = "".join(c if c.isprintable() else "\ufffd" for c in text[:at_most + 1])
    return text if len(text) <= at_most else f"{text[:at_most - 1]}\u2026"


def split_spec(raw: str) -> tuple[str, str]:
    """Return (index, parameters) of a SPEC: split at the first colon followed by
    ``NAME=``."""
    for m in re.finditer(":", raw):
        if _PARAM_START.match(raw, m.end()) or not raw[m.end():].strip():
            return raw[:m.start()].strip(), raw[m.end():]
    return raw, ""


def _names_file(index: str) -> bool:
    """Return True when ``index`` names an index file rather than a factory string."""
    if "/" in index or "\\" in index or Path(index).suffix.lower() in INDEX_SUFFIXES:
        return True
    try:
        return Path(index).exists()
    except (OSError, ValueError):  # a name too long (or with a NUL) names no file
        return False


def _number(where: str, name: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise InputError(f"{where}: {name}={shorten(value)} is not a number") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise InputError(f"{where}: {name}={shorten(value)} is not a finite number")
    return number


def show_value(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


__all__ = ["FAISS_PARAMETERS", "MAX_BEAM", "MAX_SETTINGS", "WHERE", "AnnSetting", "AnnSpec",
           "Parameter", "check_faiss_parameter", "check_sweep_size", "engine_label",
           "faiss_parameter", "parse_ann_spec", "parse_params", "shorten", "show_value",
           "split_spec"]
