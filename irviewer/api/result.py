"""What :func:`irviewer.evaluate` returns: :class:`Result`, the ``irviewer eval --json``
document of the data (:meth:`Result.to_dict`) with typed access to its numbers — each
(method, protocol) entry a :class:`Scored`, its summary a mapping of floats, its per-query
values numpy arrays."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from irviewer.api.errors import ArgumentError

if TYPE_CHECKING:
    from irviewer.opening.opener import Opened
    from irviewer.opening.request import OpenRequest


#: A summary value: a fraction in [0, 1] (None where no query was evaluated), or a count.
Number = float | int | None


@dataclass(frozen=True)
class Scored:
    """One method scored under one protocol (an entry of the document's ``evaluations``).

    ``summary`` maps each metric to its mean over the evaluated queries, a fraction
    (``"mAP"``, ``"mP@1"``, ``"CMC@1"``, ``"MAP@R"``, ...) and the counts ``n_evaluated``,
    ``n_skipped``, ``n_tied``; ``conventions`` says for each metric how it is computed and
    after which benchmark; ``queries`` are the query names, in the order of every
    per-query array; ``headline`` is the metric the protocol leads with.
    """

    method: str
    protocol: str
    headline: str
    summary: Mapping[str, Number]
    conventions: Mapping[str, str]
    queries: tuple[str, ...]
    entry: Mapping[str, Any]

    @property
    def mAP(self) -> float | None:  # noqa: N802 - the metric's own name
        """Return the mean AP over the evaluated queries (None when none was)."""
        value = self.summary.get("mAP")
        return None if value is None else float(value)

    @property
    def n_evaluated(self) -> int:
        """Return how many queries were evaluated (have a positive left)."""
        return int(self.summary["n_evaluated"] or 0)

    @property
    def n_skipped(self) -> int:
        """Return how many queries were skipped: no positive left after the protocol's
        removals; left out of every mean, never counted as 0 or 1."""
        return int(self.summary["n_skipped"] or 0)

    @property
    def keys(self) -> tuple[str, ...]:
        """Return the per-query values there are (``"AP"``, ``"P@1"``, ...,
        ``"first_positive_rank"``, ``"n_positives"``, the tie bounds)."""
        first = self.entry["queries"][0] if self.entry["queries"] else {}
        return tuple(k for k, v in first.items()
                     if k not in ("name", "skipped", "all_conventions", "tied")
                     and not isinstance(v, str | dict))

    def per_query(self, key: str) -> np.ndarray:
        """Return per-query value ``key`` of every query, in :attr:`queries`' order, as a
        float64 array: NaN for a skipped query (and for a value without one, such as the
        expected AP where no closed form exists); ``first_positive_rank`` is 1-based, NaN
        when no positive was retrieved. ArgumentError for a key there is not."""
        if key not in self.keys:
            raise ArgumentError("key", f"key: no per-query value is called {key!r}; the "
                                f"values are {', '.join(self.keys)}")
        return np.array([np.nan if q.get(key) is None else q[key]
                         for q in self.entry["queries"]], dtype=np.float64)

    @property
    def ap(self) -> np.ndarray:
        """Return every query's AP (:meth:`per_query` of ``"AP"``)."""
        return self.per_query("AP")

    @property
    def skipped(self) -> tuple[str, ...]:
        """Return the names of the skipped queries (no positive left)."""
        return tuple(q["name"] for q in self.entry["queries"] if "skipped" in q)

    @property
    def tied(self) -> np.ndarray:
        """Return, per query, whether its AP depends on the order of tied scores."""
        return np.array([bool(q["tied"]) for q in self.entry["queries"]], dtype=bool)

    def __repr__(self) -> str:
        said = ", ".join(f"{k}={_percent(v)}" for k, v in self.summary.items()
                         if not k.startswith("n_") and not k.endswith(_BOUNDS))
        return (f"<{self.method} under {self.protocol}: {said}; "
                f"{self.n_evaluated} queries evaluated>")


_BOUNDS = ("_best", "_worst", "_expected")


def _percent(value: Number) -> str:
    return "n/a" if value is None else f"{100 * float(value):.2f}%"


class Result:
    """What :func:`irviewer.evaluate` found: the document ``irviewer eval --json`` writes for
    the same data (:meth:`to_dict`), each (method, protocol) entry as a :class:`Scored`
    (:attr:`evaluations`, :meth:`get`), and :attr:`summary` and :meth:`per_query` of the
    first for the common case of one method under one protocol.
    """

    def __init__(self, document: dict, opened: Opened, rows: tuple[str, ...] = (),
                 vectors_argument: str = "embeddings") -> None:
        self._document = document
        self._opened = opened
        self.rows, self.vectors_argument = rows, vectors_argument
        self.evaluations: tuple[Scored, ...] = tuple(
            Scored(entry["method"], entry["protocol"]["name"],
                   entry["protocol"].get("headline") or "mAP", dict(entry["summary"]),
                   dict(entry["conventions"]), tuple(q["name"] for q in entry["queries"]),
                   entry)
            for entry in document["evaluations"])

    @property
    def request(self) -> OpenRequest:
        """Return what was opened (:func:`irviewer.view` opens it again)."""
        return self._opened.request

    def to_dict(self) -> dict:
        """Return the ``irviewer eval --json`` document of the data (a new copy each call):
        the same keys and numbers the command writes, the path of data given in memory
        null and its sha256 that of the arrays' bytes."""
        return copy.deepcopy(self._document)

    def to_json(self) -> str:
        """Return :meth:`to_dict` as the JSON text ``irviewer eval --json`` writes."""
        from irviewer.reports.eval_report import report_json

        return report_json(self._document)

    def write_json(self, path: str | Path) -> None:
        """Write :meth:`to_json` to ``path``, atomically (a reader never sees half a file)."""
        from irviewer.io.atomic import atomic_write_text

        atomic_write_text(Path(path), self.to_json())

    def table(self) -> str:
        """Return the table ``irviewer eval`` prints: every metric with its convention."""
        from irviewer.reports.eval_report import format_table

        return format_table(self._document)

    @property
    def methods(self) -> tuple[str, ...]:
        """Return the names of the methods scored, in the document's order."""
        return tuple(dict.fromkeys(s.method for s in self.evaluations))

    @property
    def protocols(self) -> tuple[str, ...]:
        """Return the names of the protocols scored, in the document's order."""
        return tuple(dict.fromkeys(s.protocol for s in self.evaluations))

    def get(self, method: str | None = None, protocol: str | None = None) -> Scored:
        """Return ``method`` under ``protocol`` (None: the first); ArgumentError naming the
        one there is not."""
        for key, value, known in (("method", method, self.methods),
                                  ("protocol", protocol, self.protocols)):
            if value is not None and value not in known:
                raise ArgumentError(key, f"{key}: {value!r} was not scored; there "
                                    f"{'is' if len(known) == 1 else 'are'} "
                                    f"{', '.join(map(repr, known))}")
        return next(s for s in self.evaluations
                    if (method is None or s.method == method)
                    and (protocol is None or s.protocol == protocol))

    @property
    def summary(self) -> Mapping[str, Number]:
        """Return the first method's summary under the first protocol (:attr:`Scored.summary`)."""
        return self.evaluations[0].summary

    @property
    def queries(self) -> tuple[str, ...]:
        """Return the query names, in the order of every per-query array."""
        return self.evaluations[0].queries

    def per_query(self, key: str = "AP", method: str | None = None,
                  protocol: str | None = None) -> np.ndarray:
        """Return per-query value ``key`` of ``method`` under ``protocol`` (None: the first)
        (:meth:`Scored.per_query`)."""
        return self.get(method, protocol).per_query(key)

    @property
    def notes(self) -> tuple[str, ...]:
        """Return the sentences about the data (the document's ``dataset.notes``): queries
        alone in their label, rows matched by position, an array copied from a GPU to the
        host, ..."""
        return tuple(self._document["dataset"]["notes"])

    @property
    def copied_to_host(self) -> bool:
        """Return True when an array given lived on a GPU and was copied to the host to be
        ranked (:attr:`notes` says which and from where)."""
        return any(m.made.source.held is not None and m.made.source.held.copied
                   for m in self._opened.methods.values())

    def __repr__(self) -> str:
        lines = [repr(s) for s in self.evaluations]
        return "Result(" + ";\n       ".join(lines) + ")"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython's display
        printer.text("Result(...)" if cycle else self.table())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Result) and json.dumps(self._document, sort_keys=True) \
            == json.dumps(other._document, sort_keys=True)

    __hash__ = None  # type: ignore[assignment]


__all__ = ["Number", "Result", "Scored"]
