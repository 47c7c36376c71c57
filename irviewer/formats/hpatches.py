"""HPatches patch and image retrieval (Balntas, Lenc, Vedaldi, Mikolajczyk, CVPR 2017), in the
``benchmarks/retrieval`` format of hpatches-benchmark (``retrieval_compute.m`` /
``retrieval_eval.m``, 2016).

* ``.benchmark``: line 1 lists the pool of patch-images (``i_castle.ref,i_castle.e1,...``);
  every further line is one query patch ``<sequence>.<image>.<index>``.
* ``.labels`` (train splits only; the test ground truth is withheld, so a test split is read
  without positives: it can be ranked and written as ``.results``, not scored): same line 1;
  then per query its cluster: the query and its corresponding patches in the other images.
* ``.results``: same line 1; then per query the 51 retrieved patches, the query first.

The gallery is every patch of every pool image, in pool order then patch index — the
descriptor pool of ``retrieval_compute.m``. How many patches an image has is known from the
descriptors, so the gallery comes from the descriptor file's names; without them only the
patches named in the files are known (a note says so). Relevance groups: ``same_patch``
(the cluster) and ``same_image`` (every pool patch of an image of the cluster). The
``hpatches-*`` protocols remove the query patch and score the next 50 results with VLFeat's
``vl_pr`` AP: precision summed at the positives in those 50, over their number.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.descriptors import Descriptors, DescriptorTable
from irviewer.core.errors import InputError, examples
from irviewer.core.file_digests import file_digest
from irviewer.core.ranking import Ranking, ranking_from_lists
from irviewer.formats.base import Reader, ReadOptions, option
from irviewer.io.atomic import atomic_open

NAME = "hpatches"
PATCH = re.compile(r"^([A-Za-z0-9_\-]+)\.([A-Za-z0-9]+)\.(\d+)$")
RESULTS_DEPTH = 51


def sniff_hpatches(path: Path) -> bool:
    """Return True for a ``.benchmark`` file."""
    p = Path(path)
    return p.is_file() and p.suffix.lower() == ".benchmark"


def _lines(path: Path) -> list[str]:
    try:
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read ({e})") from None
    lines = [line for line in lines if line]
    if not lines:
        raise InputError(f"{path.name} is empty")
    return lines


def _parse_patch(patch: str, where: str) -> tuple[str, str, int]:
    m = PATCH.match(patch)
    if m is None:
        raise InputError(f"{where}: {patch!r} is not a patch id <sequence>.<image>.<index>")
    return m.group(1), m.group(2), int(m.group(3))


def read_hpatches(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the Dataset of a ``.benchmark`` file and its sibling ``.labels``."""
    opts = options or ReadOptions()
    path = Path(path)
    bench = _lines(path)
    pool = bench[0].split(",")
    queries_raw = bench[1:]
    if not queries_raw:
        raise InputError(f"{path.name}: no query patch after the pool line")
    labels_path = path.with_suffix(".labels")
    notes: list[str] = []
    if not labels_path.exists():
        # Test splits: the ground truth is withheld. Rank them (--write-results) but score
        # nothing: every query has only itself in its cluster, so none is evaluated.
        notes.append(f"{path.name}: no {labels_path.name} (test split, ground truth "
                     "withheld): the queries can be ranked and written as .results, not scored")
        labels = [bench[0], *queries_raw]
    else:
        labels = _lines(labels_path)
    if labels[0] != bench[0]:
        raise InputError(f"{labels_path.name}: its first line (the pool) differs from "
                         f"{path.name}'s")
    if len(labels) != len(bench):
        raise InputError(f"{labels_path.name}: {len(labels) - 1} label lines for "
                         f"{len(queries_raw)} queries")
    pool_pos = {img: i for i, img in enumerate(pool)}
    clusters = [line.split(",") for line in labels[1:]]
    for q, cluster, line_no in zip(queries_raw, clusters, range(2, len(labels) + 1),
                                   strict=True):
        if q not in cluster:
            raise InputError(f"{labels_path.name}, line {line_no}: the cluster does not hold "
                             f"its query {q}")
    named = {p for c in clusters for p in c} | set(queries_raw)
    if opts.gallery_names:
        candidates = set(opts.gallery_names)
        missing = sorted(named - candidates)
        if missing:
            raise InputError(f"{path.name}: {len(missing)} patches of the benchmark have no "
                             f"descriptor, e.g. {examples(missing)}")
    else:
        candidates = named
        notes.append(f"{path.name}: without descriptor names only the {len(named)} patches "
                     "named in the benchmark and labels form the gallery (the real pool has "
                     "every patch of each pool image)")
    keyed = []
    for patch in candidates:
        seq, img, idx = _parse_patch(patch, path.name)
        pos = pool_pos.get(f"{seq}.{img}")
        if pos is not None:
            keyed.append((pos, idx, patch))
    gallery = [patch for _, _, patch in sorted(keyed)]
    index = {p: i for i, p in enumerate(gallery)}
    by_image: dict[str, list[int]] = {}
    for i, p in enumerate(gallery):
        by_image.setdefault(p.rsplit(".", 1)[0], []).append(i)
    outside = sorted(p for p in named if p not in index)
    if outside:
        raise InputError(f"{path.name}: {len(outside)} patches are not in an image of the pool, "
                         f"e.g. {examples(outside)}")
    queries = []
    for q, cluster in zip(queries_raw, clusters, strict=True):
        images = {p.rsplit(".", 1)[0] for p in cluster}
        same_image = [i for img in images for i in by_image.get(img, [])]
        queries.append(build_query(q, q, {"same_patch": [index[p] for p in cluster],
                                          "same_image": same_image},
                                   self_index=index[q],
                                   meta={"sequence": q.split(".", 1)[0]}))
    return Dataset(name=path.stem, format=NAME, path=path, gallery=tuple(gallery),
                   queries=tuple(queries), groups=("same_patch", "same_image"),
                   protocols=("hpatches-patch", "hpatches-image"), notes=tuple(notes))


