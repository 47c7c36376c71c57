"""Two artworks of a collection that show one picture (a duplicate photo filed as its own
artwork): the answers' rule is calibrated without them, so the other artworks are answered
as without the duplicate; a photo of either is answered with both titles; the matches
that verify lead the list; a calibration recorded before this rule is made again; the
curator puts the two together (and takes it back)."""

from __future__ import annotations

import shutil

import pytest

from irviewer.collection.answer import Answer, Verifier, answer_json, leading, one_of
from irviewer.collection.calibration import lookalike_pairs
from irviewer.collection.curation import MergeArtworks
from irviewer.collection.describing import SERIAL
from irviewer.collection.indexing import IndexRequest
from irviewer.collection.lookalikes import (
    ArtworkPair,
    artwork_groups,
    artwork_pairs,
    lookalike_warning,
    merge_choices,
)
from irviewer.collection.matches import Match
from irviewer.collection.photo_search import open_searcher
from irviewer.core.acceptance import Calibration
from irviewer.core.errors import InputError
from irviewer.core.local_features import LocalFeatures
from irviewer.formats.collection import read_collection, read_record, write_record
from irviewer.io.resources import resources_dir
from tests.collection_photos import index_now

IMAGES = resources_dir() / "demo" / "images"
HELD = ("bruegel_the-harvesters", "leonardo_mona-lisa", "van-gogh_the-starry-night",
        "hokusai_great-wave-off-kanagawa", "vermeer_girl-with-a-pearl-earring")
TITLES = ("id,title,artist\nvan-gogh_the-starry-night,The Starry Night,Vincent van Gogh\n"
          "starry-print,The Starry Night (gift shop print),Vincent van Gogh\n"
          "hokusai_great-wave-off-kanagawa,The Great Wave off Kanagawa,Hokusai\n")
#: New photos of the collection's artworks: none of them was indexed.
VISITORS = {"leonardo_mona-lisa_g2.jpg": "leonardo_mona-lisa",
            "hokusai_great-wave-off-kanagawa_d2.jpg": "hokusai_great-wave-off-kanagawa",
            "bruegel_the-harvesters_g3.jpg": "bruegel_the-harvesters",
            "vermeer_girl-with-a-pearl-earring_g2.jpg": "vermeer_girl-with-a-pearl-earring"}


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """(collection without the duplicate, collection with it): five paintings, one view
    each, and then a second photo of The Starry Night filed as its own artwork."""
    root = tmp_path_factory.mktemp("lookalikes")
    (root / "titles.csv").write_text(TITLES, encoding="utf-8")
    photos = root / "photos"
    photos.mkdir()
    for artwork in HELD:
        shutil.copy(IMAGES / f"{artwork}_g1.jpg", photos / f"{artwork}.jpg")
    plain = index_now(IndexRequest(photos, root / "plain", root / "titles.csv",
                                   mode=SERIAL)).collection
    shutil.copy(IMAGES / "van-gogh_the-starry-night_g2.jpg", photos / "starry-print.jpg")
    with_duplicate = index_now(IndexRequest(photos, root / "dup", root / "titles.csv",
                                            mode=SERIAL)).collection
    return plain, with_duplicate


def test_a_duplicate_does_not_raise_the_rule_for_the_whole_collection(pair):
    plain, duplicated = (read_record(c).calibration for c in pair)
    assert duplicated.threshold() == plain.threshold() == 10
    assert duplicated.lookalikes_left_out
    (a, b, n), = read_record(pair[1]).lookalikes
    assert {a, b} == {"starry-print", "van-gogh_the-starry-night"}
    assert n >= duplicated.threshold() and max(duplicated.negatives) < n


def test_the_other_artworks_are_answered_as_without_the_duplicate(pair):
    plain, duplicated = (open_searcher(c) for c in pair)
    for photo, artwork in VISITORS.items():
        before, after = plain.answer(IMAGES / photo, 5), duplicated.answer(IMAGES / photo, 5)
        assert after.artwork == before.artwork == artwork, photo
        assert after.threshold == before.threshold and not after.also
        assert after.sentence() == before.sentence()


