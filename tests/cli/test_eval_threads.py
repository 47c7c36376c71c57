"""`--threads N` and IRVIEWER_THREADS: every number of `irviewer eval --json` (per-query AP,
tie bounds, every convention, the score distributions) is the same whatever the threads, on
a re-identification set whose sign-binarised descriptors tie often; the cap holds irviewer's
own threads and the BLAS while the command runs, and is lifted after it."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from threadpoolctl import threadpool_info

from irviewer.cli import main
from irviewer.core import descriptors, parallel
from irviewer.core.ranking import gallery, ranker
from tests.core.helpers import tied_vectors

ROOT = Path(__file__).resolve().parents[2]


def tied_reid_set(root: Path) -> tuple[Path, Path]:
    """Write a Market-style folder (40 queries, 360 gallery images of 30 ids on 6 cameras,
    id 0 and -1 images among them) and its 64-d sign descriptors; return (folder, .npz)."""
    rng = np.random.default_rng(11)
    jpeg = io.BytesIO()
    Image.new("RGB", (8, 16), (90, 60, 30)).save(jpeg, format="JPEG")

    def names(pids: np.ndarray, frame0: int) -> list[str]:
        cams = rng.integers(1, 7, len(pids))
        return sorted(f"{'-1' if p < 0 else f'{p:04d}'}_c{c}s1_{frame0 + i:06d}_00.jpg"
                      for i, (p, c) in enumerate(zip(pids.tolist(), cams.tolist(),
                                                     strict=True)))

    g_pid = rng.integers(1, 31, 360)
    g_pid[:20], g_pid[20:50] = -1, 0
    q_names, g_names = names(rng.integers(1, 31, 40), 1000), names(g_pid, 0)
    for sub, listed in (("query", q_names), ("bounding_box_test", g_names)):
        (root / "market" / sub).mkdir(parents=True)
        for name in listed:
            (root / "market" / sub / name).write_bytes(jpeg.getvalue())
    npz = root / "signs.npz"
    np.savez(npz, queries=tied_vectors(rng, "signs", 40, 64),
             gallery=tied_vectors(rng, "signs", 360, 64),
             query_names=np.array(q_names), gallery_names=np.array(g_names))
    return root / "market", npz


def eval_args(folder: Path, npz: Path, out: Path) -> list[str]:
    return ["eval", str(folder), "-d", str(npz), "--conventions", "--scores", "--json",
            str(out)]


def in_subprocess(args: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k != "IRVIEWER_THREADS"}
    subprocess.run([sys.executable, "-m", "irviewer", *args], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=300)


@pytest.fixture
def split_small_blocks(monkeypatch):
    """Split every block between the threads, however small (the set above is small)."""
    for module, name in ((ranker, "PARALLEL_SCORES"), (gallery, "PARALLEL_SCORES"),
                         (descriptors, "_PARALLEL_VALUES")):
        monkeypatch.setattr(module, name, 1)


def test_every_reported_number_is_the_same_whatever_the_threads(tmp_path, monkeypatch,
                                                                 split_small_blocks):
    folder, npz = tied_reid_set(tmp_path)
    documents = {}
    for threads in (1, 2):  # whole processes: the BLAS capped from the command line
        out = tmp_path / f"threads{threads}.json"
        in_subprocess([*eval_args(folder, npz, out), "--threads", str(threads)])
        documents[f"--threads {threads}"] = out.read_text()
    for workers in (1, 3, 5):  # irviewer's own threads, every block split between them
        out = tmp_path / f"workers{workers}.json"
        monkeypatch.setenv("IRVIEWER_THREADS", str(workers))
        assert main(eval_args(folder, npz, out)) == 0
        documents[f"IRVIEWER_THREADS={workers}"] = out.read_text()
    first = json.loads(documents["--threads 1"])
    (ev,) = first["evaluations"]
    assert ev["summary"]["n_tied"] > 10  # the data do tie
    assert all(q.get("AP") is not None for q in ev["queries"] if "skipped" not in q)
    for name, text in documents.items():
        assert text == documents["--threads 1"], name


def test_the_cap_holds_the_command_and_the_blas_and_is_lifted_after(tmp_path, monkeypatch):
    seen = []

    def record(_args):
        seen.append((parallel.WORKERS, max(lib["num_threads"] for lib in threadpool_info()),
                     os.environ.get("OPENBLAS_NUM_THREADS")))
        return 0

    monkeypatch.setattr("irviewer.cli.eval.run_eval", record)
    monkeypatch.setenv("IRVIEWER_THREADS", "2")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    before = parallel.WORKERS, [lib["num_threads"] for lib in threadpool_info()]
    assert main(["eval", "--demo", "--threads", "1"]) == 0  # the option wins
    assert main(["eval", "--demo"]) == 0  # the variable
    assert seen == [(1, 1, "1"), (2, min(2, before[1][0]), "2")]
    assert (parallel.WORKERS, [lib["num_threads"] for lib in threadpool_info()]) == before
    assert "OPENBLAS_NUM_THREADS" not in os.environ


def test_a_bad_thread_count_is_one_line_and_exit_2(capsys, monkeypatch):
    for bad in ("0", "two"):
        with pytest.raises(SystemExit) as stopped:
            main(["eval", "--demo", "--threads", bad])
        assert stopped.value.code == 2
        assert (f"argument --threads: {bad!r}: give a whole number of threads, at least 1"
                in capsys.readouterr().err)
    monkeypatch.setenv("IRVIEWER_THREADS", "x")
    assert main(["eval", "--demo"]) == 2
    assert capsys.readouterr().err == ("irviewer: error: IRVIEWER_THREADS 'x': give a whole "
                                       "number of threads, at least 1\n")


@pytest.mark.parametrize("command", [["eval"], ["compare"], ["figure"], ["audit"],
                                     ["search"], ["index"], ["--help-viewer"]])
def test_every_computing_command_takes_threads_and_says_the_option_wins(capsys, command):
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--threads N" in text or "--threads [N]" in text
    assert "this option wins over IRVIEWER_THREADS" in text
