"""What the import contracts cannot check. The layers themselves (which package imports
which, and that nothing below the window imports Qt) are import-linter contracts in
pyproject.toml, run by `lint-imports`; these tests check what happens at run time (a
headless command never loads Qt, whatever it imports lazily or by name), sizes, and rules
that are not imports."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO_PHOTO = ROOT / "resources" / "demo" / "images" / "aivazovsky_the-ninth-wave_query.jpg"


def run_python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


HEADLESS = ("eval", "compare", "audit", "apply-corrections", "search", "index")


@pytest.fixture(scope="module")
def headless_case(tmp_path_factory) -> Path:
    """A three-image manifest, two descriptor files, a corrections file and a photo."""
    folder = tmp_path_factory.mktemp("headless")
    (folder / "set.csv").write_text("image,instance,role\na.jpg,x,both\nb.jpg,x,gallery\n"
                                    "c.jpg,y,gallery\n")
    names = np.array(["a", "b", "c"])
    np.savez(folder / "d.npz", features=np.eye(3, dtype=np.float32), names=names)
    np.savez(folder / "e.npz", features=np.eye(3, dtype=np.float32)[::-1].copy(), names=names)
    (folder / "fixes.csv").write_text("query,item,label\n,c,x\n")  # c relabelled x
    from tests.collection_photos import flat_folder

    flat_folder(folder / "photos", 2)
    return folder


def headless_argv(command: str, case: Path) -> list[str]:
    """Return a run of ``command`` that succeeds on ``case``."""
    dataset, d, e = str(case / "set.csv"), str(case / "d.npz"), str(case / "e.npz")
    return {"eval": ["eval", dataset, "-d", d],
            "compare": ["compare", dataset, "-d", d, "-d", e],
            "audit": ["audit", dataset, "-d", d, "-d", e],
            "apply-corrections": ["apply-corrections", dataset, "--corrections",
                                  str(case / "fixes.csv"), "--out", str(case / "fixed.csv")],
            "search": ["search", "--demo", str(DEMO_PHOTO), "--top", "3"],
            "index": ["index", str(case / "photos"), "--out", str(case / "collection"),
                      "--workers", "1"]}[command]


def test_the_headless_runs_cover_every_command_but_figure():
    from irviewer.cli import COMMANDS

    assert set(HEADLESS) == set(COMMANDS) - {"figure"}  # figure paints with Qt


@pytest.mark.parametrize("command", HEADLESS)
def test_a_headless_command_never_loads_qt(command, headless_case):
    """Run in a fresh interpreter, with everything the run imports lazily or by name."""
    code = ("import sys\nfrom irviewer.cli import main\n"
            f"rc = main({headless_argv(command, headless_case)!r})\n"
            "assert rc == 0, rc\n"
            "print(sorted(k for k in sys.modules if k.split('.')[0] in "
            "('PySide6', 'pyqtgraph', 'shiboken6')))")
    assert run_python(code).splitlines()[-1] == "[]"


def test_a_plain_eval_never_loads_scipy(headless_case):
    """scipy (the statistics, the sparse k-reciprocal encoding, .mat files) costs 0.1-0.3 s
    to import: a plain `irviewer eval` of a manifest and an .npz needs none of it."""
    code = ("import sys\nfrom irviewer.cli import main\n"
            f"rc = main({headless_argv('eval', headless_case)!r})\n"
            "assert rc == 0, rc\n"
            "print(sorted(k for k in sys.modules if k.split('.')[0] == 'scipy'))")
    assert run_python(code).splitlines()[-1] == "[]"


def test_no_gui_module_is_over_500_lines():
    long = {p.relative_to(ROOT).as_posix(): n for p in (ROOT / "irviewer" / "gui").rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500}
    assert long == {}


#: The names by which a module would make threads of its own for the window.
THREAD_NAMES = {"QRunnable", "QThreadPool", "QThread", "Thread", "ThreadPoolExecutor"}


def thread_names_used(source: str) -> set[str]:
    """Return the thread-making names ``source`` imports, subclasses or calls."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            found |= {a.name for a in node.names} & THREAD_NAMES
        elif isinstance(node, ast.Attribute) and node.attr in THREAD_NAMES:
            found.add(node.attr)
        elif isinstance(node, ast.Name) and node.id in THREAD_NAMES:
            found.add(node.id)
    return found


