"""The committed museum demo (resources/demo) is consistent with itself and with build.py.

Fast checks only (no rebuild): the manifest, the images, the descriptor files, the size
budget, the licence file, and that the package's extractor (which build.py imports)
recomputes committed rows.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from types import ModuleType

import numpy as np
import pytest
from PIL import Image

from irviewer.core.dataset import Dataset
from irviewer.extract import vlad
from irviewer.extract.registry import get_extractor
from irviewer.formats.descriptor_files import descriptor_extractor
from irviewer.formats.manifest import read_manifest
from irviewer.io.resources import resources_dir

DEMO = resources_dir() / "demo"
DESCRIPTOR_FILES = ("strong", "weak")


def load_build(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """Return resources/demo/build.py imported from its path (without writing a .pyc)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    spec = importlib.util.spec_from_file_location("irviewer_demo_build", DEMO / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    """Return the demo manifest read by irviewer's own reader."""
    return read_manifest(DEMO / "demo.csv")


def manifest_names(ds: Dataset) -> list[str]:
    """Return every image name of the demo: the gallery, then the queries."""
    return [*ds.gallery, *(q.name for q in ds.queries)]


def load_descriptors(name: str) -> tuple[list[str], np.ndarray]:
    """Return (names, features) of resources/demo/<name>.npz as stored."""
    with np.load(DEMO / f"{name}.npz", allow_pickle=False) as f:
        assert set(f.files) - {"extractor"} == {"features", "names"}
        return [str(n) for n in f["names"].tolist()], f["features"]


def test_manifest_has_one_query_and_several_gallery_images_per_instance(dataset: Dataset) -> None:
    assert not dataset.skipped_queries
    assert 20 <= dataset.n_queries <= 22
    assert 150 <= dataset.n_gallery + dataset.n_queries <= 250
    gallery_per_instance = Counter(dataset.gallery_labels.tolist())
    queries_per_instance = Counter(str(q.meta["label"]) for q in dataset.queries)
    assert set(queries_per_instance) == set(gallery_per_instance)
    assert set(queries_per_instance.values()) == {1}
    assert min(gallery_per_instance.values()) >= 3
    assert all(" — " in str(q.meta["title"]) for q in dataset.queries)


def test_every_image_exists_and_opens(dataset: Dataset) -> None:
    names = manifest_names(dataset)
    assert set(dataset.image_paths) == set(names)
    for name in names:
        path = dataset.image_paths[name]
        assert path.is_file(), path
        with Image.open(path) as im:
            assert im.format == "JPEG" and im.mode == "RGB"
            assert 320 <= max(im.size) <= 480, (name, im.size)
            im.load()


@pytest.mark.parametrize("which", DESCRIPTOR_FILES)
def test_descriptor_file_has_one_finite_row_per_image(dataset: Dataset, which: str) -> None:
    names, features = load_descriptors(which)
    assert features.dtype == np.float32 and features.ndim == 2
    assert len(names) == len(set(names)) == len(features)
    assert sorted(names) == sorted(manifest_names(dataset))
    assert np.isfinite(features).all()
    assert (np.linalg.norm(features, axis=1) > 0).all()


def test_total_size_fits_the_budget() -> None:
    files = [p for p in DEMO.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert sum(p.stat().st_size for p in files) < 10.5e6


def test_source_md_covers_every_painting(dataset: Dataset) -> None:
    text = (DEMO / "SOURCE.md").read_text(encoding="utf-8")
    assert "Licence reasoning" in text
    for label in set(dataset.gallery_labels.tolist()):
        assert f"| `{label}.jpg` |" in text, label


def test_strong_beats_weak_and_neither_is_perfect(monkeypatch: pytest.MonkeyPatch,
                                                  dataset: Dataset) -> None:
    build = load_build(monkeypatch)
    label = {name: lab for name, lab in zip(dataset.gallery, dataset.gallery_labels.tolist(),
                                            strict=True)}
    label.update({q.name: str(q.meta["label"]) for q in dataset.queries})
    queries = {q.name for q in dataset.queries}
    scores = {}
    for which in DESCRIPTOR_FILES:
        names, features = load_descriptors(which)
        ap, p1 = build.evaluate(features, [label[n] for n in names], [n in queries for n in names])
        scores[which] = ap.mean(), p1.mean()
    (strong_map, strong_p1), (weak_map, weak_p1) = scores["strong"], scores["weak"]
    assert 0.6 <= strong_map <= 0.9 and strong_p1 < 1.0
    assert 0.2 <= weak_map <= 0.5
    assert strong_map > weak_map + 0.15 and strong_p1 > weak_p1


def test_the_package_extractor_recomputes_committed_descriptor_rows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The strong rows come from irviewer's own extractor, found by the name strong.npz
    records; build.py has no copy of the descriptor (one implementation)."""
    build = load_build(monkeypatch)
    assert not hasattr(build, "strong_descriptor")
    assert build.dense_descriptors is vlad.dense_descriptors and build.vlad is vlad.vlad
    name = descriptor_extractor(DEMO / "strong.npz")
    assert name == "demo-vlad"
    extractor = get_extractor(name)
    assert extractor.dim == 4096
    assert descriptor_extractor(DEMO / "weak.npz") is None
    strong_names, strong = load_descriptors("strong")
    weak_names, weak = load_descriptors("weak")
    picks = [n for n in strong_names if n.endswith(("_g1", "_d2", "_query"))][:3]
    assert len(picks) == 3
    for name in picks:
        with Image.open(DEMO / f"{name}.jpg") as im:
            image = im.convert("RGB")
        np.testing.assert_allclose(build.weak_descriptor(image), weak[weak_names.index(name)],
                                   atol=1e-6)
        row = extractor(image)
        committed = strong[strong_names.index(name)]
        assert row.dtype == np.float32 and row.shape == committed.shape
        assert float(row @ committed) > 0.999, name  # both unit length: cosine
        np.testing.assert_allclose(row, committed, atol=1e-3)
