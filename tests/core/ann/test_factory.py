"""What a factory string must fit before FAISS builds it: lists no more than training
vectors, PCA no more dimensions than the vectors have."""

from __future__ import annotations

import pytest

from irviewer.core.ann.factory import check_factory_fits
from irviewer.core.errors import InputError


@pytest.mark.parametrize(("factory", "dim", "n_train", "message"), [
    ("IVF100000000,Flat", 16, 42, "here: FAISS cannot train this index on 42 gallery vectors: "
                                  "IVF100000000 asks for 100,000,000 inverted lists and "
                                  "k-means needs a training vector per list at least; use at "
                                  "most IVF42 (FAISS suggests 39 vectors per list)"),
    ("IVF1024(IVF4096,Flat),PQ8", 16, 2000, "here: FAISS cannot train this index on 2,000 "
                                            "gallery vectors: IVF4096 asks"),
    ("IMI2x12,PQ8", 16, 1000, "here: FAISS cannot train this index on 1,000 gallery vectors: "
                              "IMI2x12 asks for 4,096 centroids per sub-quantizer"),
    ("PCA64,IVF4,Flat", 16, 1000, "here: PCA64 asks PCA for 64 dimensions of 16-dimensional "
                                  "vectors; PCA keeps at most 16"),
])
def test_what_cannot_fit_the_vectors_is_refused(factory, dim, n_train, message):
    with pytest.raises(InputError) as e:
        check_factory_fits(factory, "here", dim, n_train)
    assert str(e.value).startswith(message), str(e.value)


def test_what_fits_passes():
    check_factory_fits("IVF42,Flat", "here", 16, 42)
    check_factory_fits("PCAR16,IVF4,PQ4", "here", 16, 1000)
    check_factory_fits("IMI2x8,PQ8", "here", 64, 256)