def test_a_photo_of_either_is_answered_with_both_titles(pair, tmp_path):
    searcher = open_searcher(pair[1])
    answer = searcher.answer(IMAGES / "van-gogh_the-starry-night_g3.jpg", 5)
    assert set(answer.artworks) == {"van-gogh_the-starry-night", "starry-print"}
    assert answer.sentence() in (
        "This is The Starry Night — Vincent van Gogh or The Starry Night (gift shop print) "
        "— Vincent van Gogh",
        "This is The Starry Night (gift shop print) — Vincent van Gogh or The Starry Night "
        "— Vincent van Gogh")
    assert "holds this picture as 2 artworks" in answer.evidence()
    entry = answer_json(answer)
    assert {entry["answer"], *entry["also"]} == {"van-gogh_the-starry-night", "starry-print"}


def test_the_rule_leaves_out_pairs_that_reach_the_rule_computed_without_them():
    # photo 0's view agrees with photo 1 (another artwork) on 300 points; every other
    # negative is chance (at most 6): the rule without the pair is 10, not 1.6 x 300
    views = [(0, {1: 300, 2: 4}), (0, {1: 280, 3: 6}), (1, {0: 290, 2: 3}), (2, {3: 5}),
             (3, {2: 6}), (4, {2: 2})]
    calibration, pairs = lookalike_pairs((100, 90, 80, 70, 60, 50), views)
    assert pairs == {frozenset((0, 1))}
    assert calibration.negatives == (4, 6, 3, 5, 6, 2) and calibration.threshold() == 10
    # a second duplicate shows once the first is left out: 40 < 1.6 x 300, 40 >= 10
    calibration, pairs = lookalike_pairs((100,) * 4, [(0, {1: 300}), (2, {3: 40}),
                                                      (4, {5: 5}), (5, {4: 4})])
    assert pairs == {frozenset((0, 1)), frozenset((2, 3))}
    assert calibration.threshold() == 10
    # chance alignments alone: nothing is left out
    calibration, pairs = lookalike_pairs((50, 50), [(0, {1: 7}), (1, {0: 6})])
    assert pairs == frozenset() and calibration.negatives == (7, 6)


def match(rank, instance, inliers, title=""):
    return Match(rank, rank, f"{instance}.jpg", instance, title or instance, 0.5 - rank / 100,
                 inliers=inliers)


def test_the_named_painting_is_the_first_match_shown(pair, monkeypatch):
    """The descriptor ranks The Sleeping Gypsy (4 points) before The Great Wave (305): the
    match that names the artwork leads, then the verified ones by points, then the rest."""
    ordered = leading([match(1, "gypsy", 4), match(2, "mona", None), match(3, "wave", 305),
                       match(4, "swing", 12)], 10)
    assert [(m.rank, m.instance) for m in ordered] == [
        (1, "wave"), (2, "swing"), (3, "gypsy"), (4, "mona")]
    counts = {"gypsy.jpg": 4, "wave.jpg": 305, "mona.jpg": 0}
    dataset = read_collection(pair[0])
    monkeypatch.setattr("irviewer.collection.answer.inliers",
                        lambda photo, ref, query: counts[ref])
    verifier = Verifier(dataset, None, Calibration((50,), (5,)))
    monkeypatch.setattr(verifier, "reference", lambda item: item)
    answer = verifier.answer("p.jpg", LocalFeatures.empty(640), [match(1, "gypsy", None),
                                                 match(2, "wave", None),
                                                 match(3, "mona", None)], 3)
    assert answer.artwork == "wave" and answer.matches[0].instance == "wave"
    assert [m.rank for m in answer.matches] == [1, 2, 3]


