"""The re-ranking SPEC: which methods, in which order, with which parameters.

Grammar (``irviewer eval ... --rerank SPEC``)::

    SPEC  := STEP ("+" STEP)*                 applied left to right
    STEP  := NAME [":" PARAM ("," PARAM)*]
    PARAM := KEY "=" NUMBER

``k-reciprocal[:k1=20,k2=6,lambda=0.3]``, ``aqe[:n=2,alpha=3]``, ``dba[:k=10,alpha=3]``;
e.g. ``dba:k=5,alpha=3+aqe:n=2,alpha=3``. Names and keys are case-insensitive; spaces
around the separators are ignored. ``k-reciprocal`` gives distances, not vectors, so it can
only be the last step of a chain. Every parameter a step does not give takes the default of
the paper that defines the method (:data:`METHODS`); the chain remembers which were given
and which were defaults, so a report can say where each value came from.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from irviewer.core.errors import InputError, either

#: How a message names the SPEC: the option on the command line, the field in the window.
WHERE = either("--rerank", "re-ranking", key="rerank")


@dataclass(frozen=True)
class ParamRule:
    """One parameter of a method: its key, whether it is a whole number, its range
    (inclusive), its default and where the default comes from."""

    key: str
    whole: bool
    low: float
    high: float
    default: float
    source: str

    def describe_range(self) -> str:
        """Return the range as a phrase ("a whole number from 1 to 1000")."""
        kind = "a whole number" if self.whole else "a number"
        high = "" if math.isinf(self.high) else f" to {_show(self.high)}"
        return f"{kind} from {_show(self.low)}{high}"


@dataclass(frozen=True)
class MethodRule:
    """One re-ranking method: its SPEC name, its parameters, the paper its definition and
    defaults come from, and whether it gives vectors (then more steps may follow)."""

    name: str
    title: str
    params: tuple[ParamRule, ...]
    paper: str
    defaults_from: str
    gives_vectors: bool

    def param(self, key: str) -> ParamRule | None:
        """Return the rule of parameter ``key``, or None when the method has none."""
        return next((p for p in self.params if p.key == key), None)


# Where each default comes from, as far as a source could be read (docs/rerank.md, "Where
# the defaults come from"): k-reciprocal's are the paper's, as the authors' function says;
# alpha=3 is fast-reid's AQE default (Radenovic et al. weight by cos^alpha, and their text
# could not be checked here); the neighbour counts are irviewer's choices.
_ZHONG = "Zhong et al. CVPR 2017, their Market-1501 setting"
_ALPHA = ("fast-reid's AQE default (TEST.AQE.ALPHA); the cos^alpha weighting is Radenovic "
          "et al. TPAMI 2018's")
_N_OURS = ("irviewer's choice; no paper fixes it (tuned per dataset; fast-reid's AQE "
           "default is 5)")
_K_OURS = "irviewer's choice; no paper fixes it (tuned per dataset)"
_DBA_ALPHA = "irviewer's choice: the same as aqe's alpha (fast-reid's AQE default)"

#: The order the window's dialog chains the methods in: database side, then query side,
#: then k-reciprocal (which must be last): ``dba+aqe+k-reciprocal``.
CHAIN_ORDER = ("dba", "aqe", "k-reciprocal")

#: The methods a SPEC may name, in the order the help lists them.
METHODS: dict[str, MethodRule] = {m.name: m for m in (
    MethodRule(
        "k-reciprocal", "k-reciprocal encoding",
        (ParamRule("k1", True, 1, 1000, 20, _ZHONG), ParamRule("k2", True, 1, 1000, 6, _ZHONG),
         ParamRule("lambda", False, 0.0, 1.0, 0.3, _ZHONG)),
        "Zhong, Zheng, Cao & Li, Re-ranking Person Re-identification with k-reciprocal "
        "Encoding, CVPR 2017",
        "Zhong et al. CVPR 2017 (k1=20, k2=6, lambda=0.3, their setting for Market-1501 and "
        "their function's defaults)",
        gives_vectors=False),
    MethodRule(
        "aqe", "alpha-weighted query expansion",
        (ParamRule("n", True, 0, 1000, 2, _N_OURS),
         ParamRule("alpha", False, 0.0, 100.0, 3.0, _ALPHA)),
        "Radenovic, Tolias & Chum, Fine-tuning CNN Image Retrieval with No Human "
        "Annotation, TPAMI 2018",
        "Radenovic et al. TPAMI 2018's weighting; alpha=3 as fast-reid's AQE default; n=2 "
        "irviewer's choice, since no paper fixes it (it is tuned per dataset)",
        gives_vectors=True),
    MethodRule(
        "dba", "database-side augmentation",
        (ParamRule("k", True, 0, 1000, 10, _K_OURS),
         ParamRule("alpha", False, 0.0, 100.0, 3.0, _DBA_ALPHA)),
        "database-side augmentation (Arandjelovic & Zisserman CVPR 2012; alpha-weighted as "
        "in Radenovic, Tolias & Chum, TPAMI 2018)",
        "k=10 and alpha=3 irviewer's choices (alpha as aqe's), since no paper fixes them",
        gives_vectors=True),
)}


@dataclass(frozen=True)
class Step:
    """One step of a chain: a method and every parameter's value, with whether it was given
    in the SPEC (True) or is the paper's default (False)."""

    method: str
    values: tuple[tuple[str, float, bool], ...]

    def __getitem__(self, key: str) -> float:
        for k, value, _ in self.values:
            if k == key:
                return value
        raise KeyError(key)

    def whole(self, key: str) -> int:
        """Return parameter ``key`` as an int (for the whole-number parameters)."""
        return int(self[key])

    @property
    def rule(self) -> MethodRule:
        """Return the method's rule."""
        return METHODS[self.method]

    def label(self) -> str:
        """Return the step in SPEC form with every parameter ("aqe:n=2,alpha=3")."""
        return f"{self.method}:" + ",".join(f"{k}={_show(v)}" for k, v, _ in self.values)

    def record(self) -> dict[str, object]:
        """Return the step for a JSON report: method, paper and every parameter with its
        value and source ("given" or the paper its default comes from)."""
        rule = self.rule
        return {"method": self.method, "title": rule.title, "paper": rule.paper,
                "params": {k: _param_record(rule.param(k), v, given)  # type: ignore[arg-type]
                           for k, v, given in self.values}}


