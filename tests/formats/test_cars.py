"""Cars196's ``cars_annos.mat``: classes 99-196 read as a leave-one-out set (the file's test
flag not used), detected among the readers, refused in one sentence when it is not one."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import io as sio

from irviewer.core.errors import InputError
from irviewer.formats.cars import read_cars, sniff_cars
from irviewer.formats.registry import detect, read_dataset
from tests.formats.learning_files import write_cars


def test_only_classes_99_to_196_are_read_whatever_the_test_flag(tmp_path):
    file = tmp_path / "cars196" / "cars_annos.mat"
    paths = write_cars(file, [98, 99, 150, 99, 196, 1, 150], images=True)
    d = read_cars(file)
    assert d.format == "cars196" and d.protocols == ("metric-learning",)
    assert d.gallery == ("car_ims/000002", "car_ims/000003", "car_ims/000004",
                         "car_ims/000005", "car_ims/000007")
    assert d.gallery_labels.tolist() == ["99", "150", "99", "196", "150"]
    assert d.queries[0].group("positive").tolist() == [0, 2]
    assert d.image_paths[d.gallery[0]] == file.parent / paths[1]
    assert read_cars(file.parent).gallery == d.gallery


def test_the_file_and_its_folder_are_detected_but_not_other_mat_files(tmp_path):
    file = tmp_path / "cars" / "cars_annos.mat"
    write_cars(file, [99, 99])
    assert detect(file).name == "cars196" and detect(file.parent).name == "cars196"
    descriptors = tmp_path / "desc.mat"
    sio.savemat(descriptors, {"X": np.ones((4, 3)), "Q": np.ones((4, 1))})
    assert not sniff_cars(descriptors)
    (tmp_path / "text.mat").write_text("not matlab")
    assert not sniff_cars(tmp_path / "text.mat")


def test_what_is_not_cars196_is_refused_in_one_sentence(tmp_path):
    text = tmp_path / "text.mat"
    text.write_text("not matlab")
    with pytest.raises(InputError, match=r"^text.mat: not a MATLAB 5 file; give Cars196's "
                                         r"cars_annos.mat$"):
        read_dataset(text, format="cars196")
    other = tmp_path / "desc.mat"
    sio.savemat(other, {"X": np.ones((4, 3))})
    with pytest.raises(InputError, match=r"^desc.mat: no annotations struct array \(the file "
                                         r"declares X\); give Cars196's cars_annos.mat$"):
        read_dataset(other, format="cars196")
    v73 = tmp_path / "v73.mat"
    v73.write_bytes(b"MATLAB 7.3 MAT-file, Platform: GLNXA64".ljust(128, b" ") + b"\0" * 400)
    with pytest.raises(InputError, match=r"v73\.mat: a MATLAB 7\.3 file"):
        read_dataset(v73, format="cars196")
    with pytest.raises(InputError, match=r"holds no cars_annos\.mat"):
        read_dataset(tmp_path, format="cars196")


def test_annotations_without_the_fields_or_with_bad_classes_are_refused(tmp_path):
    file = tmp_path / "cars_annos.mat"
    sio.savemat(file, {"annotations": np.zeros((1, 2), dtype=[("bbox_x1", object)])})
    with pytest.raises(InputError, match="the annotations have no relative_im_path or class "
                                         "field"):
        read_cars(file)
    write_cars(file, [99, 197])
    with pytest.raises(InputError, match=r"annotation 2 \(car_ims/000002.jpg\) has class 197, "
                                         r"not a whole number in 1-196"):
        read_cars(file)
    write_cars(file, [1, 98])
    with pytest.raises(InputError, match="no image of classes 99-196"):
        read_cars(file)
