"""The sha256 of input files: hashed in 8 MiB blocks through a memory map, once per version
of a file, on another thread from the moment the file is named, and waited for only where
its text is needed; a file that cannot be read to the end is one sentence."""

from __future__ import annotations

import hashlib
import threading
from concurrent.futures import Future

import numpy as np
import pytest

from irviewer.core import file_digests
from irviewer.core.errors import InputError
from irviewer.core.file_digests import (
    digest_hex,
    file_digest,
    file_sha256,
    prefetch_sha256,
    ready_digest,
)


@pytest.fixture(autouse=True)
def fresh_digests(monkeypatch):
    """Each test hashes its files anew (the digests of earlier tests are forgotten)."""
    monkeypatch.setattr(file_digests, "_DIGESTS", {})


def test_file_sha256_hashes_the_bytes_in_blocks(tmp_path):
    data = np.random.default_rng(0).bytes(9 * 2**20 + 5)  # more than one 8 MiB block
    (tmp_path / "f.bin").write_bytes(data)
    assert file_sha256(tmp_path / "f.bin") == hashlib.sha256(data).hexdigest()
    (tmp_path / "empty").write_bytes(b"")  # an empty file cannot be memory-mapped
    assert file_sha256(tmp_path / "empty") == hashlib.sha256(b"").hexdigest()
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "b").write_bytes(b"bb")
    (sub / "a").write_bytes(b"a")
    assert file_sha256(sub) == hashlib.sha256(b"abb").hexdigest()  # files in path order
    assert file_digest(sub).result() == hashlib.sha256(b"abb").hexdigest()
    with pytest.raises(FileNotFoundError):
        file_sha256(tmp_path / "missing")
    with pytest.raises(FileNotFoundError):
        file_digest(tmp_path / "missing")


def test_prefetched_digest_is_used_and_follows_changes(tmp_path, monkeypatch):
    path = tmp_path / "f.bin"
    path.write_bytes(b"first version")
    calls = []
    real = file_digests._hash_into
    monkeypatch.setattr(file_digests, "_hash_into",
                        lambda h, p: calls.append(p) or real(h, p))
    prefetch_sha256(path)
    prefetch_sha256(tmp_path / "missing")  # nothing, no error
    assert file_sha256(path) == hashlib.sha256(b"first version").hexdigest()
    assert file_digest(path).result() == hashlib.sha256(b"first version").hexdigest()
    assert calls == [path]  # hashed once, in the background
    path.write_bytes(b"second, longer version")  # another size and time: hashed again
    assert file_sha256(path) == hashlib.sha256(b"second, longer version").hexdigest()
    assert calls == [path, path]


def test_file_digest_returns_at_once_and_the_hash_finishes_on_another_thread(tmp_path,
                                                                             monkeypatch):
    path = tmp_path / "f.bin"
    path.write_bytes(b"some bytes")
    release, threads = threading.Event(), []
    real = file_digests._hash_into

    def held_back(h, p):
        threads.append(threading.current_thread())
        assert release.wait(10)
        real(h, p)

    monkeypatch.setattr(file_digests, "_hash_into", held_back)
    digest = file_digest(path)
    assert not digest.done()
    release.set()
    assert digest_hex(digest, path) == hashlib.sha256(b"some bytes").hexdigest()
    assert threads != [threading.current_thread()]


def test_a_file_that_cannot_be_read_to_the_end_is_one_sentence(tmp_path):
    broken: Future[str] = Future()
    broken.set_exception(OSError(5, "Input/output error"))
    with pytest.raises(InputError) as e:
        digest_hex(broken, tmp_path / "desc.npz")
    assert str(e.value) == "desc.npz: cannot be read to compute its sha256 (Input/output error)"
    assert digest_hex(ready_digest("abc"), tmp_path / "x") == "abc"