def _param_record(rule: ParamRule, value: float, given: bool) -> dict[str, object]:
    """Return one parameter for a report: its value and "given" or "default (source)"."""
    return {"value": int(value) if rule.whole else value,
            "source": "given" if given else f"default ({rule.source})"}


@dataclass(frozen=True)
class Chain:
    """A parsed SPEC: its steps, applied left to right, and the text as given."""

    steps: tuple[Step, ...]
    text: str

    def label(self) -> str:
        """Return the chain with every parameter, steps joined by "+"."""
        return "+".join(step.label() for step in self.steps)

    def record(self) -> dict[str, object]:
        """Return the chain for a JSON report's ``rerank`` member."""
        return {"spec": self.text, "chain": self.label(),
                "steps": [step.record() for step in self.steps]}


def parse_spec(text: str) -> Chain:
    """Return the :class:`Chain` a SPEC describes (see the module's grammar).

    InputError, one sentence, for an empty SPEC or step, an unknown method or parameter, a
    parameter that is not KEY=NUMBER, given twice or out of its range, and a step after
    ``k-reciprocal``.
    """
    spec = str(text).strip()
    if not spec:
        raise InputError(f"{WHERE}: the SPEC is empty; give e.g. k-reciprocal, "
                         "aqe:n=2,alpha=3 or dba:k=10,alpha=3+aqe")
    steps: list[Step] = []
    for part in spec.split("+"):
        step = _parse_step(part.strip(), spec)
        if steps and not steps[-1].rule.gives_vectors:
            raise InputError(f"{WHERE}: {steps[-1].method} gives distances, not vectors, so "
                             f"it must be the last step of {spec!r}")
        steps.append(step)
    return Chain(tuple(steps), spec)


