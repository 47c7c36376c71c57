"""Pictures made in Python (a function given to irviewer.view) read by the rule of image
files: arrays of every usual layout become RGB, a path is read as a file, anything else or
an error of the function is one sentence."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PIL import Image

from irviewer.core.errors import InputError
from irviewer.core.made_images import MadeImage, MadeImages, file_of
from irviewer.formats.image_files import made_rgb, read_rgb


def made(value: object, name: str = "x") -> MadeImage:
    return MadeImage(name, lambda _name: value)


@pytest.mark.parametrize(("value", "first_pixel"), [
    (np.full((20, 30, 3), 7, np.uint8), (7, 7, 7)),
    (np.full((20, 30), 9, np.uint8), (9, 9, 9)),  # grey
    (np.full((20, 30, 4), 11, np.uint8), (11, 11, 11)),  # alpha dropped
    (np.full((3, 20, 30), 0.5, np.float32), (127, 127, 127)),  # channels first, in [0, 1]
    (np.full((20, 30, 1), 300, np.int32), (255, 255, 255)),  # clipped
    (np.linspace(-2, 2, 600).reshape(20, 30), (0, 0, 0)),  # a normalised tensor: stretched
    (np.ones((20, 30), bool), (255, 255, 255)),
    (Image.new("L", (30, 20), 40), (40, 40, 40)),
])
def test_an_array_or_a_pil_image_becomes_rgb(value, first_pixel):
    found = made_rgb(made(value))
    assert found is not None
    image, size = found
    assert image.mode == "RGB" and size == (30, 20)
    assert image.getpixel((0, 0)) == first_pixel


def test_a_path_is_read_as_a_file_and_reduced(tmp_path):
    Image.new("RGB", (400, 200), (1, 2, 3)).save(tmp_path / "a.png")
    image, size = read_rgb(made(str(tmp_path / "a.png")), reduce_to=50)
    assert size == (400, 200) and max(image.size) == 50


def test_no_picture_is_none_and_read_rgb_says_so():
    assert made_rgb(made(None, "q3")) is None
    with pytest.raises(InputError, match=r"^images: the function gave no picture for q3$"):
        read_rgb(made(None, "q3"))


def test_what_is_not_a_picture_is_refused_in_one_sentence():
    with pytest.raises(InputError, match=r"^images: the function gave a dict for g1; return a "
                       r"PIL image, an array \(H x W, H x W x 3 or 4, or 3 x H x W\) or the "
                       r"path of an image file$"):
        made_rgb(made({}, "g1"))
    with pytest.raises(InputError, match=r"^images: the function gave a ndarray for g1"):
        made_rgb(made(np.zeros((2, 3, 5, 7)), "g1"))

    def broken(name: str) -> object:
        raise KeyError(name)

    with pytest.raises(InputError, match=r"^images: the function raised KeyError for g2 "
                       r"\('g2'\)$"):
        made_rgb(MadeImage("g2", broken))


def test_a_bomb_made_in_memory_is_refused(monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)
    with pytest.raises(InputError, match="more pixels than the decompression-bomb limit"):
        made_rgb(made(np.zeros((20, 30), np.uint8)))


def test_the_function_is_called_one_call_at_a_time():
    inside, most = [0], [0]
    lock = threading.Lock()

    def slow(name: str) -> object:
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        threading.Event().wait(0.01)
        with lock:
            inside[0] -= 1
        return np.zeros((4, 4), np.uint8)

    images = MadeImages([str(i) for i in range(8)], slow)
    threads = [threading.Thread(target=made_rgb, args=(images[str(i)],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1
    assert len(images) == 8 and "3" in images and "9" not in images
    with pytest.raises(KeyError):
        images["9"]
    assert file_of(images["3"]) is None
