"""The reader options' declarations: one OptionSpec per ReadOptions field, from which every
edge takes its form, and the sentences that name them."""

from __future__ import annotations

from dataclasses import fields

import pytest

from irviewer.formats.base import FORMAT_OPTION, ReadOptions, option, reader_options


def test_every_user_option_of_the_readers_is_declared_once():
    declared = reader_options()
    assert set(declared) == {f.name for f in fields(ReadOptions)} - {"gallery_names"}
    specs = [*declared.values(), FORMAT_OPTION]
    flags = [s.flag for s in specs] + [s.list_file for s in specs if s.list_file]
    labels = [s.label for s in specs]
    assert len(set(flags)) == len(flags) and len(set(labels)) == len(labels)
    json_keys = [s.json for s in specs if s.json]
    assert len(set(json_keys)) == len(json_keys)
    assert all(s.help and s.label for s in specs)


def test_an_option_reads_as_a_flag_on_the_command_line_and_as_a_field_in_the_window():
    from irviewer.core.errors import InputError

    e = InputError(f"gt: give {option('images')} or {option('row_names')}; "
                   f"{option('instance_rule')} dash or {option('drop_orphans')}")
    assert str(e) == ("gt: give --images DIR or --row-names FILE; --instance-rule dash or "
                      "--keep-orphans")
    assert e.for_window() == ("gt: give “Images” in the Open dialog or “Row names” in the "
                              "Open dialog; “Instance rule” in the Open dialog dash or "
                              "“Keep orphans” in the Open dialog")
    assert str(InputError(option("format"))) == "--format"
    with pytest.raises(KeyError):
        option("no_such_option")


def test_every_option_a_message_names_is_declared():
    """A sentence built with option(key) for a key nobody declares fails only when it is
    raised (a KeyError, a bug); find them all in the source instead."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "irviewer"
    named = {m[1] for path in root.rglob("*.py")
             for m in re.finditer(r"\boption\(['\"]([a-z_]+)['\"]\)",
                                  path.read_text(encoding="utf-8"))}
    assert named and named <= set(reader_options()) | {"format"}


#: A value away from the default for every user-facing reader option.
SET = {"images": "photos", "row_names": "rows.txt", "instance_rule": "dash",
       "ignore_labels": ("x",), "distractors": "extra.txt", "drop_orphans": False,
       "copy_pairs": "knn=10"}


def _readers_and_options(taken: bool) -> list[tuple[str, str]]:
    from irviewer.formats.registry import readers

    return [(r.name, key) for r in readers() for key in reader_options()
            if key != "row_names" and (key in r.takes) == taken]


@pytest.mark.parametrize(("reader", "key"), _readers_and_options(taken=False))
def test_an_option_a_reader_does_not_read_is_refused_not_ignored(reader, key, tmp_path):
    from dataclasses import replace

    from irviewer.core.errors import InputError
    from irviewer.formats.base import refuse_options_not_taken
    from irviewer.formats.registry import readers

    found = next(r for r in readers() if r.name == reader)
    options = replace(ReadOptions(), **{key: SET[key]})
    with pytest.raises(InputError) as e:
        refuse_options_not_taken(found, tmp_path / "data", options)
    assert str(e.value).startswith(f"data: {reader_options()[key].flag}")
    assert "does not apply to this dataset" in str(e.value)


@pytest.mark.parametrize(("reader", "key"), _readers_and_options(taken=True))
def test_an_option_a_reader_reads_passes(reader, key, tmp_path):
    from dataclasses import replace

    from irviewer.formats.base import refuse_options_not_taken
    from irviewer.formats.registry import readers

    found = next(r for r in readers() if r.name == reader)
    refuse_options_not_taken(found, tmp_path / "data", replace(ReadOptions(), **{key: SET[key]}))
    # every descriptor file may name its rows, whatever the reader
    refuse_options_not_taken(found, tmp_path / "data", replace(ReadOptions(), row_names=tmp_path))


def test_distractors_given_with_a_manifest_are_refused_before_anything_is_read(tmp_path):
    from irviewer.core.errors import InputError
    from irviewer.formats.registry import read_dataset

    (tmp_path / "set.csv").write_text("image,instance,role\na1.jpg,a,both\na2.jpg,a,gallery\n")
    with pytest.raises(InputError, match="--distractors FILE does not apply"):
        read_dataset(tmp_path / "set.csv", options=ReadOptions(distractors=tmp_path / "x.txt"))
    assert read_dataset(tmp_path / "set.csv").n_gallery == 2