def _parse_step(part: str, spec: str) -> Step:
    if not part:
        raise InputError(f"{WHERE}: {spec!r} has an empty step (two '+' in a row, or one "
                         "at an end)")
    name, _, rest = part.partition(":")
    name = name.strip().lower()
    rule = METHODS.get(name)
    if rule is None:
        raise InputError(f"{WHERE}: unknown re-ranking method {name!r} in {spec!r}; known: "
                         f"{', '.join(METHODS)}")
    given: dict[str, float] = {}
    if rest.strip():
        for item in rest.split(","):
            key, eq, raw = item.partition("=")
            key, raw = key.strip().lower(), raw.strip()
            if not eq or not key or not raw:
                raise InputError(f"{WHERE}: {item.strip()!r} in {spec!r} is not KEY=VALUE "
                                 f"(e.g. {rule.params[0].key}={_show(rule.params[0].default)})")
            p = rule.param(key)
            if p is None:
                raise InputError(f"{WHERE}: {name} has no parameter {key!r}; its parameters "
                                 f"are {', '.join(q.key for q in rule.params)}")
            if key in given:
                raise InputError(f"{WHERE}: {name}'s {key} is given twice in {spec!r}")
            given[key] = _value(name, p, raw)
    elif ":" in part:
        raise InputError(f"{WHERE}: {part!r} in {spec!r} has ':' but no parameters after it")
    values = tuple((p.key, given.get(p.key, p.default), p.key in given) for p in rule.params)
    return Step(name, values)


def _value(method: str, rule: ParamRule, raw: str) -> float:
    """Return the value ``raw`` of parameter ``rule`` of ``method``, checked."""
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise InputError(f"{WHERE}: {method}'s {rule.key} must be "
                         f"{rule.describe_range()}, not {raw!r}")
    if rule.whole and value != int(value):
        raise InputError(f"{WHERE}: {method}'s {rule.key} must be a whole number, not {raw!r}")
    if not rule.low <= value <= rule.high:
        raise InputError(f"{WHERE}: {method}'s {rule.key} must be {rule.describe_range()}, "
                         f"not {raw}")
    return float(int(value)) if rule.whole else value


def _show(value: float) -> str:
    """Return a number as a SPEC writes it: 20, 0.3, 3 (no trailing .0)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def write_spec(steps: Sequence[tuple[str, Mapping[str, float]]]) -> str:
    """Return the SPEC of ``steps`` (method name, parameter values), applied in the order
    given, each parameter written only when it differs from its default: ``dba:k=5+aqe``
    (what :func:`parse_spec` reads back into the same values). KeyError for an unknown
    method or parameter."""
    parts = []
    for name, values in steps:
        rule = METHODS[name]
        for key in values:
            if rule.param(key) is None:
                raise KeyError(f"{name} has no parameter {key!r}")
        given = [f"{p.key}={_show(values[p.key])}" for p in rule.params
                 if p.key in values and float(values[p.key]) != p.default]
        parts.append(name + (":" + ",".join(given) if given else ""))
    return "+".join(parts)


def help_text() -> str:
    """Return the SPEC's help: grammar, every method with its defaults and their source."""
    lines = ["SPEC: METHOD[:KEY=VALUE,...], several joined by '+' and applied left to right "
             "(k-reciprocal last). Methods and their defaults:"]
    for rule in METHODS.values():
        params = ",".join(f"{p.key}={_show(p.default)}" for p in rule.params)
        lines.append(f"{rule.name}:{params} ({rule.title}; {rule.defaults_from})")
    return " ".join(lines)
