"""File ▸ Open shows every reader option, built from the options' declarations."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QLabel

from irviewer.formats.base import ReadOptions, reader_options
from irviewer.gui.opening.open_dialog import FIELD_LABELS, OpenDialog, set_field
from irviewer.opening.request import OpenRequest
from tests.opening.reader_values import example_read_options


def form_labels(dialog: OpenDialog) -> set[str]:
    form = dialog.findChild(QFormLayout)
    labels = set()
    for i in range(form.rowCount()):
        item = form.itemAt(i, QFormLayout.ItemRole.LabelRole)
        if item is not None and isinstance(item.widget(), QLabel):
            labels.add(item.widget().text().rstrip(":"))
    return labels


def test_the_open_dialog_shows_and_returns_every_reader_option(qtbot, tmp_path):
    dialog = OpenDialog()
    qtbot.addWidget(dialog)
    shown = form_labels(dialog)
    assert {spec.label for spec in reader_options().values()} <= shown
    again = OpenDialog(initial=OpenRequest(tmp_path / "set.csv", (tmp_path / "d.npz",),
                                           options=example_read_options(tmp_path)))
    qtbot.addWidget(again)
    assert again.request().options == example_read_options(tmp_path)
    assert set(FIELD_LABELS.values()) <= shown
    options = example_read_options(tmp_path)
    request = OpenRequest(tmp_path / "set.csv", (tmp_path / "d.npz",), options=options)
    dialog.set_request(request)
    assert dialog.request() == request
    for name in reader_options():  # each field is its own widget
        dialog.set_request(request)
        default = getattr(ReadOptions(), name)
        set_field(dialog.fields[name], reader_options()[name], default)
        got = dialog.request()
        assert got is not None and getattr(got.options, name) == default, name
        assert all(getattr(got.options, other) == getattr(options, other)
                   for other in reader_options() if other != name), name


def test_a_field_says_what_it_is_and_its_flag(qtbot):
    dialog = OpenDialog()
    qtbot.addWidget(dialog)
    for name, spec in reader_options().items():
        assert spec.flag in dialog.fields[name].toolTip(), name


def test_the_vector_engine_fields_fill_the_request_and_are_checked(qtbot, tmp_path):
    dialog = OpenDialog()
    qtbot.addWidget(dialog)
    request = OpenRequest(tmp_path / "set.csv", (tmp_path / "queries.npz",),
                          engine=str(tmp_path / "gallery.db"), collection="paintings",
                          engine_names="image")
    dialog.set_request(request)
    assert dialog.request() == request
    for key, flag in (("engine", "--engine"), ("collection", "--collection"),
                      ("engine_names", "--engine-names")):
        assert flag in dialog.engine_fields[key].toolTip()
    dialog.engine_fields["collection"].setText("")
    assert dialog.request() is None
    assert dialog.message.text() == "Give the engine's collection that holds the gallery."
    dialog.engine_fields["engine"].setText("")
    dialog.engine_fields["collection"].setText("paintings")
    assert dialog.request() is None and "Give the vector engine" in dialog.message.text()
    for edit in dialog.engine_fields.values():
        edit.setText("")
    got = dialog.request()
    assert got is not None and (got.engine, got.collection, got.engine_names) == (
        None, None, None)


def test_the_open_dialog_returns_the_request_its_fields_say(qtbot, tmp_path):
    from irviewer.formats.base import ReadOptions
    from irviewer.gui.opening.open_dialog import FIELD_LABELS, OpenDialog
    from irviewer.opening.request import OpenRequest

    dialog = OpenDialog()
    qtbot.addWidget(dialog)
    dialog.dataset.setText(str(tmp_path / "gt_files"))
    dialog.methods.addItems([str(tmp_path / "oxford_features.fvecs")])
    dialog.fields["row_names"].setText(str(tmp_path / "names.txt"))
    dialog.fields["distractors"].setText(str(tmp_path / "extra.txt"))
    dialog.fields["ignore_labels"].setText("0, blank ,")
    dialog.fields["instance_rule"].setText("dash")
    dialog.protocol.setCurrentIndex(dialog.protocol.findData("oxford"))
    dialog.format.setCurrentIndex(dialog.format.findData("oxford"))
    request = dialog.request()
    assert request == OpenRequest(
        tmp_path / "gt_files", (tmp_path / "oxford_features.fvecs",), (), "oxford",
        ReadOptions(row_names=tmp_path / "names.txt", distractors=tmp_path / "extra.txt",
                    ignore_labels=("0", "blank"), instance_rule="dash"), protocol="oxford")
    again = OpenDialog(initial=request)
    qtbot.addWidget(again)
    assert again.request() == request
    from PySide6.QtWidgets import QFormLayout, QLabel

    form = dialog.findChild(QFormLayout)
    shown = {form.itemAt(i, QFormLayout.ItemRole.LabelRole).widget().text().rstrip(":")
             for i in range(form.rowCount())
             if form.itemAt(i, QFormLayout.ItemRole.LabelRole) is not None
             and isinstance(form.itemAt(i, QFormLayout.ItemRole.LabelRole).widget(), QLabel)}
    assert set(FIELD_LABELS.values()) <= shown
