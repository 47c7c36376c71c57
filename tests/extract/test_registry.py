"""Extractors by name: irviewer's own through its entry point, a plug-in's through the same
group, and one sentence for every way a name or a plug-in can be wrong."""

from __future__ import annotations

import importlib.metadata
from importlib.metadata import EntryPoint, entry_points

import numpy as np
import pytest
from PIL import Image

from irviewer.core.errors import InputError
from irviewer.extract import registry
from irviewer.extract.base import Extractor, describe
from irviewer.extract.vlad import VladExtractor


class ToyExtractor:
    """A plug-in's extractor: the mean R, G and B of the image."""

    name = "toy"
    dim = 3

    def __call__(self, image: Image.Image) -> np.ndarray:
        return np.asarray(image.convert("RGB"), dtype=np.float32).mean(axis=(0, 1))


def broken_factory() -> Extractor:
    raise FileNotFoundError("weights.pt")


def not_an_extractor() -> object:
    return object()


@pytest.fixture
def plugins(monkeypatch):
    """Pretend three packages declare extractors in the group (fresh instance cache)."""
    found = [EntryPoint(name=n, value=f"{__name__}:{target}", group=registry.GROUP)
             for n, target in (("toy", "ToyExtractor"), ("broken", "broken_factory"),
                               ("odd", "not_an_extractor"))]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: found)
    monkeypatch.setattr(registry, "_loaded", {})


def test_irviewer_declares_its_own_extractor_as_an_entry_point():
    declared = {ep.name: ep.value for ep in entry_points(group=registry.GROUP)}
    assert declared["demo-vlad"] == registry.BUILTIN["demo-vlad"]


def test_the_demo_extractor_is_found_by_name_and_loaded_once():
    extractor = registry.get_extractor("demo-vlad")
    assert isinstance(extractor, VladExtractor) and isinstance(extractor, Extractor)
    assert extractor.name == "demo-vlad" and extractor.dim == 128 * 32
    assert registry.get_extractor("demo-vlad") is extractor


def test_a_plugin_registered_in_the_group_is_found_and_called(plugins):
    assert list(registry.available()) == ["broken", "demo-vlad", "odd", "toy"]
    toy = registry.get_extractor("toy")
    vector = describe(toy, Image.new("RGB", (4, 4), (10, 20, 30)), "photo.jpg")
    assert vector.dtype == np.float32 and vector.tolist() == [10, 20, 30]


def test_unknown_broken_and_malformed_extractors_are_one_sentence(plugins):
    with pytest.raises(InputError, match=r"no extractor is called 'nope' \(installed: broken, "
                       r"demo-vlad, odd, toy\)"):
        registry.get_extractor("nope")
    with pytest.raises(InputError, match=r"extractor 'broken' \(.*broken_factory\) cannot be "
                       r"loaded: FileNotFoundError: weights.pt"):
        registry.get_extractor("broken")
    with pytest.raises(InputError, match="does not give an object with a name, a positive "
                       "integer dim"):
        registry.get_extractor("odd")


def test_describe_checks_what_an_extractor_returns():
    toy = ToyExtractor()
    black = Image.new("RGB", (4, 4))
    with pytest.raises(InputError, match=r"^a\.jpg: extractor 'toy' found nothing to describe"):
        describe(toy, black, "a.jpg")
    toy.dim = 5
    with pytest.raises(InputError, match="returned 3 values but declares 5 dimensions"):
        describe(toy, Image.new("RGB", (4, 4), (1, 2, 3)), "a.jpg")


def test_a_blank_photo_gives_the_demo_extractor_nothing_to_describe():
    extractor = registry.get_extractor("demo-vlad")
    blank = Image.new("RGB", (120, 90), (128, 128, 128))
    assert not extractor(blank).any()  # no window has contrast: the zero vector, not NaN
    with pytest.raises(InputError, match="found nothing to describe"):
        describe(extractor, blank, "wall.jpg")
