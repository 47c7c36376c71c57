"""The restricted unpickler: plain data loads, anything that could run code is refused and
nothing in it runs."""

from __future__ import annotations

import pickle
import pickletools
import re
from pathlib import Path

import numpy as np
import pytest

from irviewer.core.errors import InputError
from irviewer.formats.safe_pickle import load_plain_pickle

PLAIN = {
    "imlist": ["all_souls_000000", "ünïcode_名前"],
    "gnd": [{"easy": [0, 1], "hard": [], "bbx": [1.5, 2.0, 30.0, 40.5]}],
    "numbers": (0, -1, 2**70, 1e-300, float("inf")),
    "flags": [True, False, None],
    "nested": ((), [[]], {1: {"x": "y"}}),
}
REFUSAL = ("contains Python code or objects ({}); irviewer only loads plain lists, dicts, "
           "strings and numbers from a pickle, so nothing in it was run")


def write(tmp_path: Path, data: bytes, name: str = "gnd_x.pkl") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_plain_data_loads_under_every_protocol(tmp_path, protocol):
    data = pickle.dumps(PLAIN, protocol=protocol)
    assert load_plain_pickle(write(tmp_path, data)) == PLAIN
    assert not {"GLOBAL", "STACK_GLOBAL", "REDUCE"} & {op.name for op, _, _ in
                                                      pickletools.genops(data)}


def test_bytes_and_sets_load_where_the_protocol_stores_them_as_data(tmp_path):
    assert load_plain_pickle(write(tmp_path, pickle.dumps(b"\x00\xff", protocol=3))) \
        == b"\x00\xff"
    assert load_plain_pickle(write(tmp_path, pickle.dumps({1, 2}, protocol=4))) == {1, 2}
    assert load_plain_pickle(write(tmp_path, pickle.dumps(frozenset("a"), protocol=4))) \
        == frozenset("a")
    # Protocol 2 stores bytes as a call to _codecs.encode: refused like every call.
    with pytest.raises(InputError, match=re.escape("(_codecs.encode)")):
        load_plain_pickle(write(tmp_path, pickle.dumps(b"ab", protocol=2)))


def test_python2_strings_are_read_as_utf8(tmp_path):
    data = b"(lp0\nS'all_souls_000000'\np1\naS'caf\\xc3\\xa9'\np2\na."  # protocol 0, str
    assert load_plain_pickle(write(tmp_path, data)) == ["all_souls_000000", "café"]


def test_os_system_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "was_run"
    # The classic hostile pickle, by hand: GLOBAL os.system, then REDUCE("touch <marker>").
    data = b"cos\nsystem\n(V" + f"touch {marker}".encode() + b"\ntR."
    with pytest.raises(InputError, match=re.escape("gnd_x.pkl " + REFUSAL.format("os.system"))):
        load_plain_pickle(write(tmp_path, data))
    assert not marker.exists()


class _CreatesAFile:
    """An object whose unpickling would create ``marker`` (``open(marker, "w")``)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (open, (str(self.marker), "w"))


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_reduce_payload_is_refused_and_creates_no_file(tmp_path, protocol):
    marker = tmp_path / "was_run"
    data = pickle.dumps({"imlist": ["a", _CreatesAFile(marker)]}, protocol=protocol)
    with pytest.raises(InputError, match=re.escape(REFUSAL.format("io.open"))):
        load_plain_pickle(write(tmp_path, data))
    assert not marker.exists()


class Landmark:
    """A plain class instance: refused too (building it would call the class)."""

    def __init__(self) -> None:
        self.name = "all_souls"


@pytest.mark.parametrize(("obj", "named"), [
    (np.arange(3), "numpy"),
    (np.float32(1.5), "numpy"),
    (Landmark(), f"{__name__}.Landmark"),
    (complex(1, 2), "builtins.complex"),
    (Path("a"), "pathlib"),
])
def test_objects_are_refused(tmp_path, obj, named):
    with pytest.raises(InputError, match=re.escape(f"contains Python code or objects ({named}")):
        load_plain_pickle(write(tmp_path, pickle.dumps({"imlist": obj})))


def test_persistent_ids_are_refused(tmp_path):
    data = b"\x80\x02]q\x00Pitem-7\nq\x01a."  # a list holding persistent id "item-7"
    with pytest.raises(InputError, match=re.escape(REFUSAL.format("persistent id 'item-7'"))):
        load_plain_pickle(write(tmp_path, data))


@pytest.mark.parametrize(("data", "message"), [
    (b"", "gnd_x.pkl is empty: a pickle file holds at least one object"),
    (pickle.dumps(PLAIN, protocol=4)[:50], "gnd_x.pkl is truncated: the pickle ends early"),
    (pickle.dumps(PLAIN, protocol=0)[:30], "gnd_x.pkl is truncated: the pickle ends early"),
    (b'{"imlist": []}', "gnd_x.pkl is not a readable pickle (invalid load key, '{')"),
    (b"PK\x03\x04rest", "gnd_x.pkl is a zip archive (an .npz or a PyTorch file?), not a "
                         "pickle"),
    (b"\x93NUMPY\x01\x00", "gnd_x.pkl is a numpy .npy file, not a pickle"),
    (b"\x80\x03]q\x00h\x05a.", "gnd_x.pkl is not a readable pickle (Memo value not found at "
                               "index 5)"),
    (b"\x80\x03K\x01K\x02R.", "gnd_x.pkl is not a readable pickle"),  # REDUCE on an int
    (b"(" * 100_000, "gnd_x.pkl is truncated: the pickle ends early"),
])
def test_broken_files_give_one_sentence(tmp_path, data, message):
    with pytest.raises(InputError, match=re.escape(message)):
        load_plain_pickle(write(tmp_path, data))


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_plain_pickle(tmp_path / "absent.pkl")
    with pytest.raises(InputError, match="is a folder, not a pickle file"):
        load_plain_pickle(tmp_path)
