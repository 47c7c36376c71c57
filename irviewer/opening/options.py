"""The options several commands share, declared once: the one table every subcommand and the
window's command line build their parsers from, and the one function that turns parsed
arguments into an :class:`~irviewer.opening.request.OpenRequest` (Qt-free).

:data:`OPTIONS` holds, per key, how an option is written (flags, value word, help), how it
parses, and which :class:`OpenRequest` field it fills. The reader options are not written
here: they are the fields of :class:`irviewer.formats.base.ReadOptions`, whose metadata
(:class:`irviewer.formats.base.OptionSpec`) this table, the session file and the Open dialog
all derive their forms from; ``--format`` is :data:`irviewer.formats.base.FORMAT_OPTION`.

Every command parses a shared option the same way. A repeatable option extends: ``-d A -d B``
and ``-d A B`` both give two files. A command with positional arguments after its options
(``irviewer search DATASET -d F PHOTO ...``) adds them with ``one_per_flag=True``: each flag
then takes one value (``-d A -d B``), so the photos stay positional. A command that takes
one value of a repeatable option says so when given more (:func:`at_most_one`) rather than
keeping one silently.

To add a shared option: add an :class:`Option` to :data:`OPTIONS` (with ``request`` naming
the :class:`OpenRequest` field it fills, if any) and its key to the commands that take it
(``add_options(parser, ..., "key")``); a reader option is a new ReadOptions field instead.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from irviewer.core.ann.engine_spec import parse_engine_spec
from irviewer.core.convention_names import AP_DEFINITIONS, AP_RULES, SELF_MATCH_RULES
from irviewer.core.errors import InputError, command_line_text
from irviewer.core.ranking import DEFAULT_DEPTH
from irviewer.core.rerank.spec import help_text as spec_help
from irviewer.core.threads import ENV as THREADS_ENV
from irviewer.core.threads import parse_threads
from irviewer.formats.base import (
    FORMAT_OPTION,
    OptionSpec,
    ReadOptions,
    read_name_list,
    reader_options,
)
from irviewer.formats.collection import is_collection
from irviewer.opening.request import OpenRequest, demo_request


@dataclass(frozen=True)
class Option:
    """One option several commands share.

    Attributes:
        key: its name: the parsed value's attribute (``args.<key>``) and the key messages
            name it by (:func:`irviewer.core.errors.either`'s ``key``).
        flags: the flags (``("-d", "--descriptors")``).
        help: the help line (a command may word it for itself: ``add_options``' ``help``).
        metavar: the word for its value; None for a switch.
        type: converts one value (``Path``, ``int``, ``str``).
        choices: the values it accepts, or None for any.
        default: the value when it is not given (``[]`` for a repeatable option).
        repeatable: it may be given several times, and each time with several values.
        switch: a flag without value: ``store_true`` (``store_false`` when ``negate``).
        negate: see ``switch``.
        request: the :class:`OpenRequest` field it fills (:func:`request_from_args`): a
            tuple of every value for a repeatable option, unless ``request_one``.
        request_one: a repeatable option whose request field holds one value (filled when
            the option is given once).
        reader: it is a :class:`ReadOptions` field (:func:`read_options` fills it).
        list_file: a second flag naming a text file of further values, one per line.
        label: what the window calls it (the Open dialog's field), or None.
    """

    key: str
    flags: tuple[str, ...]
    help: str
    metavar: str | None = None
    type: Callable[[str], Any] | None = None
    choices: tuple[str, ...] | None = None
    default: Any = None
    repeatable: bool = False
    switch: bool = False
    negate: bool = False
    request: str | None = None
    request_one: bool = False
    reader: bool = False
    list_file: str | None = None
    label: str | None = None

    @property
    def flag(self) -> str:
        """Return the flag messages and help name it by (the shortest: ``-d``)."""
        return min(self.flags, key=len)


_VALUE_TYPES: dict[str, Callable[[str], Any]] = {"folder": Path, "file": Path, "text": str,
                                                 "words": str}


def _from_spec(key: str, spec: OptionSpec, reader: bool, request: str | None = None
               ) -> Option:
    """Return the table's :class:`Option` for a reader option's :class:`OptionSpec`."""
    words = spec.kind == "words"
    return Option(key, (spec.flag,), spec.help, metavar=spec.metavar,
                  type=_VALUE_TYPES.get(spec.kind),
                  default=[] if words else spec.negate if spec.kind == "switch" else None,
                  repeatable=words, switch=spec.kind == "switch", negate=spec.negate,
                  request=request, reader=reader, list_file=spec.list_file, label=spec.label)


#: ``--threads``' help line (every command that computes takes it).
THREADS_HELP = (f"use at most N threads: irviewer's own and those of the matrix multiply "
                f"(BLAS), OpenMP and OpenCV (default: {THREADS_ENV} when set, else one per "
                "core this process may use, as its CPU affinity and its container's CPU "
                f"quota allow; this option wins over {THREADS_ENV}); no number depends on it")


def thread_count(text: str) -> int:
    """Return ``--threads``' value: a whole number, at least 1 (argparse's type)."""
    try:
        return parse_threads(text, "--threads")
    except InputError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give a whole number of threads, at least 1") from None


def _table() -> dict[str, Option]:
    request_options = [
        Option("demo", ("--demo",), "use the built-in museum demo", switch=True,
               default=False),
        Option("descriptors", ("-d", "--descriptors"), "descriptor files, one method each: "
               ".npz, .npy, .fvecs, .mat or .h5, or an hpatches-benchmark descriptors/<name> "
               "folder of <sequence>/<type>.csv", metavar="FILE", type=Path, default=[],
               repeatable=True, request="descriptors", label="Descriptors or rankings"),
        Option("ranking", ("--ranking",), "precomputed result lists, one method each: a TREC "
               "run (qid Q0 docid rank score tag), an .npz with indices (and scores) or an "
               "HPatches .results file", metavar="FILE", type=Path, default=[],
               repeatable=True, request="rankings", label="Descriptors or rankings"),
        _from_spec("format", FORMAT_OPTION, reader=False, request="format"),
        *(_from_spec(name, spec, reader=True) for name, spec in reader_options().items()),
        Option("protocol", ("--protocol",), "protocol to use instead of the dataset's "
               "default(s)", metavar="NAME", default=[], repeatable=True, request="protocol",
               request_one=True, label="Protocol"),
        Option("ap", ("--ap",), "AP integration rule (default: the protocol's): "
               + "; ".join(f"{rule}: {AP_DEFINITIONS[rule]}" for rule in AP_RULES),
               choices=AP_RULES, request="ap"),
        Option("self_match", ("--self-match",), "keep the query's own image in the ranking "
               "or remove it (default: the protocol's)", choices=SELF_MATCH_RULES,
               request="self_match"),
        Option("corrections", ("--corrections",), "apply this label corrections file "
               "(query,item,label,...) to the ground truth before scoring; the output says "
               "so (never applied unless given, so a published number never changes "
               "silently)", metavar="FILE", type=Path, request="corrections"),
        Option("rerank", ("--rerank",), "also each descriptor file F re-ranked by SPEC, as "
               "the method 'F + SPEC' after F (docs/rerank.md defines each method). "
               + spec_help(), metavar="SPEC",
               type=str, default=[], repeatable=True, request="rerank"),
        Option("ann", ("--ann",), "also each descriptor file F searched by an approximate "
               "index, as the method 'F + SPEC' after F: a FAISS index factory string built "
               "from F's gallery rows (IVF256,Flat, IVF1024,PQ32, HNSW32, OPQ16,IVF256,PQ16) "
               "or a FAISS index file built over F's gallery rows in F's order; search "
               "parameters after a colon (:nprobe=8, :efSearch=64), a comma list of values "
               "sweeps them (:nprobe=1,2,4,8). Inner product on L2-normalised vectors; "
               "compared with F's exact ranking (recall@k, ΔAP; docs/ann.md). Needs "
               "irviewer[ann]", metavar="SPEC", type=str, default=[], repeatable=True,
               request="ann"),
        Option("engine", ("--engine",), "a vector engine holding the gallery: a Milvus "
               "Lite file (gallery.db) or a Milvus server or cluster (http://host:19530); "
               "the first descriptor file's queries are searched in --collection there, as "
               "the method 'F + milvus:NAME', compared with F's exact ranking where F holds "
               "the gallery too. A token is read from the environment variable "
               "IRVIEWER_MILVUS_TOKEN (never give it in the URI). Search parameters after a "
               "colon as for --ann, sent as the collection's index type takes them "
               "(gallery.db:nprobe=8, http://host:19530:ef=64,128; a comma list sweeps). Needs "
               "irviewer[milvus]; docs/ann.md", metavar="URI",
               type=str, default=None, request="engine", label="Vector engine"),
        Option("ann_names", ("--ann-names",), "for an --ann index file built in another "
               "order than the dataset's gallery or the descriptor file's rows: a UTF-8 text "
               "file whose line i + 1 names the image of FAISS id i (names match as "
               "everywhere, without folder or image extension; docs/ann.md)", metavar="FILE",
               type=Path, default=None, request="ann_names"),
        Option("collection", ("--collection",), "the engine's collection holding the gallery "
               "(with --engine)", metavar="NAME", type=str, default=None,
               request="collection", label="Engine collection"),
        Option("engine_names", ("--engine-names",), "the collection's field holding the "
               "gallery's image names (default: its primary key)", metavar="FIELD", type=str,
               default=None, request="engine_names", label="Names field"),
        Option("threads", ("--threads",), THREADS_HELP, metavar="N", type=thread_count),
        Option("depth", ("--depth",), "how many results per query the stored result lists "
               "keep; the ranks of positives are exact at any depth (default "
               f"{DEFAULT_DEPTH})", metavar="N", type=int, default=DEFAULT_DEPTH, request="k"),
    ]
    return {o.key: o for o in request_options}


#: Every shared option, by key, in the order help lists them.
OPTIONS: dict[str, Option] = _table()
#: The dataset reader's options: ``--format`` and every :class:`ReadOptions` field.
READER: tuple[str, ...] = ("format", *reader_options())
#: The methods: descriptor files and precomputed rankings.
METHODS: tuple[str, ...] = ("descriptors", "ranking")
#: The scoring conventions a command may override.
CONVENTIONS: tuple[str, ...] = ("protocol", "ap", "self_match")


#: What a command's DATASET is, unless the command says more.
DATASET_HELP = "dataset file or folder (e.g. a CSV manifest)"


def add_dataset(parser: argparse.ArgumentParser, help: str = DATASET_HELP,
                optional: bool = True) -> None:
    """Add the DATASET positional every command that opens a dataset takes (``optional``:
    the command also opens the demo without one)."""
    parser.add_argument("dataset", type=Path, nargs="?" if optional else None, help=help)


def refuse_old_name(parser: argparse.ArgumentParser, old: str, new: str) -> None:
    """Make the removed option ``old`` fail with one line naming ``new``, what it was called
    in this command (``--top-k`` was ``eval``'s ``--depth`` but the viewer's ``--results``),
    so an old command line is refused, never read with another meaning."""

    class Refused(argparse.Action):
        def __call__(self, parser: argparse.ArgumentParser, _namespace: argparse.Namespace,
                     values: object, option_string: str | None = None) -> None:
            parser.exit(2, f"irviewer: error: {option_string} is no longer an option; use "
                           f"{new}\n")

    parser.add_argument(old, action=Refused, nargs="?", help=argparse.SUPPRESS)


def add_options(parser: argparse.ArgumentParser, *keys: str, one_per_flag: bool = False,
                help: Mapping[str, str] | None = None, required: Iterable[str] = ()) -> None:
    """Add the shared options ``keys`` (keys of :data:`OPTIONS`) to ``parser``, parsed as
    the table says. ``one_per_flag``: each flag of a repeatable option takes one value (for
    commands with positional arguments after the options); ``help``: a command's own help
    line per key; ``required``: keys the command cannot do without."""
    help, required = dict(help or {}), set(required)
    for key in keys:
        o = OPTIONS[key]
        text = help.get(key, o.help)
        if o.switch:
            parser.add_argument(*o.flags, dest=key, help=text, default=o.default,
                                action="store_false" if o.negate else "store_true")
            continue
        kwargs: dict[str, Any] = dict(dest=key, help=text, metavar=o.metavar, type=o.type,
                                      choices=o.choices, default=o.default,
                                      required=key in required)
        if o.repeatable:
            kwargs.update(action="append" if one_per_flag else "extend",
                          nargs=None if one_per_flag else "+", default=[])
            kwargs["help"] = f"{text} (repeatable" + ("" if one_per_flag else
                                                       ", each time one or more") + ")"
        parser.add_argument(*o.flags, **kwargs)
        if o.list_file:
            parser.add_argument(o.list_file, dest=f"{key}_file", type=Path, metavar="FILE",
                                help=argparse.SUPPRESS if key in help else
                                f"file with one {o.metavar or 'value'} per line")


def read_options(args: argparse.Namespace) -> ReadOptions:
    """Return the :class:`ReadOptions` the parsed ``args`` name (fields a command does not
    take keep their defaults)."""
    values: dict[str, Any] = {}
    for f in fields(ReadOptions):
        o = OPTIONS.get(f.name)
        if o is None or not o.reader or not hasattr(args, f.name):
            continue
        value = getattr(args, f.name)
        if o.repeatable:
            value = list(value or [])
            listed = getattr(args, f"{f.name}_file", None)
            if listed is not None:
                value += read_name_list(listed)
            value = tuple(value)
        elif isinstance(value, str) and o.type is str:
            value = value or None
        values[f.name] = value
    return ReadOptions(**values)


def request_from_args(args: argparse.Namespace, demo_methods: int = 2) -> OpenRequest:
    """Return the :class:`OpenRequest` that parsed ``args`` name: ``args.dataset`` (None or
    ``--demo``: the built-in demo, with its first ``demo_methods`` descriptor files unless
    ``-d`` or ``--ranking`` names methods), every option of :data:`OPTIONS` that fills a
    request field, and the reader options; InputError for an ``--engine`` that is empty or
    holds a password. A repeatable option that fills a single field
    (``--protocol``) fills it when given once (a command that takes several handles them
    itself; :func:`at_most_one` refuses more where one is meant)."""
    values: dict[str, Any] = {}
    for o in OPTIONS.values():
        if o.request is None or not hasattr(args, o.key):
            continue
        value = getattr(args, o.key)
        if o.key == "engine" and value is not None:
            parse_engine_spec(value)  # an empty URI or one with a password: one sentence
        if o.request_one:
            value = value[0] if len(value or ()) == 1 else None
        elif o.repeatable:
            value = tuple(value or ())
        if value is not None:
            values[o.request] = value
    dataset = getattr(args, "dataset", None)
    if dataset is None or getattr(args, "demo", False):
        demo = demo_request()
        dataset = demo.dataset
        if not values.get("descriptors") and not values.get("rankings"):
            values["descriptors"] = demo.descriptors[:demo_methods]
    return replace(OpenRequest(Path(dataset)), options=read_options(args), **values)


def window_corrections_note(request: OpenRequest, doing: str) -> str | None:
    """Return a note for a command that scores or audits ``request`` when the dataset has
    label corrections made in the window that the request does not apply (the command
    line applies only the file given with ``--corrections``): where they are (beside the
    dataset, or in the user's data folder when its folder cannot be written) and the option
    that applies them (``doing``: what the command does with them, "scores", "audits");
    None when there are none."""
    from irviewer.formats.corrections_file import corrections_place
    from irviewer.opening.request import unapplied_corrections

    found = unapplied_corrections(request)
    if found is None:
        return None
    place = corrections_place(Path(request.dataset))
    where = (f" (in your data folder: {place.beside.parent} cannot be written)"
             if place.kept and found == place.path else "")
    return (f"the label corrections made in the window for this dataset are in {found}"
            f"{where}; they are not applied ({OPTIONS['corrections'].flag} {found} {doing} "
            "with them)")


def dataset_problem(args: argparse.Namespace, demo_flag: bool = True,
                    methods: bool = True) -> str | None:
    """Return what is missing or contradictory in the dataset and methods ``args`` name, as
    a sentence for ``parser.error`` naming the command's options (``demo_flag``: the command
    takes ``--demo``; ``methods``: it needs -d or --ranking), or None when nothing is."""
    dataset, demo = getattr(args, "dataset", None), getattr(args, "demo", False)
    given = [*getattr(args, "descriptors", ()), *getattr(args, "ranking", ())]
    if demo and dataset is not None:
        return "--demo takes no DATASET argument"
    if demo or dataset is not None:
        if (methods and not demo and not given and dataset is not None
                and not is_collection(Path(dataset))):
            return "give the dataset's descriptor file with -d FILE (or a precomputed " \
                   "ranking with --ranking FILE); a collection made by irviewer index " \
                   "needs neither"
        return None
    if given:
        return ("give the DATASET before -d and --ranking (DATASET -d FILE ...): they take "
                "every file that follows them"
                + ("; --demo uses the built-in demo's dataset" if demo_flag else ""))
    return "give a DATASET" + (" (or --demo)" if demo_flag else "")


def at_most_one(args: argparse.Namespace, keys: Sequence[str], what: str,
                instead: str = "") -> None:
    """Raise InputError when the options ``keys`` together give more than one value (a
    command that takes one ``what``), naming them and ``instead`` (where several go)."""
    given = [(OPTIONS[k].flag, v) for k in keys for v in (getattr(args, k, None) or ())]
    if len(given) > 1:
        flags = " / ".join(dict.fromkeys(OPTIONS[k].flag for k in keys))
        shown = ", ".join(Path(str(v)).name for _flag, v in given)
        raise InputError(f"give one {what} ({flags}); {len(given)} given ({shown})"
                         f"{'; ' + instead if instead else ''}")


def takes(parser: argparse.ArgumentParser) -> Callable[[str], bool]:
    """Return whether ``parser`` takes the option with a given key (its ``dest``)."""
    keys = {a.dest for a in parser._actions}
    return keys.__contains__


def for_command(message: object, parser: argparse.ArgumentParser | None) -> str:
    """Return ``message`` (an InputError, Sentence or string) worded for the command whose
    parser is ``parser``: its placeholders in their command-line wording, without the
    clauses of options the command does not take."""
    return command_line_text(message, None if parser is None else takes(parser))
