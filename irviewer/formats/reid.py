"""Person re-identification folders: Market-1501, DukeMTMC-reID, CUHK03-NP in the same layout.

A folder with ``query/`` and ``bounding_box_test/`` (the gallery). File names carry the
person id and the camera: ``0001_c1s1_001051_00.jpg`` (Market-1501: id, camera, sequence,
frame, box), ``0001_c2_f0046182.jpg`` (DukeMTMC-reID: id, camera, frame). They are read as
torchreid's ``Market1501`` and ``DukeMTMCreID`` datasets read them: the first match of
``([-\\d]+)_c(\\d)`` gives (person id, camera); here it is searched in the file name only,
not in the whole path as torchreid does. Images are the files with an image extension
(:data:`irviewer.core.image_names.IMAGE_SUFFIXES`: Market-1501 ships ``.jpg``, CUHK03-NP
``.png``); other files are not listed. Image names are the file stems.

Conventions of the Market-1501 evaluation (Zheng et al., ICCV 2015) as torchreid's
``eval_market1501`` and fast-reid apply them:

* gallery images of person id -1 ("junk") are removed for every query
  (``Dataset.global_ignored``; torchreid drops them when it lists the folder, which ranks
  the same); queries of id -1 are removed and reported;
* id 0 ("distractors", background detections) stays in the gallery as a negative;
* for each query, gallery images of the same id and the same camera are relevance group
  ``same_camera`` (the protocol removes them); the same id on another camera is
  ``positive``.

Protocol: ``market1501``. A folder whose name contains ``cuhk03`` (case-insensitive:
``CUHK03-NP``, ``cuhk03_labeled``), or CUHK03-NP's ``detected``/``labeled`` subfolder of
such a folder (``cuhk03-np/detected``), gets ``cuhk03`` (single-gallery-shot CMC);
``--protocol`` overrides either way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from irviewer.core.dataset import Dataset, Query, SkippedQuery, build_query, index_array
from irviewer.core.errors import InputError, counted, examples
from irviewer.core.label_rules import (
    REID,
    REID_JUNK_ID,
    RULE_GROUPS,
    LabelIndex,
    reid_groups,
    reid_junk,
)
from irviewer.formats.base import (
    ImageFiles,
    Reader,
    ReadOptions,
    list_image_names,
    stems_of,
)

NAME = "reid"
QUERY_DIR = "query"
GALLERY_DIR = "bounding_box_test"
#: torchreid's Market1501 / DukeMTMCreID pattern: (person id, camera).
PERSON_CAMERA = re.compile(r"([-\d]+)_c(\d)")
DEFAULT_PROTOCOL = "market1501"
CUHK03_PROTOCOL = "cuhk03"
#: CUHK03-NP (Zhong et al., CVPR 2017) ships two Market-style sets in one folder.
CUHK03_NP_SUBSETS = ("detected", "labeled")


@dataclass(frozen=True)
class ReidFolder:
    """The images of one folder (query or gallery) with the person id and camera of each.

    ``folder`` is the folder, ``file_names`` its image files in file-name order, ``names``
    their image names (file stems)."""

    folder: Path
    file_names: tuple[str, ...]
    names: tuple[str, ...]
    person_ids: np.ndarray  # int64
    cameras: np.ndarray  # int64

    @property
    def files(self) -> tuple[Path, ...]:
        """Return the image files, in file-name order."""
        return tuple(self.folder / f for f in self.file_names)


def parse_person_camera(file_name: str) -> tuple[int, int] | None:
    """Return (person id, camera) of a Market-1501 / DukeMTMC-reID file name, or None.

    The first match of torchreid's ``([-\\d]+)_c(\\d)``: ``0001_c1s1_001051_00.jpg`` ->
    (1, 1), ``-1_c3s2_000001_00.jpg`` -> (-1, 3), ``0005_c2_f0046182.jpg`` -> (5, 2).
    None when there is no match or the id is not an integer (``1-2_c1.jpg``).
    """
    found = PERSON_CAMERA.search(file_name)
    if found is None:
        return None
    try:
        return int(found.group(1)), int(found.group(2))
    except ValueError:
        return None


def sniff_reid(path: Path) -> bool:
    """Return True for a folder holding both ``query/`` and ``bounding_box_test/``."""
    try:
        p = Path(path)
        return p.is_dir() and (p / QUERY_DIR).is_dir() and (p / GALLERY_DIR).is_dir()
    except OSError:
        return False


def default_protocol(root: Path) -> str:
    """Return ``cuhk03`` when the folder's name contains ``cuhk03`` (case-insensitive), or
    when it is CUHK03-NP's ``detected``/``labeled`` inside such a folder; else ``market1501``."""
    absolute = Path(root).absolute()
    names = [absolute.name]
    if absolute.name.lower() in CUHK03_NP_SUBSETS:
        names.append(absolute.parent.name)
    return CUHK03_PROTOCOL if any("cuhk03" in n.lower() for n in names) else DEFAULT_PROTOCOL


