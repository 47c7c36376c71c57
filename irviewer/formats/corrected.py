"""Writing a corrected ground truth in the benchmark's own format (``apply-corrections``).

A published file changes only where a correction changes it (a tool that corrects labels is
not a formatter): the other lines, their order, repeated lines and line endings stay as
published, so ``diff -r`` against the published files shows exactly the corrected lines.
CSV manifest -> the same manifest with corrected instance labels; an instance set named by
file or a re-identification folder -> a CSV manifest of the corrected labels (with cameras
for re-id; image files are never renamed); Oxford/Paris gt_files -> a gt_files folder;
revisited Oxford/Paris -> a gnd pickle; INRIA Holidays -> a name list with corrected groups.
HPatches is refused: its labels come from geometry. Reading the written copy with the same
reader options gives the corrected dataset, so it scores exactly as ``eval --corrections``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from irviewer.core.corrections import GEOMETRY_LABELS, beyond_labels, family
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError, Sentence, counted, examples
from irviewer.core.label_rules import INSTANCE, LabelIndex
from irviewer.formats import holidays, instance_names, manifest, oxford, reid, revisited
from irviewer.formats.base import option
from irviewer.formats.corrections_file import LoadedCorrections
from irviewer.formats.line_edits import CorrectedFile, Edit
from irviewer.formats.provenance import record_path, refuse_foreign_output, write_record
from irviewer.io.atomic import atomic_write_bytes

#: Per reader: what is written, and the file suffixes its reader recognises (None: a folder).
OUTPUTS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    manifest.NAME: ("a CSV manifest", (".csv",)),
    instance_names.NAME: ("a CSV manifest", (".csv",)),
    reid.NAME: ("a CSV manifest with cameras", (".csv",)),
    oxford.NAME: ("a gt_files folder", None),
    revisited.NAME: ("a gnd pickle", (".pkl",)),
    holidays.NAME: ("a Holidays name list", holidays.LIST_SUFFIXES),
}


def corrected_files(dataset: Dataset, out: Path) -> list[CorrectedFile]:
    """Return the files of ``dataset``'s corrected copy at ``out``, in the dataset's own
    format, each published file edited only where a correction changed it
    (:mod:`irviewer.formats.line_edits`); InputError as :func:`write_corrected`."""
    out = Path(out)
    where = dataset.label()
    if dataset.format.startswith("hpatches"):
        raise InputError(f"{where}: {GEOMETRY_LABELS}")
    if dataset.format not in OUTPUTS:
        raise InputError(f"{where}: irviewer cannot write {dataset.format} ground truth")
    what, suffixes = OUTPUTS[dataset.format]
    refuse_unsafe_output(out, dataset, suffixes)
    if suffixes is None and out.exists() and not out.is_dir():
        raise InputError(f"{out}: is a file; {what} is written to a folder")
    if suffixes is not None and out.suffix.lower() not in suffixes:
        raise InputError(f"{out.name}: {what} is read back by its suffix; name it "
                         f"{' or '.join('*' + s for s in suffixes)}")
    if dataset.gallery_cameras is not None and dataset.protocols != (
            reid.default_protocol(out),):
        raise InputError(f"{out.name}: a manifest with cameras is scored with the "
                         f"{reid.default_protocol(out)} protocol unless its name contains "
                         f"cuhk03, but {where} is scored with {', '.join(dataset.protocols)}; "
                         "name the file so the copy scores the same (e.g. cuhk03_fixed.csv "
                         "for cuhk03)")
    beyond = beyond_labels(dataset)
    if beyond:
        raise InputError(f"{where}: {counted(len(beyond), 'query has', 'queries have')} pair "
                         f"corrections that image labels cannot express, e.g. "
                         f"{examples(beyond)}; {what} records labels only, so relabel the "
                         "images instead, or publish the corrections file with the dataset")
    source = None if dataset.path is None else Path(dataset.path)
    if dataset.format == oxford.NAME:
        assert source is not None
        return [CorrectedFile(name, source / name, edit)
                for name, edit in oxford.gt_file_edits(dataset).items()]
    if dataset.format == manifest.NAME and source is not None:
        edit = manifest.manifest_edit(source, manifest.corrected_label_of(dataset))
    elif dataset.format in (manifest.NAME, instance_names.NAME, reid.NAME):  # built, not read
        return [CorrectedFile(out.name, None, Edit(manifest.new_manifest(out, dataset)))]
    elif dataset.format == revisited.NAME:
        edit = revisited.gnd_edit(dataset)
    else:
        edit = holidays.group_list_edit(dataset)
        if source is None or source.is_dir():
            return [CorrectedFile(out.name, None, edit)]
    return [CorrectedFile(out.name, source, edit)]


def refuse_unsafe_output(out: Path, dataset: Dataset,
                         suffixes: tuple[str, ...] | None) -> None:
    """Return when ``out`` is a place a corrected copy may go; else InputError in one
    sentence (nothing is looked at or written there): the published dataset itself, a path
    inside the published dataset's folder or a folder that holds it, the root of the file
    system, or the current folder (which holds the user's other files)."""
    target = Path(os.path.abspath(out)).resolve()
    kind = "file" if suffixes else "folder"
    name = f"{dataset.name}-corrected{suffixes[0] if suffixes else ''}"
    instead = f"give a new {kind} name, e.g. {name}; nothing was written"
    published = None if dataset.path is None else Path(os.path.abspath(dataset.path)).resolve()
    if published is not None and target == published:
        raise InputError(f"{out}: is the published dataset itself, whose files are never "
                         f"changed; {instead}")
    if published is not None and published.is_dir() and published in target.parents:
        raise InputError(f"{out}: is inside the published dataset {published}, whose files "
                         f"are never changed; give a new {kind} name outside it, e.g. "
                         f"{name}; nothing was written")
    if target == Path(target.anchor):
        raise InputError(f"{out}: is the root of the file system; {instead}")
    if target == Path.cwd().resolve():
        raise InputError(f"{out}: is the current folder, which holds your other files; "
                         f"{instead}")
    if published is not None and target in published.parents:
        raise InputError(f"{out}: is a folder that holds the published dataset {published}; "
                         f"{instead}")


def write_corrected(dataset: Dataset, out: Path,
                    applied: LoadedCorrections | None = None) -> tuple[str, list[str]]:
    """Write ``dataset``'s (corrected) ground truth at ``out`` in its own format, each
    published file changed only where a correction changes it, and its provenance record
    beside it (:mod:`irviewer.formats.provenance`, naming the ``applied`` corrections);
    return a sentence saying what was written, and notes on queries the instance reader
    will treat differently when it reads the copy (:func:`instance_query_changes`).
    InputError (nothing written) for HPatches, an ``out`` that is or is inside the
    published dataset, holds it, is the file system's root or the current folder
    (:func:`refuse_unsafe_output`), or holds anything but a previous corrected copy, a
    suffix the format's reader would not recognise, or pair corrections a label format
    cannot hold."""
    out = Path(out)
    files = corrected_files(dataset, out)
    refuse_foreign_output(out)
    notes = instance_query_changes(dataset)
    what = OUTPUTS[dataset.format][0]
    folder = OUTPUTS[dataset.format][1] is None
    write_record(out, dataset, files, applied, notes, folder)
    for f in files:
        target = out / f.name if folder else out
        if folder:
            target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, f.edit.data)
    changed = [f for f in files if f.edit.differs or f.published is None]
    lines = sum(f.edit.differs for f in files if f.published is not None)
    edits = f"; {counted(len(changed), 'file')} differ from the published ones by {lines} " \
        f"{files[0].edit.unit if len(files) == 1 else 'lines'}" if any(
            f.published is not None for f in files) else ""
    return (f"wrote {what} of {counted(dataset.n_queries, 'query', 'queries')} to {out}"
            f"{edits}; its provenance is in {record_path(out).name}"), notes


