"""FAISS in its child process: an assertion, a crash or a memory exhaustion there is a
sentence here, never the end of irviewer's process; a stopped search leaves no child."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from irviewer.core.ann import faiss_index
from irviewer.core.ann.faiss_index import iter_build_factory, iter_search, set_parameters
from irviewer.core.ann.faiss_process import ChildFailedError, FaissProcess
from irviewer.core.ann.spec import parse_ann_spec
from irviewer.core.errors import InputError
from irviewer.core.progress import result_of

pytest.importorskip("faiss")


def _faiss_children() -> list[multiprocessing.process.BaseProcess]:
    return [p for p in multiprocessing.active_children() if p.name == "irviewer-faiss"]


@pytest.fixture
def gallery():
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((300, 16)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_an_assertion_in_faiss_is_a_sentence_not_the_end_of_the_process(gallery):
    # HNSW0 passes no SPEC check here (the build is asked for directly): FAISS's own
    # assertion ends its child process, and this one says so.
    with pytest.raises(InputError) as e:
        result_of(iter_build_factory("HNSW0", gallery, None, len(gallery)))
    assert str(e.value).startswith(
        "--ann HNSW0: FAISS crashed adding the gallery to this index (FAISS stopped on one "
        "of its own checks (an assertion)); check the factory string against FAISS's index "
        "factory (github.com/facebookresearch/faiss/wiki/The-index-factory)"), str(e.value)
    assert not _faiss_children()


@pytest.mark.parametrize(("signal_number", "reason"), [
    (signal.SIGSEGV, "a segmentation fault"),
    (signal.SIGABRT, "FAISS stopped on one of its own checks (an assertion)"),
    (signal.SIGKILL, "it was killed, perhaps by the system for lack of memory"),
])
def test_a_child_that_dies_is_a_reason_in_words(signal_number, reason):
    process = FaissProcess(None)
    try:
        process.ask("factory", 16, "Flat")
        assert process.pid is not None
        os.kill(process.pid, signal_number)
        with pytest.raises(ChildFailedError) as e:
            process.ask("factory", 16, "Flat")
        assert (e.value.kind, e.value.text) == ("crash", reason)
    finally:
        process.close()


def test_memory_beyond_the_limit_is_a_sentence(gallery, monkeypatch):
    monkeypatch.setattr(faiss_index, "memory_limit", lambda at_most=None: 3 * 2**30 // 2)
    many = np.repeat(gallery, 40, axis=0)  # 12,000 vectors padded to 65,536 dimensions
    start = time.monotonic()
    with pytest.raises(InputError) as e:
        result_of(iter_build_factory("Pad65536,Flat", many, None, len(many)))
    assert str(e.value) == ("--ann Pad65536,Flat: FAISS ran out of memory adding the gallery "
                            "to this index (irviewer lets it use 1.5 GB)")
    assert time.monotonic() - start < 30


def test_too_many_lists_are_refused_before_faiss_allocates_them(gallery):
    start = time.monotonic()
    with pytest.raises(InputError) as e:
        result_of(iter_build_factory("IVF100000000,Flat", gallery, None, len(gallery)))
    assert "IVF100000000 asks for 100,000,000 inverted lists" in str(e.value)
    assert time.monotonic() - start < 1  # no child started, nothing allocated


def test_the_child_reports_faiss_refusals_by_kind():
    process = FaissProcess(None)
    try:
        with pytest.raises(ChildFailedError) as e:
            process.ask("factory", 16, "IVFx,Flat")
        assert (e.value.kind, e.value.text) == ("faiss", "could not parse index string IVFx,Flat")
        process.ask("factory", 16, "Flat")
        with pytest.raises(ChildFailedError) as e:
            process.ask("set", [("nprobe", 2.0)])
        assert (e.value.kind, e.value.text) == ("param", "nprobe")
    finally:
        process.close()
    assert not _faiss_children()


def test_a_stopped_build_leaves_no_child(gallery):
    steps = iter_build_factory("IVF8,Flat", gallery, None, len(gallery))
    stage = ""
    while not stage.startswith("adding"):
        stage = next(steps)[0]
    assert _faiss_children()
    steps.close()
    assert not _faiss_children()


def test_the_index_searches_in_its_child_as_faiss_does_here(gallery):
    import faiss

    built = result_of(iter_build_factory("IVF8,Flat", gallery, None, len(gallery)))
    try:
        beam = set_parameters(built, parse_ann_spec("IVF8,Flat:nprobe=2").settings()[0], "x")
        assert beam is None
        ids, sims, seconds = result_of(iter_search(built, gallery[:20], 10, "searching"))
    finally:
        built.close()
    own = faiss.index_factory(16, "IVF8,Flat", faiss.METRIC_INNER_PRODUCT)
    own.train(gallery)
    own.add(gallery)
    own.nprobe = 2
    dist, found = own.search(gallery[:20], 10)
    np.testing.assert_array_equal(ids, found)
    np.testing.assert_allclose(sims, dist, atol=1e-6)
    assert seconds > 0


def test_the_beam_is_hnsws_efsearch(gallery):
    built = result_of(iter_build_factory("HNSW8", gallery, None, len(gallery)))
    try:
        assert set_parameters(built, parse_ann_spec("HNSW8").settings()[0], "x") == 16
        assert set_parameters(built, parse_ann_spec("HNSW8:efSearch=40").settings()[0],
                              "x") == 40
    finally:
        built.close()


def test_a_script_without_a_main_guard_is_told_why_faiss_did_not_start(tmp_path):
    """Python starts a child process by importing the script that runs: one that builds an
    index at its top level builds again in the child, which ends there; the sentence says
    what to do rather than that FAISS crashed."""
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import numpy as np\n"
        "from irviewer.core.ann.faiss_index import iter_build_factory\n"
        "from irviewer.core.errors import InputError\n"
        "from irviewer.core.progress import result_of\n"
        "rows = np.eye(8, dtype=np.float32)\n"
        "try:\n"
        "    result_of(iter_build_factory('Flat', rows, None, 8))\n"
        "except InputError as e:\n"
        "    print(e)\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, check=False, cwd=str(tmp_path))
    assert ("--ann Flat: FAISS's process did not start (it ended with code 1); a Python "
            "script that calls irviewer must do so under if __name__ == \"__main__\":, as "
            "Python's child processes require") in done.stdout, (done.stdout, done.stderr)