def test_a_calibration_recorded_before_lookalikes_were_left_out_is_made_again(
        pair, tmp_path):
    coll = tmp_path / "dup"
    shutil.copytree(pair[1], coll)
    photos = tmp_path / "photos"
    shutil.copytree(pair[1].parent / "photos", photos)
    record = read_record(coll)
    old = Calibration((60, 60), (330, 4), lookalikes_left_out=False)
    assert Calibration.from_dict({"positives": [60, 60], "negatives": [330, 4]}) == old
    write_record(coll, record.__class__(**{**record.__dict__, "calibration": old,
                                           "photos_folder": "../photos"}))
    again = index_now(IndexRequest(photos, coll, mode=SERIAL)).record
    assert again.described == 0 and again.calibration is not None
    assert again.calibration.lookalikes_left_out and again.calibration.threshold() == 10


def test_pairs_groups_and_what_the_window_says():
    pairs = [ArtworkPair("a", "b", "Mona", "Mona (print)", 62),
             ArtworkPair("b", "c", "Mona (print)", "Mona (poster)", 40),
             ArtworkPair("x", "y", "Wave", "Wave", 30)]
    groups = artwork_groups(pairs)
    assert groups["a"] == groups["c"] == ("a", "b", "c") and groups["y"] == ("x", "y")
    warning = lookalike_warning(pairs)
    assert warning is not None and warning.startswith(
        "These pairs of artworks look like one picture filed twice: «Mona» and «Mona "
        "(print)» (62 points agree); ")
    assert "answered with both titles" in warning
    assert "Collection ▸ These are one artwork…" in warning
    assert lookalike_warning([]) is None
    choices = merge_choices(pairs[2:])
    assert choices == {"Keep «Wave»: the photos of «Wave» become views of it (x kept, y "
                       "joins it)": ("x", "y"),
                       "Keep «Wave»: the photos of «Wave» become views of it (y kept, x "
                       "joins it)": ("y", "x")}
    assert one_of(["A"]) == "A" and one_of(["A", "B", "C"]) == "A, B or C"
    named = match(1, "a", 62, "Mona")
    answer = Answer("p.jpg", "a", named, (named,), 10, "normal", True, (("b", "Mona (print)"),))
    assert answer.sentence() == "This is Mona or Mona (print)"


def test_two_artworks_put_together_become_one_and_come_apart_on_undo(pair, tmp_path):
    photos, coll = tmp_path / "photos", tmp_path / "dup"
    shutil.copytree(pair[1].parent / "photos", photos)
    shutil.copytree(pair[1], coll)
    record = read_record(coll)
    write_record(coll, record.__class__(**{**record.__dict__, "photos_folder": "../photos"}))
    before = sorted(p.name for p in photos.iterdir())
    pairs = artwork_pairs(read_record(coll).lookalikes, read_collection(coll))
    assert [(p.first, p.second) for p in pairs] == [("starry-print",
                                                     "van-gogh_the-starry-night")]
    merge = MergeArtworks(coll, "van-gogh_the-starry-night", "starry-print", "the two")
    merge.do()
    folder = photos / "van-gogh_the-starry-night"
    assert sorted(p.name for p in folder.iterdir()) == ["starry-print.jpg",
                                                        "van-gogh_the-starry-night.jpg"]
    merged = index_now(IndexRequest(photos, coll, mode=SERIAL)).record
    assert merged.artworks == 5 and merged.lookalikes == ()
    assert {p.artwork for p in merged.photos if "starry" in p.file} == {
        "van-gogh_the-starry-night"}
    merge.undo()
    assert sorted(p.name for p in photos.iterdir()) == before
    apart = index_now(IndexRequest(photos, coll, mode=SERIAL)).record
    assert apart.artworks == 6 and len(apart.lookalikes) == 1
    with pytest.raises(InputError, match="no photo is of the artwork nobody"):
        MergeArtworks(coll, "nobody", "starry-print", "x").do()
