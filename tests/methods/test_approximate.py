"""Approximate methods in a request and a session: their names and keys both ways, one
file's search opening as --ann does, and the window's additions recorded so that a session
reopens them (an index file by its absolute path)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from irviewer.core.errors import InputError
from irviewer.methods.searched import iter_searched, plan_ann
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest, demo_paths
from tests.core.test_rerank import finish

pytest.importorskip("faiss")
MANIFEST, STRONG = demo_paths()
WEAK = STRONG.parent / "weak.npz"


def names(request: OpenRequest) -> list[str]:
    """Return the names of the methods ``request`` plans, in order."""
    return [spec.name for spec in request.plan()]


def test_names_and_keys_go_both_ways_with_reranked_and_approximate_methods():
    request = OpenRequest(MANIFEST, (STRONG, WEAK), ann=("IVF4,Flat",),
                          reranked=((1, "aqe"),),
                          approximate=((1, "HNSW8:efSearch=4,8"), (0, "/data/g.faiss:nprobe=2")))
    assert names(request) == [
        "strong.npz", "strong.npz + IVF4,Flat", "strong.npz + g.faiss:nprobe=2",
        "weak.npz", "weak.npz + aqe", "weak.npz + IVF4,Flat", "weak.npz + HNSW8:efSearch=4",
        "weak.npz + HNSW8:efSearch=8"]
    for name in names(request):
        key = request.method_key(name)
        assert key is not None and request.method_named(*key) == name
    assert request.method_key("strong.npz + g.faiss:nprobe=2") == (0, "g.faiss:nprobe=2")
    assert request.method_key("weak.npz + HNSW8:efSearch=16") is None
    assert request.method_named(0, "HNSW8:efSearch=4") is None
    assert request.approximate_pairs() == (
        (0, "IVF4,Flat"), (0, "/data/g.faiss:nprobe=2"), (1, "IVF4,Flat"),
        (1, "HNSW8:efSearch=4,8"))
    more = request.with_methods((STRONG.parent / "other.npz",))
    assert (more.ann, more.approximate) == ((), request.approximate_pairs())
    assert names(more)[-1] == "other.npz"  # --ann is not extended to it


def test_one_files_search_opens_as_ann_does_for_every_file():
    request = OpenRequest(MANIFEST, (STRONG, WEAK), approximate=((1, "IVF4,Flat:nprobe=1"),))
    opened = open_now(request)
    assert list(opened.methods) == names(request) == [
        "strong.npz", "weak.npz", "weak.npz + IVF4,Flat:nprobe=1"]
    both = open_now(OpenRequest(MANIFEST, (WEAK,), ann=("IVF4,Flat:nprobe=1",)))
    np.testing.assert_array_equal(
        opened.methods["weak.npz + IVF4,Flat:nprobe=1"].ranking.top_indices,
        both.methods["weak.npz + IVF4,Flat:nprobe=1"].ranking.top_indices)


def test_the_windows_additions_are_recorded_for_sessions(tmp_path, monkeypatch):
    import faiss

    opened = open_now(OpenRequest(MANIFEST, (STRONG, WEAK), reranked=((0, "aqe"),)))
    plan = plan_ann(opened.methods, opened.dataset, "weak.npz", "IVF4,Flat:nprobe=1,2")
    opened.add(finish(iter_searched(opened.methods["weak.npz"], plan, opened.dataset)))
    assert opened.request.approximate == ((1, "IVF4,Flat:nprobe=1,2"),)
    assert list(opened.methods) == names(opened.request)
    # an index file, named relative to the working folder, is recorded absolute; the
    # method's name (its file name) is the same either way
    gallery = opened.methods["strong.npz"].ranking.descriptors
    assert gallery is not None
    index = faiss.IndexFlatIP(gallery.dim)
    index.add(np.ascontiguousarray(gallery.gallery, dtype=np.float32))
    faiss.write_index(index, str(tmp_path / "g.faiss"))
    monkeypatch.chdir(tmp_path)
    plan = plan_ann(opened.methods, opened.dataset, "strong.npz", "g.faiss")
    opened.add(finish(iter_searched(opened.methods["strong.npz"], plan, opened.dataset)))
    assert opened.request.approximate[-1] == (0, os.path.join(str(tmp_path), "g.faiss"))
    assert "strong.npz + g.faiss" in names(opened.request)
    # a search of a re-ranked method is refused; adding nothing records nothing
    with pytest.raises(InputError, match="not an exact ranking"):
        plan_ann(opened.methods, opened.dataset, "strong.npz + aqe", "IVF4,Flat")
    before = opened.request
    opened.add([])
    assert opened.request == before


def test_a_recorded_search_that_fails_is_said_and_the_rest_opens(tmp_path):
    """A session's approximate method whose index file is gone: the data opens with every
    other method and a sentence saying what to do (``not_reopened``); the request keeps it
    for when the file is back. The same SPEC given with --ann (``ann``) stops the opening
    with its sentence."""
    gone = str(tmp_path / "g.faiss")
    request = OpenRequest(MANIFEST, (STRONG,),
                          approximate=((0, f"{gone}:nprobe=2"), (0, "IVF4,Flat:nprobe=1")))
    opened = open_now(request)
    assert list(opened.methods) == ["strong.npz", "strong.npz + IVF4,Flat:nprobe=1"]
    (note,) = opened.not_reopened
    assert not opened.notes
    assert note == (f"strong.npz: the approximate method {gone}:nprobe=2 was not searched "
                    f"again (approximate index {gone}: no such index file); put its index "
                    "file back, or add the method again (File ▸ Add an approximate index "
                    "method…)")
    assert opened.request.approximate == request.approximate
    with pytest.raises(InputError, match="no such index file"):
        open_now(OpenRequest(MANIFEST, (STRONG,), ann=(f"{gone}:nprobe=2",)))


def test_the_names_file_of_index_ids_follows_every_index_file_of_the_request(tmp_path):
    """``--ann-names`` reaches an index file's method whether the SPEC was given for every
    file or recorded for one (a file added in the window turns the first into the second,
    as a saved session does)."""
    ids = tmp_path / "ids.txt"
    request = OpenRequest(MANIFEST, (STRONG,), ann=(f"{tmp_path / 'g.faiss'}:nprobe=2",),
                          ann_names=ids)
    later = request.with_methods((WEAK,))
    for r in (request, later):
        (spec,) = [s for s in r.plan() if s.derivation is not None]
        assert spec.derivation.id_names == ids
