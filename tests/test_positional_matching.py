"""Descriptor rows without names are matched by position, and that is said every time: in
the method's notes (the window's banner), the eval table and the JSON; a result at chance
level adds that the rows are probably in another order. The chance level itself is tested
against exhaustive enumeration."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.cli import main
from irviewer.core.chance import chance_level, expected_random_ap, random_ap_variance
from irviewer.core.dataset import Dataset, build_query
from irviewer.core.descriptors import name_key
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import ranking_from_lists
from irviewer.formats.registry import read_dataset
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest, demo_request


def all_orders(n: int, big_n: int) -> np.ndarray:
    """Return the finite-sum AP of every placement of n positives among big_n ranks."""
    i = np.arange(1, n + 1)
    return np.array([np.mean(i / (np.array(c) + 1))
                     for c in itertools.combinations(range(big_n), n)])


def test_expected_random_ap_by_hand():
    # One positive among 3: AP is 1, 1/2 or 1/3 with equal chance -> 11/18.
    assert expected_random_ap(1, 3) == pytest.approx(11 / 18)
    # Two positives among 3: ranks {1,2}: 1; {1,3}: (1 + 2/3)/2; {2,3}: (1/2 + 2/3)/2.
    assert expected_random_ap(2, 3) == pytest.approx((1 + 5 / 6 + 7 / 12) / 3)
    assert expected_random_ap(4, 4) == 1.0 and expected_random_ap(1, 1) == 1.0


@settings(max_examples=40, deadline=None)
@given(big_n=st.integers(1, 9), data=st.data())
def test_expected_random_ap_equals_the_mean_over_every_order(big_n, data):
    n = data.draw(st.integers(1, big_n))
    assert expected_random_ap(n, big_n) == pytest.approx(all_orders(n, big_n).mean())


def test_random_ap_variance_agrees_with_enumeration():
    exact = all_orders(3, 9).var()
    estimate = random_ap_variance(3, 9, 20_000, np.random.default_rng(0))
    assert estimate == pytest.approx(exact, rel=0.05)
    assert random_ap_variance(4, 4, 100, np.random.default_rng(0)) == 0.0


def line_up_case(n_queries: int, n_gallery: int, positives: int, good: bool, seed: int = 0):
    """Queries each with ``positives`` random positives; ranked positives first (good) or
    in a random order."""
    rng = np.random.default_rng(seed)
    queries, lists = [], []
    for i in range(n_queries):
        pos = rng.choice(n_gallery, size=positives, replace=False)
        queries.append(build_query(f"q{i}", f"q{i}", {"positive": pos}))
        rest = np.setdiff1d(np.arange(n_gallery), pos)
        order = np.concatenate([pos, rng.permutation(rest)]) if good else rng.permutation(
            n_gallery)
        lists.append(order)
    ds = Dataset(name="t", format="test", path=None,
                 gallery=tuple(f"g{i}" for i in range(n_gallery)), queries=tuple(queries),
                 groups=("positive",), protocols=("instance",))
    ranking = ranking_from_lists(ds, np.array(lists), None, "lists")
    return evaluate(ds, ranking, get_protocol("instance"))


def test_a_random_order_is_at_chance_and_a_good_one_is_not():
    random = chance_level(line_up_case(40, 200, 5, good=False))
    assert random.decidable and random.at_chance
    assert random.chance == pytest.approx(expected_random_ap(5, 200))
    assert abs(random.observed - random.chance) < 3 * random.standard_error
    good = chance_level(line_up_case(40, 200, 5, good=True))
    assert good.observed == pytest.approx(1.0) and not good.at_chance
    # Two queries in a gallery of four cannot tell chance from skill: no claim either way.
    tiny = chance_level(line_up_case(2, 4, 2, good=False))
    assert not tiny.decidable and not tiny.at_chance


def positional_demo(folder: Path, shuffle: bool) -> Path:
    """Write the demo's strong descriptors as a names-less .npy in the dataset's layout
    (gallery in its order, then the queries that are not gallery images), or shuffled."""
    request = demo_request()
    dataset = read_dataset(request.dataset)
    with np.load(request.descriptors[0]) as archive:
        rows = {name_key(n): v for n, v in zip(archive["names"], archive["features"],
                                                strict=True)}
    in_gallery = {name_key(g) for g in dataset.gallery}
    names = [*dataset.gallery, *(q.name for q in dataset.queries
                                 if name_key(q.name) not in in_gallery)]
    matrix = np.stack([rows[name_key(n)] for n in names])
    if shuffle:
        matrix = matrix[np.random.default_rng(1).permutation(len(matrix))]
    path = folder / ("shuffled.npy" if shuffle else "ordered.npy")
    np.save(path, matrix)
    return path


def test_rows_in_the_dataset_order_are_matched_by_position_and_said_so(tmp_path):
    npy = positional_demo(tmp_path, shuffle=False)
    opened = open_now(OpenRequest(demo_request().dataset, (npy,)))
    method = opened.methods["ordered.npy"]
    assert method.matched_by_position
    assert method.position_note == method.notes[0] == (
        "ordered.npy: its rows carry no image names, so they were matched to the dataset by "
        "position (the rows are the gallery in the dataset's order, then the 22 queries that "
        "are not gallery images, in the dataset's order); if the file is in another order the "
        "numbers mean nothing. To match by name, give --row-names FILE (one image name per "
        "row, in file order) or a descriptor file with names")
    assert "“Row names” in the Open dialog" in method.position_note.for_window()
    assert len(method.notes) == 1  # a real result: no chance-level sentence
    assert method.evaluations["instance"].summary["mAP"] == pytest.approx(0.7918, abs=5e-5)
    assert set(method.notes) <= set(opened.notes)


def test_files_with_names_are_not_matched_by_position():
    opened = open_now(demo_request())
    assert not any(m.matched_by_position or m.position_note for m in opened.methods.values())
    assert opened.methods["strong.npz"].notes == ()


def test_rows_in_another_order_give_a_chance_level_sentence_in_table_and_json(tmp_path,
                                                                            capsys):
    npy = positional_demo(tmp_path, shuffle=True)
    out = tmp_path / "r.json"
    assert main(["eval", str(demo_request().dataset), "-d", str(npy), "--json",
                 str(out)]) == 0
    table = capsys.readouterr().out
    notes = json.loads(out.read_text())["dataset"]["notes"]
    position, chance = notes[-2:]
    assert position.startswith("shuffled.npy: its rows carry no image names, so they were "
                               "matched to the dataset by position")
    assert chance.startswith("shuffled.npy: the result is at chance level (finite-sum mAP ")
    assert chance.endswith("): the rows are probably in another order than the dataset's")
    assert f"note         {position}\n" in table and f"note         {chance}\n" in table


def test_the_real_fvecs_in_another_order_than_revisited_oxford_is_flagged(capsys,
                                                                          shared_samples):
    fvecs = shared_samples("oxford5k-lopq-fc7-features", "oxford_features.fvecs")
    gnd = shared_samples("revisited-oxford-paris-gnd", "gnd_roxford5k.pkl")
    assert main(["eval", str(gnd), "-d", str(fvecs)]) == 0
    table = capsys.readouterr().out
    assert "matched to the dataset by position" in table
    assert "the rows are probably in another order than the dataset's" in table
    rows = shared_samples("oxford5k-lopq-fc7-features", "oxford5k_imlist_sorted.txt")
    assert main(["eval", str(gnd), "-d", str(fvecs), "--row-names", str(rows)]) == 0
    named = capsys.readouterr().out
    assert "by position" not in named and "28.89" in named  # SOURCE.md's Easy mAP