def read_reid_folder(root: Path, sub: str) -> ReidFolder:
    """Return the images of ``root/sub`` with their person ids and cameras.

    InputError when the folder is missing, cannot be listed or holds no image, when a file
    name carries no person id and camera (count and examples), and when two files share a
    name (``x.jpg`` and ``x.png``).
    """
    folder = root / sub
    where = root.absolute().name
    if not folder.is_dir():
        raise InputError(f"{where}: the folder {sub}/ is missing; a re-identification set "
                         f"needs {QUERY_DIR}/ and {GALLERY_DIR}/")
    files = list_image_names(folder, noun=f"{sub} folder")
    ids: list[int] = []
    cams: list[int] = []
    bad: list[str] = []
    for f in files:
        parsed = parse_person_camera(f)
        if parsed is None:
            bad.append(f)
            continue
        ids.append(parsed[0])
        cams.append(parsed[1])
    if bad:
        what = counted(len(bad), "file name does", "file names do")
        raise InputError(f"{where}/{sub}/: {what} not carry a person id and camera "
                         f"(PPPP_cC...), e.g. {examples(bad)}; Market-1501 names look like "
                         "0001_c1s1_001051_00.jpg, DukeMTMC-reID like 0001_c2_f0046182.jpg")
    names = stems_of(files, f"{where}/{sub}/")
    return ReidFolder(folder, tuple(files), tuple(names), np.asarray(ids, dtype=np.int64),
                      np.asarray(cams, dtype=np.int64))


def read_reid(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the re-identification :class:`Dataset` of a Market-1501-style folder.

    Gallery: ``bounding_box_test/`` in file-name order, ``gallery_labels`` the person ids;
    id -1 images in ``global_ignored``. Queries: ``query/`` in file-name order, each with
    groups ``positive`` (same id, other camera) and ``same_camera`` (same id, same camera)
    and ``meta`` ``{"label": person id, "camera": camera}``; id -1 queries are removed and
    reported. Protocol ``market1501``, or ``cuhk03`` by folder name (:func:`default_protocol`).
    InputError for a path that is not a folder, a missing or empty subfolder, a file name
    without id and camera, or a query folder holding only id -1 images.
    """
    root = Path(path)
    if not root.is_dir():
        raise InputError(f"{root}: not a folder; a re-identification set is a folder with "
                         f"{QUERY_DIR}/ and {GALLERY_DIR}/")
    query_folder = read_reid_folder(root, QUERY_DIR)
    gallery_folder = read_reid_folder(root, GALLERY_DIR)
    paths = ImageFiles(root, {name: f"{sub}/{f}" for sub, folder in
                              ((QUERY_DIR, query_folder), (GALLERY_DIR, gallery_folder))
                              for name, f in zip(folder.names, folder.file_names, strict=True)})
    return reid_dataset(root, NAME, query_folder.names, query_folder.person_ids,
                        query_folder.cameras, gallery_folder.names, gallery_folder.person_ids,
                        gallery_folder.cameras, paths, default_protocol(root))


def reid_dataset(path: Path, format_name: str, query_names: Sequence[str],
                 query_ids: np.ndarray, query_cameras: np.ndarray,
                 gallery_names: Sequence[str], gallery_ids: np.ndarray,
                 gallery_cameras: np.ndarray, image_paths: Mapping[str, Path],
                 protocol: str) -> Dataset:
    """Return the re-identification Dataset of these images (the folder reader's and the
    CSV manifest's with a ``camera`` column): groups by
    :func:`irviewer.core.label_rules.reid_groups`, id -1 gallery images in
    ``global_ignored``, id -1 queries removed and reported. InputError when no query is
    left."""
    g_ids = np.asarray(gallery_ids, dtype=np.int64)
    g_cams = np.asarray(gallery_cameras, dtype=np.int64)
    index = LabelIndex.of(g_ids)
    queries: list[Query] = []
    skipped: list[SkippedQuery] = []
    for name, pid, cam in zip(query_names, np.asarray(query_ids).tolist(),
                              np.asarray(query_cameras).tolist(), strict=True):
        if pid == REID_JUNK_ID:
            skipped.append(SkippedQuery(name, "person id -1 (junk) cannot be a query"))
            continue
        queries.append(build_query(name, name, reid_groups(index, g_cams, pid, cam),
                                   meta={"label": pid, "camera": cam}))
    where = Path(path).absolute().name
    if not queries:
        which = ("the only query has" if len(skipped) == 1
                 else f"all {len(skipped)} queries have")
        raise InputError(f"{where}: {which} person id -1 (junk), so nothing is left to "
                         "evaluate")
    return Dataset(name=where, format=format_name, path=Path(path),
                   gallery=tuple(gallery_names), queries=tuple(queries),
                   groups=RULE_GROUPS[REID], protocols=(protocol,),
                   global_ignored=index_array(reid_junk(g_ids)),
                   skipped_queries=tuple(skipped), image_paths=image_paths,
                   gallery_labels=g_ids, gallery_cameras=g_cams)


READER = Reader(NAME, "person re-identification folder with query/ and bounding_box_test/ "
                "(Market-1501, DukeMTMC-reID, CUHK03-NP)", sniff_reid, read_reid, priority=10)
