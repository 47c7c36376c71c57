"""bench_machine.py's parts at a tiny size: the stage budget finds every stage's functions
in the code as it is, the threads' identity check compares real documents, the GPU cases
run their torch code on the CPU and agree with numpy, and without a GPU they say why."""

from __future__ import annotations

import json
import time

import bench_eval
import bench_machine
import machine_stages
import pytest
from machine_torch import TorchSizes, torch_cases

TINY = bench_machine.Sizes(market=(60, 400), map_rows=6000, msmt=(60, 400), audit=(60, 400),
                           torch=TorchSizes(queries=30, gallery=300, dim=64, map_queries=7,
                                            map_gallery=2000, all_pairs=500,
                                            block_bytes=4 * 500 * 128))


def test_the_stage_budget_finds_every_stage_and_adds_up_to_the_process(tmp_path):
    stages = bench_machine.stages_case(TINY, tmp_path, repeats=1)
    rows = dict(stages["rows"])
    assert None not in rows.values(), rows  # a stage whose functions were renamed
    assert all(seconds >= 0 for seconds in rows.values())
    parts = sum(seconds for stage, seconds in stages["rows"] if stage != "total")
    assert parts == pytest.approx(rows["total"], abs=0.02)
    assert rows["ranking"] > 0 and rows["reading the dataset"] > 0
    assert stages["hash_thread_s"] > 0  # the descriptor file was hashed
    record = json.loads((tmp_path / "stages.json").read_text())
    assert record["code"] == 0


def test_a_stage_counts_only_its_own_time_and_a_generator_only_between_its_yields():
    clock = machine_stages.Clock()

    def numbers():
        time.sleep(0.02)
        yield 1
        time.sleep(0.02)
        yield 2

    timed = clock.timed("gen", numbers)

    def consume():
        out = []
        for x in timed():
            out.append(x)
            time.sleep(0.03)
        return out

    assert clock.timed("outer", consume)() == [1, 2]
    assert 0.04 <= clock.totals["gen"] < 0.055
    assert 0.06 <= clock.totals["outer"] < 0.075
    assert not clock.stack


def test_the_threads_identity_compares_the_documents_of_tied_descriptors(tmp_path):
    identity = bench_machine.identity_case(TINY, tmp_path, cuda=False)
    assert identity["compared"][0] == "--threads 1"
    assert identity["identical"] is True
    assert identity["n_tied"] > 0  # the sign descriptors do tie
    assert identity["bytes"] > 1000


def test_the_tied_descriptors_tie(tmp_path):
    _, npz = bench_eval.market_folder(tmp_path, 20, 100)
    tied = bench_machine.tied_descriptors(npz, tmp_path / "signs.npz")
    import numpy as np

    with np.load(tied) as archive:
        assert set(np.unique(archive["gallery"])) == {-1.0, 1.0}
        assert archive["queries"].shape == (20, 64)


def test_the_gpu_cases_say_why_they_are_skipped():
    assert bench_machine.gpu_case(None, TINY, {"gpu": {"torch": None, "cuda": False}}) == \
        "skipped: torch is not installed"
    assert bench_machine.gpu_case(None, TINY, {"gpu": {"torch": "2.9", "cuda": False}}) == \
        ("skipped: torch 2.9 sees no CUDA device (torch.cuda.is_available() is False)")


def test_the_torch_cases_run_on_the_cpu_and_agree_with_numpy():
    pytest.importorskip("torch")
    out = torch_cases("cpu", TINY.torch, repeats=1)
    assert out["agrees"] is True
    for key in ("multiply", "top200", "full_sort", "to_device", "f16_top100",
                "all_pairs_top21"):
        assert 0 < out[key] < 60, key


def test_the_torch_cases_switch_tf32_off():
    torch = pytest.importorskip("torch")
    torch.backends.cuda.matmul.allow_tf32 = True
    from machine_torch import full_float32

    full_float32(torch)
    assert torch.backends.cuda.matmul.allow_tf32 is False
    assert torch.get_float32_matmul_precision() == "highest"


def test_the_machine_is_described_with_irviewers_cores():
    import machine_info

    info = machine_info.describe()
    from irviewer.core.threads import usable_cores

    assert info["cores"]["usable"] == usable_cores()
    text = "\n".join(machine_info.lines(info))
    assert f"{usable_cores()} cores usable" in text and "GPU:" in text


def test_the_device_comparison_follows_evals_options(monkeypatch):
    from irviewer.cli import command_module

    module = command_module("eval")
    assert bench_machine.eval_has_device() is False  # eval has no GPU backend yet
    add = module.add_arguments

    def with_device(parser):
        add(parser)
        parser.add_argument("--device")

    monkeypatch.setattr(module, "add_arguments", with_device)
    assert bench_machine.eval_has_device() is True


def test_a_failing_section_is_one_line_and_the_others_still_run(capsys):
    results: dict = {}

    def failing():
        raise SystemExit("irviewer eval x failed (2): no such folder")

    bench_machine.guarded(results, "d", failing, print)
    bench_machine.guarded(results, "audit", lambda: {"ratio": 2.0}, print)
    assert results == {"d": {"error": "irviewer eval x failed (2): no such folder"},
                       "audit": {"ratio": 2.0}}
    assert capsys.readouterr().out == ("\nd: FAILED: irviewer eval x failed (2): no such "
                                       "folder\n{'ratio': 2.0}\n")
