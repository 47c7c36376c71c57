"""Undoing the light's colour (grey-edge): a photo under coloured light comes back to the
photo under white light, whatever the light (a property test); flat photos are left alone."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from irviewer.extract.illuminant import GAMMA, edge_illuminant, grey_edge_balanced
from tests.collection_photos import artwork_image


def under_light(image: Image.Image, light: tuple[float, float, float]) -> Image.Image:
    linear = (np.asarray(image, np.float32) / 255) ** GAMMA * np.asarray(light, np.float32)
    return Image.fromarray((linear.clip(0, 1) ** (1 / GAMMA) * 255).round().astype(np.uint8))


def test_the_edge_average_of_a_hand_made_image():
    # one vertical edge: red jumps by 0.6, green by 0.3, blue by 0.3 (linear light); the
    # p-norm of a single edge column over all pixels scales each channel alike
    linear = np.zeros((4, 8, 3), np.float32)
    linear[:, 4:] = (0.6, 0.3, 0.3)
    light = edge_illuminant(linear)
    np.testing.assert_allclose(light, np.array([0.6, 0.3, 0.3]) / 0.4, rtol=1e-6)
    np.testing.assert_array_equal(edge_illuminant(np.full((4, 4, 3), 0.5, np.float32)),
                                  np.ones(3))


def colour(image: Image.Image) -> np.ndarray:
    """Return the photo's mean colour in linear light as shares of its sum (its
    chromaticity: what the light's colour changes and its strength does not)."""
    mean = ((np.asarray(image, np.float64) / 255) ** GAMMA).reshape(-1, 3).mean(0)
    return mean / mean.sum()


@settings(max_examples=25, deadline=None)
@given(st.tuples(*(st.floats(0.5, 1.0) for _ in range(3))))
def test_a_photo_under_any_light_is_balanced_back_to_the_same_colours(light):
    image = under_light(artwork_image(3, (120, 90)), (0.45, 0.45, 0.45))  # nothing clips
    # within 8-bit rounding of a dark photo (2 % of the colour), whatever the light
    np.testing.assert_allclose(colour(grey_edge_balanced(under_light(image, light))),
                               colour(grey_edge_balanced(image)), atol=0.02)


def test_a_warm_light_is_undone():
    image = under_light(artwork_image(4, (120, 90)), (0.4, 0.4, 0.4))
    warm = under_light(image, (1.0, 0.8, 0.45))
    assert colour(warm)[0] / colour(warm)[2] > 1.8 * colour(image)[0] / colour(image)[2]
    np.testing.assert_allclose(colour(grey_edge_balanced(warm)),
                               colour(grey_edge_balanced(image)), atol=0.01)


def test_a_flat_photo_is_returned_as_it_is():
    flat = Image.new("RGB", (20, 10), (200, 120, 40))
    assert np.array_equal(np.asarray(grey_edge_balanced(flat)), np.asarray(flat))
