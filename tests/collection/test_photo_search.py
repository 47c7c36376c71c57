"""Search by photo: the Searcher API (worker threads), ``irviewer search``'s table, JSON,
exit codes and one sentence per bad photo, and a visitor-style photo of the demo."""

from __future__ import annotations

import importlib.metadata
import io
import json
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import EntryPoint

import numpy as np
import pytest
from PIL import Image

from irviewer import __version__
from irviewer.cli import main
from irviewer.collection.photo_search import Searcher, open_demo_searcher, open_searcher
from irviewer.core.errors import InputError
from irviewer.extract import registry
from irviewer.formats.manifest import read_manifest
from irviewer.io.resources import resources_dir
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest
from tests.visitor import visitor_photo

DEMO = resources_dir() / "demo"

MANIFEST = """image,instance,role,title
red1.jpg,red,gallery,Red One — A
red2.jpg,red,gallery,Red Two — A
blue.jpg,blue,gallery,Blue — B
grey.jpg,grey,gallery,
twin.jpg,red,gallery,Red Twin — A
q.jpg,red,query,
"""
# gallery vectors (mean R, G, B of a photo is the toy extractor); twin equals red2 exactly
VECTORS = {"red1": [1.0, 0.0, 0.0], "red2": [0.8, 0.6, 0.0], "blue": [0.0, 0.0, 1.0],
           "grey": [1.0, 1.0, 1.0], "twin": [0.8, 0.6, 0.0], "q": [1.0, 0.1, 0.0]}