def test_the_window_works_off_its_thread_only_through_workers():
    """gui/workers.py is the window's one way to run work off the GUI thread: no other
    module of gui/ (nor cli/, which starts it) makes a QRunnable, a QThreadPool, a QThread
    or a Python thread of its own."""
    found = {p.relative_to(ROOT).as_posix(): names
             for folder in ("gui", "cli") for p in (ROOT / "irviewer" / folder).rglob("*.py")
             if p.name != "workers.py" or folder != "gui"
             if (names := thread_names_used(p.read_text(encoding="utf-8")))}
    assert found == {}
    assert thread_names_used((ROOT / "irviewer" / "gui" / "workers.py").read_text()) \
        >= {"QThreadPool"}


def test_the_thread_check_finds_a_qrunnable_subclass_and_a_pool():
    assert thread_names_used("from PySide6.QtCore import QRunnable\n"
                             "class Job(QRunnable): pass") == {"QRunnable"}
    assert thread_names_used("import PySide6.QtCore as C\n"
                             "pool = C.QThreadPool.globalInstance()") == {"QThreadPool"}
    assert thread_names_used("import threading\nthreading.Thread(target=print)") == {"Thread"}


def untyped_parameters(source: str) -> set[str]:
    """Return the functions of ``source`` that take a parameter typed ``Any``."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            if any((isinstance(a.annotation, ast.Name) and a.annotation.id == "Any")
                   or (isinstance(a.annotation, ast.Constant) and a.annotation.value == "Any")
                   for a in arguments):
                found.add(node.name)
    return found


def test_no_controller_takes_a_window_typed_any():
    """A feature's controller says what it takes from the window in a Protocol (see
    docs/architecture.md), never ``window: Any``."""
    found = {p.relative_to(ROOT).as_posix(): names
             for p in (ROOT / "irviewer" / "gui").glob("*/controller.py")
             if (names := untyped_parameters(p.read_text(encoding="utf-8")))}
    assert found == {}
    assert untyped_parameters("def __init__(self, window: Any) -> None: ...") == {"__init__"}


def test_no_module_of_the_package_is_over_500_lines_unless_it_says_why():
    """A long module holds one idea and its docstring says so ("one idea")."""
    long = {p.relative_to(ROOT).as_posix(): n for p in (ROOT / "irviewer").rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500
            and "one idea" not in (ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")))
                                   or "").lower()}
    assert long == {}


def test_the_audit_is_one_subpackage_checked_for_cycles():
    """The label audit lives in core/audit/ (no core/audit*.py beside it), and the acyclic
    import contract covers the modules of every package, the audit's included."""
    assert sorted(p.name for p in (ROOT / "irviewer" / "core").glob("audit*.py")) == []
    assert (ROOT / "irviewer" / "core" / "audit" / "__init__.py").is_file()
    config = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'type = "acyclic_siblings"\nancestors = ["irviewer"]' in config


def test_the_split_modules_stay_short():
    """Ranking, corrections and the session file are split by idea: each room <= 500 lines."""
    rooms = [ROOT / "irviewer" / "core" / "ranking", ROOT / "irviewer" / "core" / "corrections",
             ROOT / "irviewer" / "opening" / "session_file.py"]
    for room in rooms:
        for path in ([room] if room.suffix else sorted(room.glob("*.py"))):
            assert path.is_file(), path
            n = len(path.read_text(encoding="utf-8").splitlines())
            assert n <= 500, (path.relative_to(ROOT).as_posix(), n)


def test_at_most_twelve_modules_at_the_top_of_gui():
    top = sorted(p.name for p in (ROOT / "irviewer" / "gui").glob("*.py"))
    assert len(top) <= 12, top


