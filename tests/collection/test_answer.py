"""The answer to a visitor's photo, on a small collection indexed from the demo's views:
the artwork named when verified, "not in this collection" for a painting it does not
hold, the strictness, the calibration recorded at index time and kept by a re-run that
changes nothing, a collection made before verification, and ``search --json``."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from PIL import Image

from irviewer.cli import main
from irviewer.collection.answer import Answer, answer_json
from irviewer.collection.describing import SERIAL
from irviewer.collection.indexing import IndexRequest, answers_line
from irviewer.collection.matches import Match
from irviewer.collection.photo_search import open_demo_searcher, open_searcher
from irviewer.core.acceptance import Calibration
from irviewer.core.errors import command_line_text, window_text
from irviewer.formats.collection import read_record, write_record
from irviewer.formats.local_feature_file import LOCAL_FEATURES, read_local_features
from irviewer.formats.photo_folder import Photo
from irviewer.io.resources import resources_dir
from tests.collection_photos import index_now

IMAGES = resources_dir() / "demo" / "images"
HELD = ("bruegel_the-harvesters", "leonardo_mona-lisa", "van-gogh_the-starry-night",
        "hokusai_great-wave-off-kanagawa", "vermeer_girl-with-a-pearl-earring")
TITLES = "artwork,title,artist\nleonardo_mona-lisa,Mona Lisa,Leonardo da Vinci\n"


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    """Five paintings, one view each (the demo's global views "g1"), indexed with titles."""
    root = tmp_path_factory.mktemp("answer")
    photos = root / "photos"
    photos.mkdir()
    for artwork in HELD:
        shutil.copy(IMAGES / f"{artwork}_g1.jpg", photos / f"{artwork}.jpg")
    (root / "titles.csv").write_text(TITLES, encoding="utf-8")
    index_now(IndexRequest(photos, root / "coll", titles=root / "titles.csv", mode=SERIAL))
    return root / "coll"


def test_index_stores_the_features_and_calibrates_on_the_collection(collection):
    record = read_record(collection)
    assert record.local_features == LOCAL_FEATURES
    table = read_local_features(collection / LOCAL_FEATURES)
    assert set(table.names) == set(HELD) and table.side == 512
    assert all(0 < table.offsets[i + 1] - table.offsets[i] <= 500 for i in range(5))
    c = record.calibration
    assert c is not None and c.calibrated
    assert len(c.positives) == len(c.negatives) == 10  # five photos, two views each
    assert max(c.negatives) < min(sorted(c.positives)[2:])  # views of its own photo win


def test_the_index_says_when_an_artwork_is_named():
    line = answers_line(Calibration((40, 20, 11, 3), (4, 5, 6, 0)))
    assert line == ("answers: an artwork is named when at least 10 matched points of a "
                    "visitor's photo agree with its photo (normal, calibrated on its photos; "
                    "75% of the collection's own photos, changed as a visitor's phone changes "
                    "them, reach it)")
    assert "the default rule: too few artworks to calibrate)" in answers_line(Calibration())


def test_a_view_of_a_painting_it_holds_is_named_and_one_it_does_not_is_not(collection):
    searcher = open_searcher(collection)
    answer = searcher.answer(IMAGES / "leonardo_mona-lisa_g2.jpg", 3)
    assert answer.artwork == "leonardo_mona-lisa" and answer.calibrated
    assert answer.sentence() == "This is Mona Lisa — Leonardo da Vinci"
    assert answer.named is not None and answer.named.inliers >= answer.threshold
    assert len(answer.matches) == 3 and all(m.inliers is not None for m in answer.matches)
    other = searcher.answer(IMAGES / "rembrandt_storm-on-the-sea-of-galilee_g1.jpg", 3)
    assert other.artwork is None and other.named is None
    assert other.sentence().startswith("Not in this collection. Closest: ")
    assert "no artwork has" in other.evidence()


def test_the_strictness_asks_for_more_or_fewer_inliers(collection):
    searcher = open_searcher(collection)
    c = searcher.verifier.calibration
    photo = Image.open(IMAGES / "leonardo_mona-lisa_g3.jpg").convert("RGB")
    answers = {s: searcher.answer(photo, 1, s) for s in ("looser", "normal", "stricter")}
    assert [a.threshold for a in answers.values()] == [
        c.threshold("looser"), c.threshold("normal"), c.threshold("stricter")]
    assert answers["stricter"].threshold > answers["looser"].threshold
    assert answers["normal"].sentence() == "This is Mona Lisa — Leonardo da Vinci"


def test_a_rerun_that_changes_nothing_keeps_the_calibration_and_a_new_photo_remakes_it(
        tmp_path, collection):
    coll = tmp_path / "coll"
    shutil.copytree(collection, coll)
    photos = tmp_path / "photos"
    shutil.copytree(collection.parent / "photos", photos)
    record = read_record(coll)
    marked = Calibration((99,), (1,))  # what the run found, marked to be recognised
    write_record(coll, record.__class__(**{**record.__dict__, "calibration": marked,
                                           "photos_folder": "../photos"}))
    again = index_now(IndexRequest(photos, coll, mode=SERIAL)).record
    assert again.described == 0 and again.calibration == marked
    shutil.copy(IMAGES / "rousseau_the-sleeping-gypsy_g1.jpg", photos / "gypsy.jpg")
    grown = index_now(IndexRequest(photos, coll, mode=SERIAL)).record
    assert grown.described == 1 and grown.calibration != marked
    assert grown.calibration is not None and len(grown.calibration.negatives) == 12


def test_a_collection_made_before_verification_answers_and_is_described_again(
        tmp_path, collection):
    coll = tmp_path / "coll"
    shutil.copytree(collection, coll)
    shutil.copytree(collection.parent / "photos", tmp_path / "photos")
    (coll / LOCAL_FEATURES).unlink()
    record = read_record(coll)
    write_record(coll, record.__class__(**{**record.__dict__, "local_features": None,
                                           "calibration": None,
                                           "photos_folder": "../photos"}))
    answer = open_searcher(coll).answer(IMAGES / "leonardo_mona-lisa_g3.jpg", 2)
    assert answer.artwork == "leonardo_mona-lisa" and not answer.calibrated
    again = index_now(IndexRequest(tmp_path / "photos", coll, mode=SERIAL)).record
    assert again.described == 5 and again.local_features == LOCAL_FEATURES


def test_the_demo_answers_with_features_computed_on_demand():
    searcher = open_demo_searcher()
    answer = searcher.answer(IMAGES / "leonardo_mona-lisa_query.jpg", 5)
    assert answer.artwork == "leonardo_mona-lisa" and not answer.calibrated
    assert answer.threshold == 12  # the uncalibrated rule
    assert searcher.verifier.table is None and len(searcher.verifier._computed) == 10


def test_search_json_gives_the_answer_beside_the_matches(collection, tmp_path, capsys,
                                                         monkeypatch):
    from irviewer.io import allocator

    kept = []  # the batch keeps freed memory for the next photo (the test process does not)
    monkeypatch.setattr(allocator, "keep_freed_memory", lambda: kept.append(True) or True)
    out = tmp_path / "a.json"
    rc = main(["search", str(collection), str(IMAGES / "leonardo_mona-lisa_g2.jpg"),
               str(IMAGES / "rembrandt_storm-on-the-sea-of-galilee_g1.jpg"), "--top", "2",
               "--strictness", "stricter", "--json", str(out)])
    assert rc == 0 and kept == [True]
    text = capsys.readouterr().out
    assert "leonardo_mona-lisa_g2.jpg: This is Mona Lisa — Leonardo da Vinci\n" in text
    assert "rembrandt_storm-on-the-sea-of-galilee_g1.jpg: Not in this collection. " \
        "Closest: " in text
    named, other = json.loads(out.read_text(encoding="utf-8"))["results"]
    assert named["answer"] == "leonardo_mona-lisa" and other["answer"] is None
    assert named["rule"]["strictness"] == "stricter" and named["rule"]["calibrated"]
    assert named["matches"][0]["inliers"] >= named["rule"]["min_inliers"]
    assert {"rank", "item", "instance", "title", "score", "inliers"} <= set(
        other["matches"][0])


def test_a_bad_strictness_is_refused_by_the_command_line(collection, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["search", str(collection), "x.jpg", "--strictness", "lax"])
    assert stop.value.code == 2
    assert "invalid choice: 'lax'" in capsys.readouterr().err


def test_the_answer_names_the_artwork_with_the_most_inliers_over_the_threshold():
    def m(rank, instance, inliers):
        return Match(rank, rank, f"{instance}_{rank}", instance, instance.title(), 0.5,
                     inliers=inliers)
    matches = (m(1, "a", 11), m(2, "b", 40), m(3, "c", None))
    answer = Answer("p.jpg", "b", matches[1], matches, 12, "normal", True)
    assert answer.sentence() == "This is B"
    assert answer.closest() == ["A", "B", "C"]
    entry = answer_json(answer)
    assert entry["answer"] == "b" and entry["matches"][2]["inliers"] is None


class _ReversedPool:
    """A pool whose workers finish in the opposite order to the one they were given."""

    def __init__(self, pool):
        self.pool = pool

    def call(self, work, arguments):
        return reversed(list(self.pool.call(work, arguments)))


def test_the_calibration_recorded_does_not_depend_on_which_worker_finished_first(collection):
    from irviewer.collection.calibration import calibrate
    from irviewer.collection.describing import Pool

    table = read_local_features(collection / LOCAL_FEATURES)
    names = list(HELD)
    paths = [collection.parent / "photos" / f"{n}.jpg" for n in names]
    vectors = np.stack([np.random.default_rng(i).normal(size=8) for i in range(len(names))])

    def run(pool):
        steps = calibrate(pool, names, paths, names, vectors, table)
        while True:
            try:
                next(steps)
            except StopIteration as stop:
                return stop.value

    with Pool(SERIAL) as pool:
        in_order, reversed_order = run(pool), run(_ReversedPool(pool))
    assert len(set(in_order.calibration.positives)) > 1  # an order to lose
    assert in_order == reversed_order


def test_two_artworks_that_are_one_picture_are_named_with_what_to_do(tmp_path, collection):
    """Named after indexing, kept in the record and named again by a re-run that changes
    nothing, and gone once the extra photo is removed."""
    photos = tmp_path / "photos"
    shutil.copytree(collection.parent / "photos", photos)
    shutil.copy(photos / "leonardo_mona-lisa.jpg", photos / "mona-lisa-again.jpg")
    indexed = index_now(IndexRequest(photos, tmp_path / "coll", mode=SERIAL))
    told = [line for line in indexed.lines if "look like one picture" in line]
    assert len(told) == 1
    assert told[0].startswith("leonardo_mona-lisa.jpg and mona-lisa-again.jpg are filed as "
                              "different artworks but look like one picture: ")
    rule = indexed.record.calibration.threshold()
    assert int(told[0].split(": ")[1].split()[0]) >= rule
    assert "put them in one artwork's folder" in command_line_text(indexed.lines[-1])
    assert "Collection \u25b8 These are one artwork" in window_text(indexed.lines[-1])
    assert indexed.lines[-1].endswith("or remove the extra photo")
    (a, b, n), = read_record(tmp_path / "coll").lookalikes
    assert {a, b} == {"leonardo_mona-lisa", "mona-lisa-again"} and n >= rule
    again = index_now(IndexRequest(photos, tmp_path / "coll", mode=SERIAL))
    assert again.record.described == 0 and again.lines == indexed.lines
    (photos / "mona-lisa-again.jpg").unlink()
    fixed = index_now(IndexRequest(photos, tmp_path / "coll", mode=SERIAL))
    assert not any("look like one picture" in line for line in fixed.lines)
    assert fixed.record.lookalikes == ()


def test_distinct_paintings_are_no_lookalikes_and_a_long_list_is_cut(collection):
    from irviewer.collection.indexing import LOOKALIKES_TOLD, lookalike_lines

    assert not any("look like one picture" in line for line in index_now(IndexRequest(
        collection.parent / "photos", collection, mode=SERIAL)).lines)
    photos = [Photo(f"a{i}", f"a{i}.jpg", f"a{i}", 1, 1) for i in range(10)]
    many = [(f"a{i}", f"a{i + 1}", 90 - i) for i in range(9)]
    lines = lookalike_lines([*many, ("a0", "gone", 99)], photos)
    assert len(lines) == LOOKALIKES_TOLD + 2
    assert lines[0] == ("a0.jpg and a1.jpg are filed as different artworks but look like one "
                        "picture: 90 points agree")
    assert lines[LOOKALIKES_TOLD] == "... and 4 more pairs like them"
    assert "answered with both titles" in lines[-1]
    assert lookalike_lines([], photos) == []
