"""Corrections per benchmark family, end to end: a live re-score through
``Opened.update_ground_truth`` equals a full evaluation of the corrected ground truth (random
corrections), undo and redo restore the exact per-query values, and the copy
``apply-corrections`` writes reads back as the corrected dataset and scores exactly as
``eval --corrections``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irviewer.cli import main
from irviewer.core.corrections import (
    Correction,
    CorrectionLog,
    NothingToChangeError,
    beyond_labels,
    can_relabel,
    group_of,
    pair_labels,
)
from irviewer.core.descriptors import name_key
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate
from irviewer.core.label_rules import REID_DISTRACTOR_ID, REID_JUNK_ID
from irviewer.core.ranking import cut_at
from irviewer.formats.corrected import write_corrected
from irviewer.formats.corrections_file import write_corrections
from irviewer.formats.registry import read_dataset
from irviewer.opening.opener import Opened, open_now
from irviewer.opening.request import OpenRequest
from tests.corrections_cases import FAMILIES, make_case
from tests.test_ground_truth_updates import assert_same


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    return {f: make_case(f, tmp_path_factory.mktemp(f.replace("-", "_")), seed=i)
            for i, f in enumerate(FAMILIES)}


def opened_case(case) -> Opened:
    opened = open_now(OpenRequest(case.dataset, (case.descriptors,), options=case.options))
    for p in opened.protocols:  # a second convention in the cache too
        opened.evaluation(opened.first.name, p, ap="finite", self_match="keep")
    return opened


def image_labels(dataset) -> list[str]:
    labels = {str(v) for v in np.asarray(dataset.gallery_labels).tolist()}
    labels |= {str(q.meta["label"]) for q in dataset.queries}
    return sorted(labels)


@st.composite
def corrections(draw, dataset):
    """Draw up to six corrections: pairs in the family's groups, and relabels (to a label
    the dataset has, or a new one) where the family has image labels."""
    out = []
    images = [*dataset.gallery, *(q.image for q in dataset.queries)]
    labels = image_labels(dataset) if can_relabel(dataset) else []
    new = {"market1501": "77", "cuhk03": "77", "holidays": "1999"}.get(dataset.protocols[0],
                                                                        "new-label")
    for _ in range(draw(st.integers(1, 6))):
        if labels and draw(st.booleans()):
            out.append(Correction("", draw(st.sampled_from(images)),
                                  draw(st.sampled_from([*labels, new]))))
        else:
            out.append(Correction(draw(st.sampled_from([q.name for q in dataset.queries])),
                                  draw(st.sampled_from(dataset.gallery)),
                                  draw(st.sampled_from(pair_labels(dataset)))))
    return out


def label_of(dataset, item: str) -> str:
    """Return the image label of ``item`` (a gallery image, else a query's own image)."""
    g = dataset.gallery_index().get(item)
    if g is not None:
        return str(np.asarray(dataset.gallery_labels)[g])
    return next(str(q.meta["label"]) for q in dataset.queries if q.image == item)


def assert_refused_for_its_reason(dataset, family: str, c: Correction,
                                  error: InputError) -> None:
    """A drawn correction may be refused only for a reason its family gives, with that
    sentence, and only when the reason holds: it sets what is already there (any family);
    on re-identification sets, a pair on an image removed for every query (junk id -1), a
    relabel to or from the junk id, a query relabelled to the junk or distractor id."""
    message = str(error)
    if isinstance(error, NothingToChangeError):
        if c.is_relabel:
            assert label_of(dataset, c.item) == c.label, message
        else:
            q = next(i for i, query in enumerate(dataset.queries) if query.name == c.query)
            assert group_of(dataset.queries[q], dataset.gallery_index()[c.item]) == c.label
        assert "already" in message
        return
    assert family in ("reid", "reid-manifest"), f"{family} refused {c}: {message}"
    junk, distractor = str(REID_JUNK_ID), str(REID_DISTRACTOR_ID)
    if not c.is_relabel:
        assert label_of(dataset, c.item) == junk, message
        assert "is removed for every query (junk id or ignored label), so a pair correction "\
               "would change nothing; relabel the image instead" in message
    elif junk in (c.label, label_of(dataset, c.item)):
        assert "id -1 (junk) takes an image out of every ranking, so relabelling" in message
    else:
        assert c.label == distractor and any(q.image == c.item for q in dataset.queries)
        assert f"is a query and id {distractor} marks distractor images, which are never " \
               "queries; give it the id of the person it shows" in message


def values(opened: Opened) -> dict:
    return {key: {k: v.copy() for k, v in ev.per_query.items()}
            for key, ev in opened._evaluations.items()}


def assert_values_equal(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        for metric in a[key]:
            np.testing.assert_array_equal(a[key][metric], b[key][metric],
                                          err_msg=f"{key} {metric}")


def assert_full_evaluation(opened: Opened) -> None:
    for (method, _, _, _, depth), ev in opened._evaluations.items():
        ranking = opened.methods[method].ranking
        if depth is not None:
            ranking = cut_at(ranking, opened.dataset, depth)
        assert_same(ev, evaluate(opened.dataset, ranking, ev.protocol))


def assert_same_ground_truth(a, b) -> None:
    """The same gallery and queries (names compared as descriptor files match them) with the
    same groups, labels and removals."""
    assert [name_key(g) for g in a.gallery] == [name_key(g) for g in b.gallery]
    assert [name_key(q.name) for q in a.queries] == [name_key(q.name) for q in b.queries]
    np.testing.assert_array_equal(a.global_ignored, b.global_ignored)
    if a.gallery_labels is not None:
        assert [str(v) for v in a.gallery_labels.tolist()] == \
            [str(v) for v in b.gallery_labels.tolist()]
    for qa, qb in zip(a.queries, b.queries, strict=True):
        for group in {*a.groups, *b.groups}:
            np.testing.assert_array_equal(qa.group(group), qb.group(group),
                                          err_msg=f"{qa.name} {group}")
        assert qa.self_index == qb.self_index


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_takes_a_pair_correction(cases, family):
    """Each family works: a negative made the family's first group changes that query."""
    ds = read_dataset(cases[family].dataset, options=cases[family].options)
    label = pair_labels(ds)[0]
    query = ds.queries[0]
    item = next(g for g in range(ds.n_gallery)
                if group_of(query, g) not in (label, "junk") and g not in ds.global_ignored)
    log = CorrectionLog(ds)
    changed = log.push(Correction(query.name, ds.gallery[item], label))
    assert changed.tolist() == [0]
    assert group_of(log.dataset.queries[0], item) == label


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(data=st.data())
def test_live_rescore_equals_a_full_evaluation_and_undo_redo_are_exact(cases, family, data):
    opened = opened_case(cases[family])
    published = values(opened)
    log = CorrectionLog(opened.dataset)
    applied = []
    for c in data.draw(corrections(opened.dataset)):
        try:
            changed = log.push(c)
        except InputError as e:
            assert_refused_for_its_reason(log.dataset, family, c, e)
            continue
        applied.append(c)
        opened.update_ground_truth(log.dataset, changed)
        assert_full_evaluation(opened)
    corrected = values(opened)
    while len(log):
        entry = log.pop()
        opened.update_ground_truth(log.dataset, entry.changed)
    assert_values_equal(values(opened), published)
    for c in applied:
        changed = log.push(c)
        opened.update_ground_truth(log.dataset, changed)
    assert_values_equal(values(opened), corrected)


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(data=st.data())
def test_the_written_copy_reads_back_as_the_corrected_dataset(cases, family, data, tmp_path):
    case = cases[family]
    published = read_dataset(case.dataset, options=case.options)
    log = CorrectionLog(published)
    for c in data.draw(corrections(published)):
        try:
            log.push(c)
        except InputError as e:
            assert_refused_for_its_reason(log.dataset, family, c, e)
    out = tmp_path / f"{data.draw(st.integers(0, 10**9))}{case.out.suffix}"
    if beyond_labels(log.dataset):
        with pytest.raises(InputError, match="pair corrections that image labels cannot "
                                             "express"):
            write_corrected(log.dataset, out)
        return
    _, notes = write_corrected(log.dataset, out)
    back = read_dataset(out, options=case.options)
    if not notes:
        assert_same_ground_truth(back, log.dataset)
        return
    # An instance set's reader leaves out queries with no other gallery image of their
    # instance, and a manifest's removed queries come back once they have one: the notes say
    # so, and every other query reads back as corrected.
    names = {name_key(q.name) for q in back.queries}
    kept = [q for q in log.dataset.queries if name_key(q.name) in names]
    for q in log.dataset.queries:
        if name_key(q.name) not in names:
            assert not np.any(q.group("positive") != q.self_index), q.name
            assert "no other gallery image" in notes[0]
    if len(back.queries) > len(kept):
        assert "back as queries" in notes[-1]
    by_name = {name_key(q.name): q for q in back.queries}
    for q in kept:
        np.testing.assert_array_equal(q.group("positive"), by_name[name_key(q.name)].group(
            "positive"))


FIXED = {
    "manifest": [Correction("", "img/a1", "b", "ann", "2026-11-23T14:00:00Z", "same painting"),
                 Correction("", "img/c_q", "d")],
    "instances": [Correction("", "gallery/a-1", "b"), Correction("", "query/c-q0", "d")],
    "reid": [Correction("", "0001_c1s1_000100_00", "2"),
             Correction("", "0000_c1s1_000300_00", "3")],
    "reid-manifest": [Correction("", "imgs/0001_c1s1_000100_00", "2")],
    "oxford": [Correction("souls_1", "bridge_000003", "good"),
               Correction("bridge_2", "bridge_000005", "negative")],
    "revisited": [Correction("qim0", "im010", "hard"), Correction("qim2", "im001", "hard")],
    "holidays": [Correction("", "100101", "1002"), Correction("", "100300", "1000")],
}


def run_json(args: list[str], out: Path) -> dict:
    assert main([*args, "--json", str(out)]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize("family", FAMILIES)
def test_eval_of_the_written_copy_gives_the_numbers_of_eval_corrections(cases, family,
                                                                         tmp_path, capsys):
    case = cases[family]
    corrections = tmp_path / "fix.corrections.csv"
    write_corrections(corrections, FIXED[family])
    out = tmp_path / f"copy{case.out.suffix}"
    common = ["-d", str(case.descriptors), *case.args]
    published = run_json(["eval", str(case.dataset), *common], tmp_path / "a.json")
    corrected = run_json(["eval", str(case.dataset), *common, "--corrections",
                          str(corrections)], tmp_path / "b.json")
    assert main(["apply-corrections", str(case.dataset), "--corrections", str(corrections),
                 "--out", str(out), *case.args]) == 0
    written = run_json(["eval", str(out), *common], tmp_path / "c.json")
    assert corrected["corrections"]["n_applied"] == len(FIXED[family])
    assert corrected["corrections"]["path"] == str(corrections)
    assert len(corrected["corrections"]["sha256"]) == 64
    assert "corrections" not in published and "corrections" not in written
    table = capsys.readouterr().out
    assert f"corrections  {corrections} (sha256" in table
    assert f"{len(FIXED[family])} applied; these numbers score the corrected" in table
    for pub, cor, wri in zip(published["evaluations"], corrected["evaluations"],
                             written["evaluations"], strict=True):
        assert cor["summary"] == wri["summary"]
        assert [{k: v for k, v in q.items() if k != "name"} for q in cor["queries"]] == \
            [{k: v for k, v in q.items() if k != "name"} for q in wri["queries"]]
        assert cor["queries"] != pub["queries"]  # the corrections did change something


def test_hpatches_is_refused_in_one_sentence(tmp_path):
    from irviewer.core.corrections import pair_choices
    from irviewer.core.dataset import Dataset, build_query

    ds = Dataset(name="hp", format="hpatches", path=tmp_path / "x.benchmark",
                 gallery=("a", "b"), queries=(build_query("a", "a", {"same_patch": [0]}),),
                 groups=("same_patch", "same_image"), protocols=("hpatches-patch",))
    sentence = ("x.benchmark: HPatches labels come from geometry (patches cut at known "
                "homographies), not from annotation, so they cannot be corrected")
    for attempt in (lambda: pair_choices(ds), lambda: write_corrected(ds, tmp_path / "o"),
                    lambda: CorrectionLog(ds).push(Correction("a", "b", "same_patch")),
                    lambda: CorrectionLog(ds).push(Correction("", "b", "x"))):
        with pytest.raises(InputError) as e:
            attempt()
        assert str(e.value) == sentence


def test_opening_applies_the_file_it_is_given(cases):
    from dataclasses import replace

    from irviewer.formats.corrections_file import default_corrections_path

    case = cases["holidays"]
    request = OpenRequest(case.dataset, (case.descriptors,))
    plain = open_now(request)
    assert plain.corrections is None
    sidecar = default_corrections_path(case.dataset)
    assert sidecar == case.dataset.with_name("holidays_images.corrections.csv")
    write_corrections(sidecar, FIXED["holidays"])
    try:
        opened = open_now(replace(request, corrections=sidecar))
    finally:
        sidecar.unlink()
    assert opened.corrections is not None and len(opened.corrections.log) == 2
    assert opened.corrections.log.published.gallery_labels.tolist()[4] == "1001"
    assert opened.dataset.gallery_labels.tolist()[4] == "1002"
    for key, ev in opened._evaluations.items():
        assert_same(ev, evaluate(opened.dataset, opened.methods[key[0]].ranking, ev.protocol))
    assert plain.evaluations["holidays"].summary != opened.evaluations["holidays"].summary


def test_a_cuhk03_copy_must_be_named_so_that_it_scores_as_cuhk03(cases, tmp_path):
    from dataclasses import replace

    published = read_dataset(cases["reid"].dataset)
    cuhk03 = replace(published, protocols=("cuhk03",))
    with pytest.raises(InputError, match=re.escape(
            "fixed.csv: a manifest with cameras is scored with the market1501 protocol unless "
            "its name contains cuhk03, but market is scored with cuhk03; name the file so the "
            "copy scores the same (e.g. cuhk03_fixed.csv for cuhk03)")):
        write_corrected(cuhk03, tmp_path / "fixed.csv")
    write_corrected(cuhk03, tmp_path / "cuhk03_fixed.csv")
    assert read_dataset(tmp_path / "cuhk03_fixed.csv").protocols == ("cuhk03",)