def test_tests_name_no_folder_of_one_machine_and_find_the_samples_in_one_place():
    """A test runs on any clone: it names no absolute path of the developers' machine, and
    the real sample files are found by tests/conftest.py's ``shared_samples`` alone (beside
    the checkout, skipped with a reason when absent)."""
    machine = tuple(f"/{folder}/" for folder in ("work", "home", "Users", "root"))
    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(ROOT).as_posix()
        if path.name == "test_architecture.py":
            continue
        offenders += [f"{where}: {m}" for m in machine if m in text]
        if path.parent.name != "benchmarks" and path.name != "conftest.py" and (
                '"shared" / "samples"' in text or "shared/samples" in text):
            offenders.append(f"{where}: builds the samples' path itself")
    assert offenders == []


def test_an_absent_sample_skips_the_test_and_says_which(monkeypatch, tmp_path):
    from tests import conftest

    monkeypatch.setattr(conftest, "SHARED_SAMPLES", tmp_path / "elsewhere")
    with pytest.raises(pytest.skip.Exception, match="elsewhere/oxford5k-gt is absent"):
        conftest.shared_sample("oxford5k-gt")
    (tmp_path / "elsewhere" / "oxford5k-gt").mkdir(parents=True)
    assert conftest.shared_sample("oxford5k-gt") == tmp_path / "elsewhere" / "oxford5k-gt"


def test_shared_constants_are_defined_once():
    """A rule lives in one place: these names are assigned in exactly one module."""
    defined_in = {"SESSION_SUFFIX": "irviewer/opening/request.py",
                  "TOP_K_RANGE": "irviewer/opening/request.py",
                  "RANKING_SUFFIXES": "irviewer/opening/request.py",
                  "IMAGE_SUFFIXES": "irviewer/core/image_names.py"}
    for name, owner in defined_in.items():
        owners = [p.relative_to(ROOT).as_posix() for p in (ROOT / "irviewer").rglob("*.py")
                  if f"\n{name} = " in p.read_text(encoding="utf-8")]
        assert owners == [owner], (name, owners)


def test_reader_and_core_messages_name_options_neutrally():
    """A sentence the window shows must not name a command-line flag: readers and the core
    name options with irviewer.core.errors.option()/either(), each edge fills in its word."""
    import io
    import re
    import tokenize

    flag = re.compile(r"(^|[\s(])--[a-z]")
    offenders = []
    for folder in ("core", "formats"):
        for path in sorted((ROOT / "irviewer" / folder).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            for tok in tokenize.generate_tokens(io.StringIO(source).readline):
                text = tok.string
                if tok.type != tokenize.STRING or text.lstrip("rbfuRBFU").startswith(
                        ('"""', "'''")):
                    continue  # docstrings may name flags
                if flag.search(text) and "either(" not in source.splitlines()[tok.start[0] - 1]:
                    offenders.append(f"{path.name}:{tok.start[0]}: {text[:60]}")
    assert offenders == []


def test_a_subcommand_imports_no_other_commands_module(tmp_path):
    """`irviewer eval` builds only its own parser: the other commands' modules (compare,
    figure, audit, search, ...) are not imported, which keeps a headless run's start short."""
    code = ("import sys\nfrom irviewer.cli import COMMANDS, main\n"
            "try:\n    main(['eval', '--help'])\nexcept SystemExit:\n    pass\n"
            "loaded = [c for c in COMMANDS if 'irviewer.cli.' + c.replace('-', '_') "
            "in sys.modules]\nprint(loaded)")
    assert run_python(code).splitlines()[-1] == "['eval']"


def string_literals(path: Path) -> list[str]:
    """Return the values of the plain string literals of ``path`` (not f-strings)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
    return out


def modules_spelling(words: set[str]) -> list[str]:
    """Return the package's modules with a string literal that is exactly one of ``words``."""
    return sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "irviewer").rglob("*.py")
                  if words & set(string_literals(p)))


def test_the_convention_names_are_spelled_in_one_module():
    """The AP rules (finite, trapezoid, interpolated, 11point) and the self-match rules
    (keep, remove) are named in core/convention_names.py; every other module imports them."""
    owner = ["irviewer/core/convention_names.py"]
    assert modules_spelling({"finite", "trapezoid", "interpolated", "11point"}) == owner
    assert modules_spelling({"keep", "remove"}) == owner


