"""Opening as a Qt-free generator: several methods, re-scoring without re-ranking, the
names methods get, and how dropped files are sorted by role."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irviewer.core.errors import InputError
from irviewer.methods.spec import file_names
from irviewer.opening.opener import Opened, Step, iter_open, open_now
from irviewer.opening.request import OpenRequest, classify_paths, demo_request


def test_the_demo_opens_with_both_descriptor_files():
    opened = open_now(demo_request())
    assert list(opened.methods) == ["strong.npz", "weak.npz"]
    strong, weak = (opened.methods[n].evaluations["instance"].summary["mAP"]
                    for n in ("strong.npz", "weak.npz"))
    assert strong == pytest.approx(0.7918, abs=5e-5) and weak == pytest.approx(0.4485, abs=5e-5)
    assert opened.ranking is opened.methods["strong.npz"].ranking


def test_other_conventions_are_rescored_from_the_same_ranking_and_cached():
    opened = open_now(demo_request())
    base = opened.evaluation("weak.npz", "instance")
    assert base is opened.methods["weak.npz"].evaluations["instance"]
    trapezoid = opened.evaluation("weak.npz", "instance", ap="trapezoid")
    assert trapezoid.protocol.ap == "trapezoid" and trapezoid.ranking is base.ranking
    assert trapezoid.summary["mAP"] != base.summary["mAP"]
    assert opened.evaluation("weak.npz", "instance", ap="trapezoid") is trapezoid
    assert opened.evaluation("weak.npz", "instance", ap="finite") is base


def run_steps(request):
    """Return (the progress steps, the Opened the generator returns)."""
    steps = []

    def collect():
        opened = yield from iter_open(request)
        return opened

    gen = collect()
    while True:
        try:
            steps.append(next(gen))
        except StopIteration as done:
            return steps, done.value


def test_progress_steps_name_each_method_and_end_with_the_result():
    steps, opened = run_steps(demo_request())
    stages = [s.stage for s in steps]
    assert stages[0] == "reading the dataset"
    assert "reading the descriptors (weak.npz, 2 of 2)" in stages
    assert any(s.startswith("ranking (strong.npz, 1 of 2)") for s in stages)
    assert isinstance(opened, Opened) and all(isinstance(s, Step) for s in steps)


def test_every_method_of_hpatches_task_lists_keeps_its_progress_label(tmp_path):
    from tests.formats.test_hpatches_tasks import hand_case

    tasks, descriptors = hand_case(tmp_path)
    steps, opened = run_steps(OpenRequest(tasks, (descriptors, descriptors)))
    stages = [s.stage for s in steps]
    assert "reading the descriptors (toy (2), 2 of 2)" in stages
    assert "ranking (toy (2), 2 of 2)" in stages and "scoring (toy (2), 2 of 2)" in stages
    assert list(opened.methods) == ["toy", "toy (2)"]


def test_closing_the_generator_cancels_between_steps(monkeypatch):
    from irviewer.core.ranking import ranker

    blocks = []
    real = ranker.merge_top

    def counting(*args):
        blocks.append(1)
        return real(*args)

    monkeypatch.setattr(ranker, "merge_top", counting)
    monkeypatch.setattr(ranker, "SCORE_BLOCK_BYTES", 1)  # one query per block
    steps = iter_open(demo_request())
    stages = [next(steps).stage for _ in range(4)]
    assert stages[-1].startswith("ranking") and steps.gi_frame is not None
    computed = len(blocks)
    assert computed >= 1
    steps.close()
    with pytest.raises(StopIteration):
        next(steps)
    assert len(blocks) == computed  # nothing was ranked after close()


def test_a_precomputed_ranking_is_a_method_with_its_own_notes(tmp_path):
    manifest, strong = demo_request().dataset, demo_request().descriptors[0]
    run = tmp_path / "partial.run"
    run.write_text("images/leonardo_mona-lisa_query Q0 images/leonardo_mona-lisa_g1 1 0.9 t\n")
    opened = open_now(OpenRequest(manifest, (strong,), (run,)))
    assert list(opened.methods) == ["strong.npz", "partial.run"]
    method = opened.methods["partial.run"]
    assert method.kind == "ranking" and method.ranking.k == 1
    assert method.notes and all(n.startswith("partial.run: ") for n in method.notes)
    assert set(method.notes) <= set(opened.notes)
    assert not any(n.startswith("partial.run: ") for n in opened.dataset.notes)
    assert opened.methods["strong.npz"].notes == ()
    assert method.evaluations["instance"].dataset is opened.dataset
    assert len(method.sha256) == 64 and method.dim is None
    assert opened.methods["strong.npz"].dim > 0


def test_a_request_without_methods_is_a_sentence():
    with pytest.raises(InputError, match="give a descriptor file or a precomputed ranking"):
        open_now(OpenRequest(demo_request().dataset))


@pytest.mark.parametrize(("paths", "names"), [
    (["a/x.npz", "b/y.npz"], ["x.npz", "y.npz"]),
    (["a/x.npz", "b/x.npz"], ["a/x.npz", "b/x.npz"]),
    (["r/a/x.npz", "s/a/x.npz", "t.run"], ["r/a/x.npz", "s/a/x.npz", "t.run"]),
    (["x.npz", "x.npz"], ["x.npz", "x.npz (2)"]),  # the same file twice
    (["/d/a/x.npz", "/d/a/x.npz"], ["x.npz", "x.npz (2)"]),  # absolute, twice
])
def test_method_names_are_short_and_unique(paths, names):
    assert file_names(tuple(Path(p) for p in paths)) == names


def test_dropped_files_are_sorted_by_role(tmp_path):
    np.savez(tmp_path / "d.npz", features=np.zeros((1, 2)), names=np.array(["a"]))
    np.savez(tmp_path / "r.npz", indices=np.zeros((1, 1), dtype=np.int64))
    (tmp_path / "run.txt").write_text("q Q0 g 1 0.5 tag\n")
    (tmp_path / "set.csv").write_text("image,instance,role\n")
    (tmp_path / "gt_files").mkdir()
    paths = [tmp_path / n for n in ("d.npz", "r.npz", "run.txt", "set.csv", "gt_files",
                                    "s.irv", "x.results")]
    roles = classify_paths(paths)
    assert roles.descriptors == (tmp_path / "d.npz",)
    assert roles.rankings == (tmp_path / "r.npz", tmp_path / "run.txt", tmp_path / "x.results")
    assert roles.datasets == (tmp_path / "set.csv", tmp_path / "gt_files")
    assert roles.sessions == (tmp_path / "s.irv",)


def test_dropped_images_are_photos_to_search(tmp_path):
    """An image file dropped on the window is a visitor's photo, whatever the case of its
    suffix; a folder named like an image stays a dataset."""
    (tmp_path / "photos.jpg").mkdir()
    paths = [tmp_path / n for n in ("visit.JPG", "b.png", "c.webp", "photos.jpg", "set.csv")]
    roles = classify_paths(paths)
    assert roles.images == (tmp_path / "visit.JPG", tmp_path / "b.png", tmp_path / "c.webp")
    assert roles.datasets == (tmp_path / "photos.jpg", tmp_path / "set.csv")
