"""The figure's Qt-free layout: which queries each selection picks (by hand), rows per query
and method, each tile's relevance from the core, the caption's conventions, bad input."""

from __future__ import annotations

import math

import pytest

from irviewer.core.errors import InputError
from irviewer.core.evaluation import NEGATIVE, POSITIVE
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest
from irviewer.reports.eval_report import (
    ScoredMethod,
    build_report,
    format_table,
    method_record,
)
from irviewer.view.figure import (
    Geometry,
    find_query,
    layout_figure,
    removed_before_ranking,
    select_queries,
)
from tests.corrections_cases import FAMILIES
from tests.corrections_cases import make_case as make_family_case
from tests.figure_case import make_case


@pytest.fixture
def evaluations(tmp_path):
    manifest = make_case(tmp_path)
    opened = open_now(OpenRequest(manifest, (tmp_path / "first.npz",
                                             tmp_path / "second.npz")))
    return [(m, opened.evaluation(m, "instance")) for m in opened.methods]


def test_selections_by_hand(evaluations):
    # AP under first.npz: qa 5/6, qb 1; under second.npz: qa 7/12, qb 1
    assert select_queries(evaluations, worst=1) == [0]
    assert select_queries(evaluations, best=1) == [1]
    assert select_queries(evaluations, worst=5) == [0, 1]
    assert select_queries(evaluations, largest_changes=1) == [0]
    assert select_queries(evaluations, queries=["qb", "qa.jpg"]) == [1, 0]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({}, "choose the queries with exactly one of --queries, --worst, --best or "
         "--largest-changes (given: none)"),
    ({"worst": 1, "best": 2}, "exactly one of"),
    ({"worst": 0}, "--worst needs a number of queries of at least 1, not 0"),
    ({"queries": ["zz"]}, "no query called 'zz'; queries are named like qa, qb"),
])
def test_bad_selections(evaluations, kwargs, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        select_queries(evaluations, **kwargs)


def test_largest_changes_needs_two_methods(evaluations):
    with pytest.raises(InputError, match="--largest-changes needs two methods to compare"):
        select_queries(evaluations[:1], largest_changes=2)


def test_ambiguous_short_name():
    class Q:
        def __init__(self, name):
            self.name = self.image = name

    queries = [Q("x/a"), Q("y/a"), Q("y/b")]
    assert find_query(queries, "b") == 2
    with pytest.raises(InputError, match="query 'a' is ambiguous: x/a, y/a"):
        find_query(queries, "a")


def test_rows_tiles_and_relevance_come_from_the_core(evaluations):
    layout = layout_figure(evaluations, [0, 1], 4, scores=True)
    assert [(r.query_name, r.method) for r in layout.rows] == [
        ("qa", "first.npz"), ("qa", "second.npz"), ("qb", "first.npz"), ("qb", "second.npz")]
    first_qa, second_qa = layout.rows[0], layout.rows[1]
    # first.npz ranks qa's gallery a1, c1, a2, b1: relevant, not, relevant, not
    assert [c.tile.name for c in first_qa.tiles] == ["a1", "c1", "a2", "b1"]
    assert [c.badge for c in first_qa.tiles] == [POSITIVE, NEGATIVE, POSITIVE, NEGATIVE]
    assert [c.rank_text for c in first_qa.tiles] == ["#1", "#2", "#3", "#4"]
    assert all(c.score_text for c in first_qa.tiles)
    for row in layout.rows:
        _, ev = next(e for e in evaluations if e[0] == row.method)
        codes = ev.relevance(row.query, [c.tile.index for c in row.tiles])
        assert [c.tile.relevance for c in row.tiles] == codes.tolist()
    assert second_qa.tiles[0].tile.name == "c1" and second_qa.tiles[0].badge == NEGATIVE
    assert first_qa.header == "Query A · first.npz · AP 83.3"
    assert second_qa.header == "Query A · second.npz · AP 58.3"
    assert layout.rows[2].header == "qb · first.npz · AP 100.0"
    assert math.isclose(first_qa.ap, 5 / 6)


def test_geometry_rows_do_not_overlap_and_fit(evaluations):
    g = Geometry()
    layout = layout_figure(evaluations, [0, 1], 5, geometry=g)
    cells = [c.rect for r in layout.rows for c in r.tiles] + [r.query_rect for r in layout.rows]
    for i, a in enumerate(cells):
        assert a.x >= 0 and a.x + a.w <= layout.width and a.y + a.h <= layout.height
        for b in cells[i + 1:]:
            assert (a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y
                    or b.y + b.h <= a.y)
    assert layout.width == pytest.approx(2 * g.margin + g.tile + g.query_gap
                                         + 5 * (g.tile + g.gap) - g.gap)
    assert layout.caption_rect.y >= max(r.query_rect.y + r.query_rect.h for r in layout.rows)


def test_caption_names_protocol_and_conventions(evaluations):
    layout = layout_figure(evaluations[:1], [0], 3, labels={"first.npz": "Ours"})
    text = " ".join(layout.caption)
    assert "protocol instance" in text and "CLICIDE" in text
    assert "AP: finite-sum AP" in text and "Ties: stable" in text
    assert "Ignored items are not shown" in text
    assert "✓ relevant, ✗ not relevant, – ignored" in text
    assert layout.rows[0].header == "Query A · Ours · AP 83.3"
    assert [b for b, _ in layout.legend] == [POSITIVE, NEGATIVE]


@pytest.mark.parametrize(("top", "message"), [(0, "--top must be a whole number from 1 to 50"),
                                              (51, "--top must be")])
def test_bad_depth(evaluations, top, message):
    with pytest.raises(InputError, match=message):
        layout_figure(evaluations, [0], top)


def test_ignored_items_shown_where_they_ranked(tmp_path):
    import numpy as np

    from irviewer.core.evaluation import IGNORED
    from tests.cli.test_compare import BASE, MANIFEST, NAMES

    (tmp_path / "set.csv").write_text(MANIFEST)
    np.savez(tmp_path / "base.npz", names=np.array(NAMES),
             features=np.array([BASE[n] for n in NAMES], dtype=np.float32))
    opened = open_now(OpenRequest(tmp_path / "set.csv", (tmp_path / "base.npz",)))
    evaluations = [(m, opened.evaluation(m, "instance")) for m in opened.methods]
    # a1 is a query and a gallery image: the instance protocol removes it from its own
    # ranking, where it came first (score 1).
    hidden = layout_figure(evaluations, [0], 2).rows[0]
    assert [c.tile.name for c in hidden.tiles] == ["b2", "a3"]
    shown = layout_figure(evaluations, [0], 2, show_ignored=True)
    row = shown.rows[0]
    assert [(c.tile.name, c.badge, c.rank_text) for c in row.tiles] == [
        ("a1", IGNORED, "ignored"), ("b2", NEGATIVE, "#1"), ("a3", POSITIVE, "#2")]
    assert [b for b, _ in shown.legend] == [POSITIVE, NEGATIVE, IGNORED]
    text = " ".join(shown.caption)
    assert "Removed before ranks are counted: the query's own image." in text
    assert "Ignored items are shown where they ranked and take no rank" in text


def removed_sentence(caption: str) -> str:
    return caption.split("Removed before ranks are counted: ", 1)[1].split(". ", 1)[0]


@pytest.mark.parametrize("family", FAMILIES)
def test_the_caption_and_the_table_never_say_nothing_is_removed_while_removing(family,
                                                                                tmp_path):
    """Figure caption and eval table, on a dataset of every correctable family (with and
    without query images in the gallery, junk ids, kept query images): "nothing" only when
    nothing is removed, and the self-match rule said once, in the same clause."""
    case = make_family_case(family, tmp_path)
    opened = open_now(OpenRequest(case.dataset, (case.descriptors,), options=case.options))
    for protocol in opened.protocols:
        ev = opened.evaluation(opened.first.name, protocol)
        ds, p = ev.dataset, ev.protocol
        said = removed_sentence(" ".join(layout_figure([("m", ev)], [0], 2).caption))
        assert said == removed_before_ranking(ev)
        removes_something = (any(ds.has_members(g) for g in p.ignored if g in ds.groups)
                             or len(ds.global_ignored)
                             or (p.self_match == "remove" and ds.has_self_images))
        assert said.startswith("nothing") == (not removes_something), said
        assert said.count("own image") <= 1 and "is removed" not in said
        table = format_table(build_report(ds, [ScoredMethod(
            opened.first.name, method_record(opened.first), [ev])]))
        line = next(t for t in table.splitlines() if t.startswith(f"protocol {p.name}:"))
        assert "nothing" not in line or p.self_match == "keep", line
        assert line.count("own image") == 1, line


def test_a_curators_one_photo_collection_has_no_relevance_legend_or_scores(tmp_path):
    """A collection whose artworks have one photo each: the figure's tiles are plain, its
    legend lists no ✓/✗, its headers give no AP and its caption says why; with one
    artwork of two photos in the collection, that artwork's row is judged and the legend
    is back."""
    from irviewer.view.result_list import PLAIN
    from tests.collection_photos import indexed

    for folder, views, judged in (("one", None, False), ("two", {"a": 2, "b": 1, "c": 1}, True)):
        opened = open_now(OpenRequest(indexed(tmp_path / folder, tmp_path / f"{folder}-c",
                                              views, artworks=4)))
        ev = opened.evaluation(opened.first.name, next(iter(opened.protocols)))
        queries = list(range(ev.dataset.n_queries))
        layout = layout_figure([(opened.first.name, ev)], queries, 3)
        plain = [r for r in layout.rows if ev.per_query["n_positives"][r.query] == 0]
        assert plain and all({c.badge for c in r.tiles} == {PLAIN} for r in plain)
        assert all(r.header.endswith("more like this") and "AP" not in r.header
                   for r in plain)
        caption = " ".join(layout.caption)
        if judged:
            assert [b for b, _ in layout.legend] == [POSITIVE, NEGATIVE]
            assert "✓ relevant" in caption
        else:
            assert layout.legend == ()
            assert "nothing is marked right or wrong" in caption and "AP" not in caption
        # no legend: the rows start at the margin, with no empty legend line above them
        top = layout.geometry.margin + (0 if not judged else layout.geometry.caption_line * 1.6)
        assert layout.rows[0].header_rect.y == top