def test_the_figure_formats_are_listed_in_one_module():
    """The list of figure suffixes and the sentence refusing another are written in
    view/figure_formats.py only: the command's help, the Export dialog and the figure writer
    (one device per suffix, in the list's order) take them from there."""
    import re

    suffix = re.compile(r"\.(pdf|svg|png)\b")

    def lists_formats(text: str) -> bool:  # two suffixes or more, or the sentence
        return len(set(suffix.findall(text))) > 1 or "a figure is written as" in text

    spelling = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "irviewer").rglob("*.py")
                      if any(lists_formats(s) for s in string_literals(p)))
    assert spelling == ["irviewer/view/figure_formats.py"]
    from irviewer.gui.figure_writer import _DEVICES
    from irviewer.view.figure_formats import SUFFIXES

    assert tuple(_DEVICES) == SUFFIXES


def test_no_module_retypes_the_re_ranking_defaults():
    """Every help text that states a re-ranking default is generated from the spec table
    (core/rerank/spec.py, its only owner), so a default changes in one place."""
    import re

    from irviewer.core.rerank.spec import METHODS

    defaults = {f"{p.key}={p.default:g}" for rule in METHODS.values() for p in rule.params}
    assert "alpha=3" in defaults and "k1=20" in defaults
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, defaults)) + r")(?![\w.])")
    offenders = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "irviewer").rglob("*.py")
                       if p.name != "spec.py" and any(pattern.search(s)
                                                     for s in string_literals(p)))
    assert offenders == []


def test_no_issue_numbers_in_the_package_or_its_tests():
    """The code and its tests say what is, not how it came to be: no issue's number in a
    docstring or a comment (the word issue followed by a number, a number after # in
    parentheses, a pull request's number); a test's docstring says what it tests."""
    import re

    history = re.compile(r"\bissues?\s*#?\d+|\(#\d+\)|\bPR\s*#\d+", re.IGNORECASE)
    offenders = [f"{p.relative_to(ROOT).as_posix()}:{i}"
                 for folder in ("irviewer", "tests") for p in (ROOT / folder).rglob("*.py")
                 for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if history.search(line)]
    assert offenders == []


def test_the_dataset_positional_is_declared_once():
    """Every command that opens a dataset takes its DATASET through
    opening/options.add_dataset; no command declares its own."""
    offenders = [p.relative_to(ROOT).as_posix() for p in (ROOT / "irviewer").rglob("*.py")
                 if 'add_argument("dataset"' in p.read_text(encoding="utf-8")
                 and p.name != "options.py"]
    assert offenders == []



def test_colours_live_in_one_module():
    """Every colour is named in view/palette.py: no colour literal (#rgb, #rrggbb, a named
    colour, an (r, g, b) triple) in any other module; the window's theme, the slides and
    the figure export read the palette."""
    import re

    hex_colour = re.compile(r"#[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?(?:[0-9a-fA-F]{2})?\b")
    named = {"white", "black", "w", "k", "red", "green", "blue", "gray", "grey"}
    numeric = re.compile(r"\b(?:QColor|mkColor|mkBrush|mkPen)\(\s*\d")
    owner = ROOT / "irviewer" / "view" / "palette.py"
    offenders = []
    for path in sorted((ROOT / "irviewer").rglob("*.py")):
        if path == owner:
            continue
        where = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef))
                      and n.body and isinstance(n.body[0], ast.Expr)}
        for node in ast.walk(tree):
            is_text = (isinstance(node, ast.Constant) and isinstance(node.value, str)
                       and id(node) not in docstrings)
            if is_text and (hex_colour.search(node.value) or (
                    node.value in named and where.startswith("irviewer/gui/"))):
                offenders.append(f"{where}:{node.lineno}: {node.value[:40]!r}")
        offenders += [f"{where}: {m.group(0)}" for m in numeric.finditer(text)]
    assert offenders == []
    for reader in ("gui/theme.py", "gui/presentation/slide.py", "gui/figure_painter.py"):
        assert "from irviewer.view import palette" in (ROOT / "irviewer" / reader).read_text(
            encoding="utf-8"), reader
