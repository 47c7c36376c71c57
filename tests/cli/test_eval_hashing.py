"""`irviewer eval` hashes its descriptor file beside the reading, the ranking and the
scoring: the ranking does not wait for the hash, the report does, and the --json document is
the same whether the hash finishes first or last."""

from __future__ import annotations

import hashlib
import threading

from irviewer.cli import main
from irviewer.core import file_digests
from irviewer.methods import making
from tests.cli.test_eval_threads import tied_reid_set


def test_the_ranking_does_not_wait_for_the_hash_and_the_document_is_the_same(tmp_path,
                                                                             monkeypatch):
    folder, npz = tied_reid_set(tmp_path)
    quick, slow = tmp_path / "quick.json", tmp_path / "slow.json"
    assert main(["eval", str(folder), "-d", str(npz), "--json", str(quick)]) == 0
    monkeypatch.setattr(file_digests, "_DIGESTS", {})  # hashed anew
    ranking_started = threading.Event()
    rank = making.iter_rank

    def noted(*args, **kwargs):
        ranking_started.set()
        return rank(*args, **kwargs)

    waited = []
    hash_into = file_digests._hash_into

    def after_the_ranking_starts(h, path):
        waited.append(ranking_started.wait(10))
        hash_into(h, path)

    monkeypatch.setattr(making, "iter_rank", noted)
    monkeypatch.setattr(file_digests, "_hash_into", after_the_ranking_starts)
    assert main(["eval", str(folder), "-d", str(npz), "--json", str(slow)]) == 0
    assert waited == [True]  # the hash was still running when the ranking began
    assert slow.read_text() == quick.read_text()
    assert f'"sha256": "{hashlib.sha256(npz.read_bytes()).hexdigest()}"' in quick.read_text()
