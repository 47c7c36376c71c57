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
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path

from irviewer.core.errors import InputError, either

#: How a message names the SPEC: the option on the command line, the field in the window.
WHERE = either("--ann", "approximate index", key="ann")

#: Suffixes by which a SPEC names an index file that does not exist (yet).
INDEX_SUFFIXES = (".faiss", ".index", ".idx", ".ivf", ".hnsw", ".bin")

_PARAM_START = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*=")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
        return f"{self.index}:" + ",".join(f"{k}={_show(v)}" for k, v in self.params)

    @property
    def params_text(self) -> str:
        """Return the parameters alone ("nprobe=8"; "" when none)."""
        return ",".join(f"{k}={_show(v)}" for k, v in self.params)

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
            f"{k}=" + ",".join(_show(v) for v in vs) for k, vs in self.params)

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


def engine_label(collection: str) -> str:
    """Return what follows "F + " in the name of a method searched in a vector engine's
    ``collection`` ("milvus:paintings")."""
    return f"milvus:{collection}"


def parse_ann_spec(text: str) -> AnnSpec:
    """Return the :class:`AnnSpec` that ``text`` writes (grammar above); InputError (one
    sentence) for an empty SPEC, a parameter without a value, a value that is not a number,
    or a parameter given twice."""
    raw = str(text).strip()
    if not raw:
        raise InputError(f"{WHERE}: the SPEC is empty; give a FAISS index factory string "
                         "(e.g. IVF256,Flat:nprobe=8) or an index file")
    index, rest = _split(raw)
    if not index:
        raise InputError(f"{WHERE} {raw}: no index before the parameters; give a FAISS "
                         "factory string (e.g. IVF256,Flat) or an index file")
    is_file = _names_file(index)
    params: dict[str, list[float]] = {}
    current: str | None = None
    for token in (t.strip() for t in re.split(r"[,:]", rest) if rest):
        if not token:
            continue
        if "=" in token:
            name, value = (s.strip() for s in token.split("=", 1))
            if not _NAME.fullmatch(name):
                raise InputError(f"{WHERE} {raw}: {name!r} is not a parameter name")
            if name in params:
                raise InputError(f"{WHERE} {raw}: {name} is given twice; give its values "
                                 f"as one list ({name}=1,2,4)")
            current, params[name] = name, []
        else:
            value = token
        if current is None:
            raise InputError(f"{WHERE} {raw}: a value {token!r} without a parameter name")
        params[current].append(_number(raw, current, value))
    for name, values in params.items():
        if not values:
            raise InputError(f"{WHERE} {raw}: {name} has no value")
    return AnnSpec(index, is_file, tuple((k, tuple(dict.fromkeys(v)))
                                         for k, v in params.items()))


def _split(raw: str) -> tuple[str, str]:
    """Return (index, parameters) of a SPEC: split at the first colon followed by
    ``NAME=``."""
    for m in re.finditer(":", raw):
        if _PARAM_START.match(raw, m.end()) or not raw[m.end():].strip():
            return raw[:m.start()].strip(), raw[m.end():]
    return raw, ""


def _names_file(index: str) -> bool:
    """Return True when ``index`` names an index file rather than a factory string."""
    return ("/" in index or "\\" in index or Path(index).suffix.lower() in INDEX_SUFFIXES
            or Path(index).exists())


def _number(raw: str, name: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise InputError(f"{WHERE} {raw}: {name}={value} is not a number") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise InputError(f"{WHERE} {raw}: {name}={value} is not a finite number")
    return number


def _show(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


__all__ = ["WHERE", "AnnSetting", "AnnSpec", "engine_label", "parse_ann_spec"]
