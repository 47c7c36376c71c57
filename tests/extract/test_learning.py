"""What an extractor learns from a collection: the demo VLAD's vocabulary, its state saved
and loaded again, and one sentence when a saved state does not fit."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from irviewer.core.errors import InputError
from irviewer.extract import registry
from irviewer.extract.base import Learner, input_side
from irviewer.extract.vlad import VladExtractor, Vocabulary, demo_extractor, dense_descriptors
from irviewer.extract.vlad_learning import KMEANS_SAMPLE, WORDS, kmeans, learn_vocabulary
from irviewer.formats.descriptor_files import write_npz
from tests.collection_photos import artwork_image


def test_the_demo_extractor_is_a_learner_that_reads_at_most_its_largest_scale():
    extractor = demo_extractor()
    assert isinstance(extractor, Learner)
    assert input_side(extractor) == 384
    assert input_side(object()) is None  # type: ignore[arg-type]


def test_a_learning_sample_is_a_seeded_subset_of_the_dense_descriptors():
    extractor = demo_extractor()
    image = artwork_image(1)
    every = dense_descriptors(image)
    sample = extractor.learning_sample(image, 100, seed=5)
    assert sample.shape == (100, every.shape[1])
    rows = {r.tobytes() for r in every}
    assert all(r.tobytes() in rows for r in sample)
    assert np.array_equal(sample, extractor.learning_sample(image, 100, seed=5))
    assert not np.array_equal(sample, extractor.learning_sample(image, 100, seed=6))
    assert len(extractor.learning_sample(image, 10**6, seed=5)) == len(every)


def test_learned_state_round_trips_and_describes_as_before(tmp_path):
    extractor = demo_extractor()
    samples = [extractor.learning_sample(artwork_image(s), 600, s) for s in range(4)]
    learned = extractor.learned(samples, seed=3)
    assert learned.name == "demo-vlad" and learned.dim == 4096
    assert learned.vocabulary.centres.shape == (WORDS, 32)
    assert not np.array_equal(learned.vocabulary.centres, extractor.vocabulary.centres)
    write_npz(tmp_path / "vocabulary.npz", learned.state())
    loaded = registry.load_extractor("demo-vlad", tmp_path / "vocabulary.npz")
    image = artwork_image(9)
    assert np.array_equal(loaded(image), learned(image))
    assert not np.allclose(loaded(image), extractor(image))


def test_learning_is_seeded_and_needs_enough_rows():
    rows = [np.random.default_rng(0).normal(size=(500, 136)).astype(np.float32)]
    a, b = (learn_vocabulary(rows, np.random.default_rng(1)) for _ in range(2))
    assert np.array_equal(a["centres"], b["centres"]) and np.array_equal(a["basis"], b["basis"])
    with pytest.raises(InputError, match="too few to learn a vocabulary of 128 words"):
        learn_vocabulary([rows[0][:100]], np.random.default_rng(1))
    assert KMEANS_SAMPLE == 20_000


def test_kmeans_finds_well_separated_clusters():
    rng = np.random.default_rng(0)
    centres = np.array([[0, 0], [10, 0], [0, 10]], float)
    data = np.concatenate([c + rng.normal(scale=0.1, size=(50, 2)) for c in centres])
    found = kmeans(data, 3, np.random.default_rng(2))
    assert sorted(map(tuple, np.round(found).astype(int))) == [(0, 0), (0, 10), (10, 0)]


def test_a_state_that_does_not_fit_or_is_missing_is_one_sentence(tmp_path):
    write_npz(tmp_path / "bad.npz", {"mean": np.zeros(136), "basis": np.zeros((5, 32))})
    with pytest.raises(InputError, match=r"bad.npz: not a VLAD vocabulary \(no 'centres'"):
        registry.load_extractor("demo-vlad", tmp_path / "bad.npz")
    write_npz(tmp_path / "shape.npz", {"mean": np.zeros(136), "basis": np.zeros((5, 32)),
                                       "centres": np.zeros((4, 32))})
    with pytest.raises(InputError, match=r"shape\.npz: the vocabulary's shapes do not fit"):
        registry.load_extractor("demo-vlad", tmp_path / "shape.npz")
    with pytest.raises(InputError, match=r"missing .what extractor 'demo-vlad' learnt"):
        registry.load_extractor("demo-vlad", tmp_path / "nope.npz")
    (tmp_path / "junk.npz").write_bytes(b"junk")
    with pytest.raises(InputError, match=r"junk\.npz: not readable as what extractor"):
        registry.load_extractor("demo-vlad", tmp_path / "junk.npz")


def test_vocabulary_of_checks_arrays():
    vocabulary = demo_extractor().vocabulary
    assert Vocabulary.of(vocabulary.arrays(), "x").dim == 4096
    assert isinstance(VladExtractor(vocabulary).with_state(vocabulary.arrays(), "x"),
                      VladExtractor)


def test_an_extractor_that_learns_nothing_refuses_a_state(tmp_path, monkeypatch):
    class Plain:
        name, dim = "plain", 3

        def __call__(self, image: Image.Image) -> np.ndarray:
            return np.ones(3, np.float32)

    monkeypatch.setattr(registry, "_loaded", {"plain": Plain()})
    monkeypatch.setattr(registry, "available", lambda: {"plain": "x:y"})
    write_npz(tmp_path / "s.npz", {"a": np.zeros(2)})
    with pytest.raises(InputError, match="extractor 'plain' learns nothing"):
        registry.load_extractor("plain", tmp_path / "s.npz")
    assert isinstance(registry.load_extractor("plain"), Plain)
