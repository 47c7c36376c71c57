"""Safe decoding of image files: every refusal is one sentence naming the file."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from irviewer.core.errors import InputError
from irviewer.formats.image_files import read_rgb


def jpeg(path, size=(64, 48), colour=(200, 30, 40)):
    Image.new("RGB", size, colour).save(path, "JPEG", quality=90)
    return path


def test_a_good_image_is_decoded_to_rgb_with_its_own_size(tmp_path):
    Image.new("L", (30, 20), 128).save(tmp_path / "grey.png")
    image, size = read_rgb(tmp_path / "grey.png")
    assert image.mode == "RGB" and image.size == (30, 20) and size == (30, 20)
    small, size = read_rgb(jpeg(tmp_path / "a.jpg", (400, 300)), reduce_to=40)
    assert max(small.size) <= 40 and size == (400, 300)


def test_missing_folder_text_and_truncated_files_get_one_sentence(tmp_path):
    with pytest.raises(InputError, match=r"nope\.jpg: no such file"):
        read_rgb(tmp_path / "nope.jpg")
    with pytest.raises(InputError, match="is a folder, not an image file"):
        read_rgb(tmp_path)
    (tmp_path / "notes.jpg").write_text("not an image")
    with pytest.raises(InputError, match=r"^notes\.jpg: is not a picture irviewer can read; "
                       r"save it as a JPEG or PNG$"):
        read_rgb(tmp_path / "notes.jpg")
    data = jpeg(tmp_path / "whole.jpg", (200, 200)).read_bytes()
    (tmp_path / "half.jpg").write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"^half\.jpg: the file is damaged or cut short"):
        read_rgb(tmp_path / "half.jpg")


@pytest.mark.parametrize("side", [12, 20])  # 144 px: Pillow warns; 400 px: Pillow refuses
def test_a_decompression_bomb_is_refused_between_one_and_two_times_the_limit_too(
        tmp_path, monkeypatch, side):
    buffer = io.BytesIO()
    Image.new("RGB", (side, side)).save(buffer, "PNG")
    (tmp_path / "bomb.png").write_bytes(buffer.getvalue())
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)
    with pytest.raises(InputError, match=r"^bomb\.png: declares more pixels than the "
                       r"decompression-bomb limit of 100 pixels"):
        read_rgb(tmp_path / "bomb.png")