class MeanColour:
    """A plug-in extractor: the mean R, G and B of the photo."""

    name = "mean-colour"
    dim = 3

    def __call__(self, image: Image.Image) -> np.ndarray:
        return np.asarray(image.convert("RGB"), dtype=np.float32).mean(axis=(0, 1))


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A manifest, its descriptor file naming the plug-in extractor, and the plug-in."""
    (tmp_path / "set.csv").write_text(MANIFEST, encoding="utf-8")
    names = list(VECTORS)
    np.savez(tmp_path / "d.npz", features=np.array([VECTORS[n] for n in names], np.float32),
             names=np.array(names), extractor="mean-colour")
    Image.new("RGB", (40, 30), (200, 40, 0)).save(tmp_path / "photo.png")
    found = [EntryPoint(name="mean-colour", value=f"{__name__}:MeanColour",
                        group=registry.GROUP)]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: found)
    monkeypatch.setattr(registry, "_loaded", {})
    return tmp_path


def cosines(vector):
    """Hand check: cosine of ``vector`` with every gallery vector, in gallery order."""
    v = np.asarray(vector, float) / np.linalg.norm(vector)
    return {n: float(np.dot(v, np.asarray(VECTORS[n]) / np.linalg.norm(VECTORS[n])))
            for n in ("red1", "red2", "blue", "grey", "twin")}


def test_matches_are_the_gallery_by_cosine_with_labels_titles_and_stable_ties(toy):
    searcher = open_searcher(toy / "set.csv", toy / "d.npz")
    assert searcher.extractor.name == "mean-colour"
    matches = searcher.search(toy / "photo.png", k=4)
    # photo (200, 40, 0) ~ (1, 0.2, 0): red1 0.981, red2 = twin 0.902 (tie: gallery order),
    # grey 0.679, blue 0
    expected = cosines([200, 40, 0])
    assert [m.item for m in matches] == ["red1", "red2", "twin", "grey"]
    assert [m.rank for m in matches] == [1, 2, 3, 4]
    assert [m.score for m in matches] == pytest.approx([expected[m.item] for m in matches],
                                                       abs=1e-6)
    assert [m.instance for m in matches] == ["red", "red", "red", "grey"]
    assert [m.title for m in matches] == ["Red One — A", "Red Two — A", "Red Twin — A", ""]
    assert len(searcher.search(toy / "photo.png", k=50)) == 5  # the whole gallery at most


def test_a_pil_image_is_searched_like_its_file_and_from_worker_threads(toy):
    searcher = open_searcher(toy / "set.csv", toy / "d.npz")
    colours = [(200, 40, 0), (0, 10, 200), (90, 90, 90), (160, 120, 0)]
    images = [Image.new("RGB", (20, 20), c) for c in colours]
    alone = [searcher.search(im, k=2) for im in images]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda im: searcher.search(im, k=2), images * 5))
    assert threaded == alone * 5
    assert [m[0].instance for m in alone] == ["red", "blue", "grey", "red"]


def test_the_extractor_is_named_by_the_file_or_the_user_else_one_sentence(toy):
    names = list(VECTORS)
    features = np.array([VECTORS[n] for n in names], np.float32)
    np.savez(toy / "plain.npz", features=features, names=np.array(names))
    with pytest.raises(InputError, match=r"^plain\.npz does not name the extractor that made "
                       r"it; give --extractor NAME \(installed: demo-vlad, mean-colour\)"):
        open_searcher(toy / "set.csv", toy / "plain.npz")
    assert open_searcher(toy / "set.csv", toy / "plain.npz",
                         extractor="mean-colour").extractor.name == "mean-colour"
    np.savez(toy / "other.npz", features=features, names=np.array(names), extractor="resnet")
    with pytest.raises(InputError, match=r"^other\.npz was made by extractor 'resnet', which is "
                       r"not available"):
        open_searcher(toy / "set.csv", toy / "other.npz")
    with pytest.raises(InputError, match=r"extractor 'demo-vlad' makes 4,096-d vectors but "
                       r"d\.npz holds 3-d ones"):
        open_searcher(toy / "set.csv", toy / "d.npz", extractor="demo-vlad")


def test_a_precomputed_ranking_cannot_be_searched_with_a_photo(toy):
    (toy / "run.trec").write_text("q 0 red1 1 0.9 x\n", encoding="utf-8")
    opened = open_now(OpenRequest(toy / "set.csv", rankings=(toy / "run.trec",)))
    with pytest.raises(InputError, match="is a precomputed ranking: it has no gallery vectors"):
        Searcher.from_opened(opened)


def test_the_command_prints_the_top_k_and_writes_the_json(toy, capsys):
    out = toy / "r.json"
    rc = main(["search", str(toy / "set.csv"), "-d", str(toy / "d.npz"), "--top", "2",
               "--json", str(out), str(toy / "photo.png")])
    assert rc == 0
    text = capsys.readouterr().out
    assert "extractor mean-colour, 3-d" in text
    assert f"    1   {cosines([200, 40, 0])['red1']:.4f}        0  red  Red One — A  (red1)" \
        in text  # rank, score, inliers (a flat photo has no keypoint to match)
    assert f"{toy / 'photo.png'}: Not in this collection. Closest: Red One — A\n" in text
    assert "(twin)" not in text  # --top 2
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["irviewer_version"] == __version__
    assert report["dataset"] == str(toy / "set.csv")
    assert report["descriptors"]["path"] == str(toy / "d.npz")
    assert len(report["descriptors"]["sha256"]) == 64
    assert report["extractor"] == "mean-colour"
    (result,) = report["results"]
    assert result["photo"] == str(toy / "photo.png")
    assert result["answer"] is None
    assert result["rule"] == {"strictness": "normal", "min_inliers": 12, "calibrated": False}
    assert result["matches"][1] == {"rank": 2, "item": "red2", "instance": "red",
                                    "title": "Red Two — A",
                                    "score": pytest.approx(cosines([200, 40, 0])["red2"]),
                                    "inliers": 0}


def test_bad_photos_get_one_sentence_each_and_the_others_are_still_searched(
        toy, capsys, monkeypatch):
    (toy / "notes.jpg").write_text("a shopping list")
    buffer = io.BytesIO()
    Image.new("RGB", (300, 300), (10, 200, 30)).save(buffer, "JPEG")
    (toy / "half.jpg").write_bytes(buffer.getvalue()[:600])
    Image.new("RGB", (50, 50), (0, 0, 200)).save(toy / "huge.png")
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1500)  # huge.png: 2,500 px, a "bomb"
    out = toy / "r.json"
    rc = main(["search", str(toy / "set.csv"), "-d", str(toy / "d.npz"), "--json", str(out),
               str(toy / "notes.jpg"), str(toy / "photo.png"), str(toy / "half.jpg"),
               str(toy / "huge.png"), str(toy / "gone.jpg")])
    assert rc == 2
    captured = capsys.readouterr()
    errors = captured.err.strip().splitlines()
    assert errors == [
        "irviewer: error: notes.jpg: is not a picture irviewer can read; save it as a JPEG "
        "or PNG",
        errors[1], "irviewer: error: huge.png: declares more pixels than the "
        "decompression-bomb limit of 1,500 pixels; refusing to decode it (shrink the image "
        "if it is genuine)", f"irviewer: error: {toy / 'gone.jpg'}: no such file",
        "irviewer: 4 of 5 photos could not be searched"]
    assert errors[1].startswith("irviewer: error: half.jpg: the file is damaged or cut short")
    assert "(red1)" in captured.out
    results = json.loads(out.read_text(encoding="utf-8"))["results"]
    assert [len(r["matches"]) for r in results] == [0, 5, 0, 0, 0]
    assert [("error" in r) for r in results] == [True, False, True, True, True]


def test_command_line_mistakes_are_usage_errors(toy, capsys):
    with pytest.raises(SystemExit) as e:
        main(["search", str(toy / "set.csv"), str(toy / "photo.png")])
    assert e.value.code == 2 and "-d FILE" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["search", "--demo"])
    assert "at least one photo" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["search", "--demo", "--top", "0", str(toy / "photo.png")])
    assert "--top must be at least 1" in capsys.readouterr().err


def test_a_visitor_photo_of_a_demo_painting_finds_that_painting_first():
    """One visitor-style photo (a crop of a gallery view, seen from the side, under other
    light, blurred and JPEG-compressed) of the demo; its first match is the painting."""
    dataset = read_manifest(DEMO / "demo.csv")
    index = dataset.gallery.index("images/van-gogh_the-starry-night_g1")
    with Image.open(dataset.image_paths[dataset.gallery[index]]) as im:
        photo = visitor_photo(im, "combined", np.random.default_rng(7))
    searcher = open_demo_searcher()
    matches = searcher.search(photo, k=5)
    assert matches[0].instance == "van-gogh_the-starry-night"
    assert matches[0].title == "The Starry Night, 1889 — Vincent van Gogh"
    assert matches[0].score > matches[-1].score
