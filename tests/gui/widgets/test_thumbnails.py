"""Thumbnails decoded off the GUI thread (irviewer.gui.widgets.thumbnails) by the window's
decoding worker."""

from __future__ import annotations

from PIL import Image
from PySide6.QtGui import QImage

from irviewer.gui.widgets.thumbnails import BROKEN, ThumbnailCache


def test_thumbnails_arrive_from_the_decoder_and_a_bad_file_is_broken(qtbot, tmp_path):
    good, bad = tmp_path / "good.jpg", tmp_path / "bad.jpg"
    Image.new("RGB", (400, 200), "red").save(good)
    bad.write_bytes(b"not an image")
    cache = ThumbnailCache(size=100)
    arrived: list[str] = []
    cache.ready.connect(arrived.append)
    assert cache.get("good", good) is ... and cache.get("bad", bad) is ...
    qtbot.waitUntil(lambda: set(arrived) == {"good", "bad"})
    image = cache.get("good", good)
    assert isinstance(image, QImage) and image.width() == 100
    assert cache.get("bad", bad) == BROKEN and cache.get("gone", tmp_path / "x.jpg") is ...
    cache.close()


def test_a_thumbnail_pending_when_its_window_closed_is_decoded_when_asked_again(qtbot,
                                                                                tmp_path):
    photo = tmp_path / "photo.jpg"
    Image.new("RGB", (300, 300), "blue").save(photo)
    cache = ThumbnailCache(size=64)
    assert cache.get("photo", photo) is ...
    cache.close()  # waits for the decode; what arrives after is dropped
    qtbot.wait(50)
    assert "photo" not in cache._items
    arrived: list[str] = []
    cache.ready.connect(arrived.append)
    assert cache.get("photo", photo) is ...  # asked again: decoded again
    qtbot.waitUntil(lambda: arrived == ["photo"])
    assert isinstance(cache.get("photo", photo), QImage)
    cache.close()
