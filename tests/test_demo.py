"""The built-in museum demo: the committed files agree with each other and with build.py,
and `irviewer eval --demo` runs as a smoke test."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from PIL import Image

from irviewer.cli import main
from irviewer.formats.manifest import read_manifest
from irviewer.paths import resources_dir

DEMO = resources_dir() / "demo"


def load_build():
    spec = importlib.util.spec_from_file_location("demo_build", DEMO / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


def test_manifest_images_and_descriptors_agree():
    ds = read_manifest(DEMO / "demo.csv")
    assert ds.n_queries == 22 and ds.n_gallery == 154 and not ds.skipped_queries
    per_instance = Counter(ds.gallery_labels.tolist())
    assert min(per_instance.values()) >= 3
    assert all(q.meta["title"] for q in ds.queries)
    for name in ("strong", "weak"):
        with np.load(DEMO / f"{name}.npz") as f:
            names, features = f["names"].tolist(), f["features"].astype(np.float32)
        assert sorted(names) == sorted([*ds.gallery, *(q.name for q in ds.queries)])
        assert np.isfinite(features).all() and (np.linalg.norm(features, axis=1) > 0).all()
    for path in ds.image_paths.values():
        with Image.open(path) as im:
            im.verify()
    total = sum(p.stat().st_size for p in DEMO.rglob("*") if p.is_file())
    assert total < 10.5 * 2**20


def test_build_reproduces_committed_descriptor_rows():
    build = load_build()
    with np.load(DEMO / "weak.npz") as f:
        names, weak = f["names"].tolist(), f["features"].astype(np.float32)
    for name in names[:3]:
        with Image.open(DEMO / f"{name}.jpg") as im:
            row = build.weak_descriptor(im.convert("RGB"))
        np.testing.assert_allclose(row, weak[names.index(name)], atol=2e-3)
    assert build.jpeg_bytes(Image.new("RGB", (8, 8))) == build.jpeg_bytes(
        Image.new("RGB", (8, 8)))


def test_eval_demo_smoke(capsys):
    assert main(["eval", "--demo"]) == 0
    out = capsys.readouterr().out
    assert "22 queries, 154 gallery images" in out and "strong.npz" in out
    assert main(["eval", "--demo", "-d", str(DEMO / "weak.npz")]) == 0
    assert "weak.npz" in capsys.readouterr().out


def test_demo_strong_beats_weak(tmp_path):
    import json

    for name in ("strong", "weak"):
        assert main(["eval", "--demo", "-d", str(DEMO / f"{name}.npz"), "--json",
                     str(tmp_path / f"{name}.json")]) == 0
    strong, weak = (json.loads((tmp_path / f"{n}.json").read_text())["evaluations"][0]["summary"]
                    for n in ("strong", "weak"))
    assert strong["mAP"] > weak["mAP"] + 0.1 and strong["mP@1"] > weak["mP@1"]


@pytest.mark.parametrize("args", [["eval"], ["eval", "x.csv"], ["eval", "--demo", "x.csv"]])
def test_eval_argument_errors_exit_2(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2


def test_closed_pipe_is_not_an_error():
    cmd = [sys.executable, "-m", "irviewer", "eval", "--demo"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0 and "Traceback" not in err
