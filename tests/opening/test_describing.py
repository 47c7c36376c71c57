"""Describing photos in parallel: every mode gives the same vectors, bad photos are
sentences, and the specification a worker remakes its extractor from."""

from __future__ import annotations

import numpy as np

from irviewer.extract.vlad import demo_extractor
from irviewer.opening.describing import (
    SERIAL,
    THREADS,
    ExtractorSpec,
    Pool,
    default_workers,
    made,
)
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
