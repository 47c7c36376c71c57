"""Describing photos in parallel: every mode gives the same vectors, bad photos are
sentences, and the specification a worker remakes its extractor from."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from irviewer.collection.describing import (
    PROCESSES,
    SERIAL,
    THREADS,
    ExtractorSpec,
    Pool,
    default_workers,
    describe_with_features,
    made,
)
from irviewer.extract.vlad import demo_extractor
from tests.collection_photos import artwork_image


def test_threads_and_serial_give_the_same_vectors_and_sentences(tmp_path):
    paths = []
    for i in range(5):
        artwork_image(i).save(tmp_path / f"{i}.png")
        paths.append(tmp_path / f"{i}.png")
    (tmp_path / "bad.jpg").write_bytes(b"")
    paths.insert(2, tmp_path / "bad.jpg")
    spec = ExtractorSpec.of(demo_extractor())
    results = {}
    for mode in (SERIAL, THREADS):
        with Pool(mode, 2) as pool:
            results[mode] = dict(pool.describe(spec, paths))
    assert sorted(results[SERIAL]) == list(range(6))
    assert results[SERIAL][2] == results[THREADS][2] == "bad.jpg: the file is empty"
    for i in (0, 1, 3, 4, 5):
        assert np.array_equal(results[SERIAL][i], results[THREADS][i])
        assert np.array_equal(results[SERIAL][i], demo_extractor()(artwork_image(
            i - (i > 2))))


def test_a_spec_remakes_the_extractor_with_its_state_once_per_process():
    learned = demo_extractor().learned(
        [demo_extractor().learning_sample(artwork_image(s), 500, s) for s in range(3)], 1)
    spec = ExtractorSpec.of(learned)
    assert spec.name == "demo-vlad" and set(spec.state or {}) == {"mean", "basis", "centres"}
    assert spec.key != ExtractorSpec.of(demo_extractor()).key
    assert made(spec) is made(spec)
    assert np.array_equal(made(spec).vocabulary.centres, learned.vocabulary.centres)
    assert default_workers() >= 1



def faults_per_photo(path: str) -> int:
    """Describe the photo at ``path`` (vector and local features) six times in this
    process; return the page faults of each of the last five."""
    import resource

    extractor = demo_extractor()
    describe_with_features(extractor, Path(path))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        describe_with_features(extractor, Path(path))
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) // 5


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_worker_processes_reuse_the_memory_a_photo_frees_for_the_next(tmp_path):
    artwork_image(3, (1200, 900)).save(tmp_path / "photo.jpg", quality=90)
    with Pool(PROCESSES, 1) as pool:
        [(_, faults)] = list(pool.call(faults_per_photo, [(str(tmp_path / "photo.jpg"),)]))
    assert faults < 1_000  # about 10,000 when every freed block went back to the kernel