def read_hpatches_results(path: Path, dataset: Dataset) -> Ranking:
    """Return the truncated Ranking in a ``.results`` file (51 patches per query, query first).

    InputError when the pool line differs from the benchmark's, a line has the wrong query
    or an unknown patch, or the number of lines does not match.
    """
    path = Path(path)
    lines = _lines(path)
    bench_pool = dataset.path.read_text(encoding="utf-8").splitlines()[0].strip() \
        if dataset.path is not None and dataset.path.is_file() else None
    if bench_pool is not None and lines[0] != bench_pool:
        raise InputError(f"{path.name}: its first line (the pool) differs from the benchmark's")
    if len(lines) - 1 != dataset.n_queries:
        raise InputError(f"{path.name}: {len(lines) - 1} result lines for {dataset.n_queries} "
                         "queries")
    index = {p: i for i, p in enumerate(dataset.gallery)}
    indices = np.full((dataset.n_queries, RESULTS_DEPTH), -1, dtype=np.int64)
    for q, (query, line) in enumerate(zip(dataset.queries, lines[1:], strict=True)):
        patches = line.split(",")
        if patches[0] != query.name:
            raise InputError(f"{path.name}, line {q + 2}: starts with {patches[0]}, not its "
                             f"query {query.name}")
        unknown = [p for p in patches if p not in index]
        if unknown:
            hint = ("; the pool's patches come from descriptor names: give "
                    f"{option('row_names')} listing every patch" if dataset.notes else "")
            raise InputError(f"{path.name}, line {q + 2}: {len(unknown)} patches are not in the "
                             f"pool, e.g. {examples(unknown)}{hint}")
        if len(patches) > RESULTS_DEPTH:
            raise InputError(f"{path.name}, line {q + 2}: {len(patches)} patches; a results "
                             f"line holds the query and 50 results")
        indices[q, : len(patches)] = [index[p] for p in patches]
    return ranking_from_lists(dataset, indices, None, path.name)


def write_hpatches_results(path: Path, dataset: Dataset, ranking: Ranking) -> None:
    """Write a ``.results`` file: the pool line, then per query the query patch and its first
    50 results with the query itself left out (the submission format)."""
    if dataset.path is None:
        raise InputError("writing .results needs the benchmark file the dataset came from")
    pool = dataset.path.read_text(encoding="utf-8").splitlines()[0].strip()
    with atomic_open(Path(path)) as out:
        out.write(pool + "\n")
        for q, query in enumerate(dataset.queries):
            drop = np.zeros(dataset.n_gallery, dtype=bool)
            if query.self_index >= 0:
                drop[query.self_index] = True
            top, _ = ranking.ranked(q, RESULTS_DEPTH - 1, drop)
            out.write(",".join([query.name, *(dataset.gallery[g] for g in top)]) + "\n")


READER = Reader(NAME, "HPatches retrieval .benchmark with .labels (patch and image tasks)",
                sniff_hpatches, read_hpatches, priority=10)


def is_descriptor_folder(path: Path) -> bool:
    """Return True for an hpatches-benchmark descriptor folder ``<name>/<sequence>/<type>.csv``."""
    p = Path(path)
    try:
        return p.is_dir() and any((child / "ref.csv").is_file() for child in p.iterdir())
    except OSError:
        return False


def read_hpatches_descriptors(folder: Path) -> Descriptors:
    """Return the descriptors of an hpatches-benchmark folder ``<sequence>/<type>.csv``.

    One descriptor per line, comma-separated; the patch index is the 0-based line number, as
    hpatches-benchmark's ``hpatch.py`` and the ``encode_signature`` of its retrieval code
    count it. Rows are named ``<sequence>.<type>.<index>``, like the patch ids of the
    ``.benchmark`` files.
    """
    folder = Path(folder)
    names: list[str] = []
    blocks: list[np.ndarray] = []
    sequences = sorted(p for p in folder.iterdir() if p.is_dir())
    for seq in sequences:
        for csv_path in sorted(seq.glob("*.csv")):
            where = f"{seq.name}/{csv_path.name}"
            try:
                data = np.loadtxt(csv_path, delimiter=",", dtype=np.float32, ndmin=2)
            except ValueError as e:
                raise InputError(f"{folder.name}: {where} is not a matrix of comma-separated "
                                 f"numbers ({e})") from None
            except OSError as e:
                raise InputError(f"{folder.name}: cannot read {where} ({e})") from None
            if data.size == 0:
                raise InputError(f"{folder.name}: {where} is empty")
            if blocks and data.shape[1] != blocks[0].shape[1]:
                raise InputError(f"{folder.name}: {where} has {data.shape[1]} values per line, "
                                 f"the other files {blocks[0].shape[1]}")
            names += [f"{seq.name}.{csv_path.stem}.{i}" for i in range(len(data))]
            blocks.append(data)
    if not blocks:
        raise InputError(f"{folder}: no <sequence>/<type>.csv descriptor file")
    vectors = np.concatenate(blocks)
    return Descriptors(path=folder, tables=(DescriptorTable(tuple(names), vectors),),
                       dim=int(vectors.shape[1]), digest=file_digest(folder))