def instance_query_changes(dataset: Dataset) -> list[str]:
    """Return sentences on the queries of a corrected instance set that its reader (with
    the default options, which remove queries whose instance has no other gallery image, as
    the CLICIDE/GaRoFou evaluations do) will not read back as they are: queries a relabel
    left with no other gallery image (removed on reading; the corrected evaluation reports
    them as skipped, so the means agree) and, in a manifest, rows of queries removed when it
    was read whose instance now has a gallery image (they come back as queries, which
    changes the numbers). Empty for other families."""
    if family(dataset) != INSTANCE or dataset.gallery_labels is None:
        return []
    index = LabelIndex.of(np.asarray(dataset.gallery_labels))
    orphans = [q.name for q in dataset.queries
               if not np.any(index.members(q.meta.get("label")) != q.self_index)]
    notes: list[str] = []
    if orphans:
        notes.append(Sentence(
            f"{counted(len(orphans), 'query has', 'queries have')} no other gallery "
            f"image of {'its' if len(orphans) == 1 else 'their'} instance after the "
            f"corrections, e.g. {examples(orphans)}: read with the default options "
            f"the copy leaves {'it' if len(orphans) == 1 else 'them'} out "
            f"({option('drop_orphans')} keeps them, reported as skipped); the means are the "
            "same"))
    if dataset.format == manifest.NAME and dataset.path is not None:
        present = {q.name for q in dataset.queries}
        labels = manifest.corrected_label_of(dataset)
        gallery = dataset.gallery_index()
        ignored = _ignored_labels(dataset)
        back = []
        for row in manifest.read_rows(Path(dataset.path)):
            name = manifest.image_name(row.image)
            label = labels.get(name, row.label)
            if row.role == "gallery" or name in present or label in ignored:
                continue
            if np.any(index.members(label) != gallery.get(name, -1)):
                back.append(name)
        if back:
            notes.append(Sentence(f"{counted(len(back), 'query', 'queries')} the reader removed "
                         f"(no other gallery image of the instance) now "
                         f"{'has' if len(back) == 1 else 'have'} one, e.g. {examples(back)}: "
                         f"the copy reads {'it' if len(back) == 1 else 'them'} back as "
                         "queries, so its numbers differ from those of the published "
                         "dataset scored with these corrections applied"))
    return notes


def _ignored_labels(dataset: Dataset) -> set[str]:
    labels = np.asarray(dataset.gallery_labels)
    return {str(v) for v in labels[dataset.global_ignored].tolist()}
