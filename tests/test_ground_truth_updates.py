"""Changing the ground truth of an open dataset: every cached evaluation is re-scored for
the changed queries only and equals a full evaluation on the new dataset; CUHK03's sampler
is seeded per query so a re-scored query draws the samples the full evaluation drew."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import cut_at, rank
from irviewer.opening.opener import Method, Opened
from irviewer.opening.request import OpenRequest
from tests.core.helpers import aligned, sign_vectors

GROUPS = ("positive", "same_camera", "good", "ok", "junk", "same_patch")
#: (protocol, AP rule, self-match rule): finite sum, trapezoid (twice: the protocol's own and
#: an override), HPatches (list depth 50, AP over the listed positives) and CUHK03.
CACHED = (("instance", None, None), ("oxford", None, None), ("oxford", "finite", "remove"),
          ("hpatches-patch", None, None), ("cuhk03", None, None))


def random_groups(rng: np.random.Generator, n_gallery: int) -> dict[str, np.ndarray]:
    """Return random relevance groups (they may overlap: the protocols decide who wins)."""
    return {g: rng.choice(n_gallery, size=int(rng.integers(0, 9)), replace=False)
            for g in GROUPS}


def random_case(rng: np.random.Generator, n_queries: int = 6,
                n_gallery: int = 80) -> tuple[Dataset, Opened]:
    labels = rng.integers(0, 6, n_gallery)
    queries = tuple(build_query(f"q{i}", f"q{i}", random_groups(rng, n_gallery),
                                self_index=int(rng.integers(-1, n_gallery)),
                                meta={"label": int(rng.integers(0, 6))})
                    for i in range(n_queries))
    ds = Dataset(name="random", format="test", path=None,
                 gallery=tuple(f"g{i}" for i in range(n_gallery)), queries=queries,
                 groups=GROUPS, protocols=("instance",), gallery_labels=labels,
                 global_ignored=np.sort(rng.choice(n_gallery, size=3, replace=False)))
    ranking = rank(aligned(sign_vectors(rng, n_queries), sign_vectors(rng, n_gallery)), ds,
                   k=10)
    method = Method("m", Path("m.npz"), "descriptors", ranking)
    return ds, Opened(ds, {"m": method}, OpenRequest(Path("random")))


def assert_same(fast, slow) -> None:
    for key in slow.per_query:
        np.testing.assert_allclose(fast.per_query[key], slow.per_query[key], equal_nan=True,
                                   err_msg=f"{slow.protocol.name} {key}")
    np.testing.assert_array_equal(fast.positives.ranks, slow.positives.ranks)
    np.testing.assert_array_equal(fast.positives.offsets, slow.positives.offsets)
    np.testing.assert_array_equal(fast.positives.n_positives, slow.positives.n_positives)
    assert fast.summary == pytest.approx(slow.summary, nan_ok=True)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 100_000), n_changes=st.integers(0, 6))
def test_every_cached_evaluation_equals_a_full_evaluation_after_changes(seed, n_changes):
    rng = np.random.default_rng(seed)
    ds, opened = random_case(rng)
    for protocol, ap, self_match in CACHED:
        opened.evaluation("m", protocol, ap, self_match)
    for protocol, ap, self_match in CACHED[:2]:  # compared on the first 5 results only
        opened.evaluation("m", protocol, ap, self_match, depth=5)
    changed = rng.choice(ds.n_queries, size=n_changes, replace=False)
    queries = list(ds.queries)
    for q in changed:
        old = queries[q]
        queries[q] = build_query(old.name, old.image, random_groups(rng, ds.n_gallery),
                                 self_index=old.self_index, meta=old.meta)
    new = replace(ds, queries=tuple(queries))
    opened.update_ground_truth(new, changed.tolist())
    assert opened.dataset is new
    cache = dict(opened._evaluations)
    assert len(cache) == len(CACHED) + 2
    for (method, name, ap, self_match, depth), ev in cache.items():
        protocol = get_protocol(name).override(ap=ap, self_match=self_match)
        assert ev.dataset is new and ev.protocol == protocol
        ranking = opened.methods[method].ranking
        if depth is not None:  # an evaluation of the first results only, re-scored too
            ranking = cut_at(ranking, new, depth)
        assert_same(ev, evaluate(new, ranking, protocol))
    # The method's own view reads the same cache: nothing can drift.
    assert opened.methods["m"].evaluations["instance"] is opened.evaluation("m", "instance")


def test_only_the_changed_queries_are_re_scored(monkeypatch):
    import irviewer.core.evaluation as evaluation_module

    rng = np.random.default_rng(3)
    ds, opened = random_case(rng, n_queries=8)
    opened.evaluation("m", "instance")
    seen: list[int] = []
    real = evaluation_module.query_roles

    def spy(query, protocol, mask):
        seen.append(int(query.name[1:]))
        return real(query, protocol, mask)

    monkeypatch.setattr(evaluation_module, "query_roles", spy)
    opened.update_ground_truth(ds, [5, 2])
    assert sorted(seen) == [2, 5]


def test_a_dataset_with_another_gallery_is_refused_and_nothing_changes():
    rng = np.random.default_rng(4)
    ds, opened = random_case(rng)
    before = opened.evaluation("m", "instance")
    other = replace(ds, gallery=tuple(f"x{i}" for i in range(ds.n_gallery)))
    with pytest.raises(InputError, match="only the ground truth may change"):
        opened.update_ground_truth(other, [0])
    fewer = replace(ds, queries=ds.queries[:-1])
    with pytest.raises(InputError, match="only the ground truth may change"):
        opened.update_ground_truth(fewer, [0])
    assert opened.dataset is ds and opened.evaluation("m", "instance") is before


def test_cuhk03_re_scoring_one_query_draws_what_the_full_evaluation_drew():
    # Several images per identity, so every query's single-gallery-shot CMC depends on the
    # draws; each query must get the same value alone as within the full evaluation.
    rng = np.random.default_rng(7)
    n_q, n_g = 12, 60
    labels = np.repeat(np.arange(6), 10)
    queries = []
    for i in range(n_q):
        label = i % 6
        same = np.flatnonzero(labels == label)
        queries.append(build_query(f"q{i}", f"q{i}", {"positive": same[:7],
                                                      "same_camera": same[7:]},
                                   meta={"label": label}))
    ds = Dataset(name="reid", format="test", path=None,
                 gallery=tuple(f"g{i}" for i in range(n_g)), queries=tuple(queries),
                 groups=("positive", "same_camera"), protocols=("cuhk03",),
                 gallery_labels=labels)
    ranking = rank(aligned(rng.standard_normal((n_q, 8)).astype(np.float32),
                           rng.standard_normal((n_g, 8)).astype(np.float32)), ds, k=10)
    protocol = get_protocol("cuhk03").override(cmc_repeats=3)
    full = evaluate(ds, ranking, protocol)
    for q in range(n_q):
        alone = full.with_query(q, ds.queries[q])
        for k in protocol.cmc_ks:
            assert alone.per_query[f"CMC@{k}"][q] == full.per_query[f"CMC@{k}"][q], (q, k)
