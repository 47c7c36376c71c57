"""Arrays given to irviewer.evaluate: numpy and DLPack arrays on the CPU are read in place
(no copy, never written), a GPU array is copied to the host once and the result says so."""

from __future__ import annotations

import numpy as np
import pytest

import irviewer
from irviewer.api.arrays import host_array


class OnGpu:
    """A DLPack array that says it lives on CUDA device 1 (what cupy or a CUDA tensor says),
    whose memory is really ``data`` on the host. ``cooperative``: it copies itself to the
    CPU when DLPack asks (``dl_device=(1, 0)``, as torch and cupy do); otherwise it refuses
    and has a ``cpu()`` method, as older libraries."""

    def __init__(self, data: np.ndarray, cooperative: bool) -> None:
        self.data, self.cooperative, self.exported = data, cooperative, 0
        self.shape, self.dtype = data.shape, data.dtype
        if not cooperative:
            self.cpu = lambda: self.data.copy()

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 1)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if self.cooperative and dl_device is not None and tuple(dl_device) == (1, 0):
            self.exported += 1
            return self.data.copy().__dlpack__()
        raise BufferError("the array lives on device cuda:1")


def test_a_numpy_array_is_read_in_place_and_never_written():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    found = host_array(x, "embeddings")
    assert np.shares_memory(found.array, x) and found.device is None
    assert not found.array.flags.writeable and x.flags.writeable


def test_a_memory_map_stays_a_memory_map(tmp_path):
    mapped = np.lib.format.open_memmap(tmp_path / "g.npy", mode="w+", dtype=np.float16,
                                       shape=(50, 8))
    mapped[:] = np.random.default_rng(0).normal(size=(50, 8))
    found = host_array(np.load(tmp_path / "g.npy", mmap_mode="r"), "gallery").array
    assert isinstance(found, np.memmap)


def test_the_vectors_ranked_are_the_callers_own_memory():
    rng = np.random.default_rng(0)
    x, labels = rng.normal(size=(20, 4)).astype(np.float32), np.arange(20) % 4
    result = irviewer.evaluate(x, labels=labels)
    held = next(iter(result._opened.methods.values())).made.source.held
    assert held is not None and np.shares_memory(held.arrays["features"], x)


def test_a_torch_cpu_tensor_is_read_in_place():
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float32).reshape(4, 3).requires_grad_(True)
    found = host_array(t, "queries")
    assert found.device is None
    assert np.shares_memory(found.array, t.detach().numpy())
    assert found.array.tolist() == t.tolist()


@pytest.mark.parametrize("cooperative", [True, False])
def test_a_gpu_array_is_copied_to_the_host_and_the_result_says_so(cooperative):
    rng = np.random.default_rng(1)
    x, labels = rng.normal(size=(16, 5)), np.arange(16) % 4
    on_gpu = OnGpu(x, cooperative)
    found = host_array(on_gpu, "embeddings")
    assert found.device == "cuda:1" and np.array_equal(found.array, x)
    assert not np.shares_memory(found.array, x)
    result = irviewer.evaluate(OnGpu(x, cooperative), labels=labels)
    assert result.copied_to_host
    assert ("embeddings: copied from cuda:1 to the host, where irviewer ranks (ranking on "
            "the GPU where the tensors live is not supported yet)") in result.notes
    assert result.to_dict()["dataset"]["notes"] == list(result.notes)
    by_numpy = irviewer.evaluate(x, labels=labels).to_dict()
    assert result.to_dict()["evaluations"] == by_numpy["evaluations"]
    assert not irviewer.evaluate(x, labels=labels).copied_to_host


def test_a_bfloat16_tensor_is_refused_in_one_sentence():
    torch = pytest.importorskip("torch")
    with pytest.raises(irviewer.ArgumentError) as caught:
        irviewer.evaluate(torch.ones(4, 3, dtype=torch.bfloat16), labels=[0, 0, 1, 1])
    assert str(caught.value).startswith("embeddings: a Tensor of torch.bfloat16 values "
                                        "cannot be read as a numpy array (")
    assert str(caught.value).endswith("); convert it to float32 first")
    assert caught.value.argument == "embeddings"


def test_lists_are_arrays_too():
    result = irviewer.evaluate([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]],
                               labels=["a", "a", "b", "b"])
    assert result.summary["mAP"] == 1.0
