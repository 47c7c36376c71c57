"""Which gallery image each id of an index file is.

An index file does not say which image its vectors are: FAISS id *i* is the *i*-th vector
added. irviewer reads it in one of three orders, and says which in the output:

* **the dataset's gallery order**: id *i* is gallery image *i*, the order irviewer's own
  factory strings build in; it fits an index of as many vectors as the dataset has gallery
  images, whatever the descriptor file's layout (one table with the queries interleaved
  included);
* **the descriptor file's order**: id *i* is the file's gallery row *i* (rows the dataset
  does not hold are asked for on top of the depth and dropped); it fits an index of as many
  vectors as the file has gallery rows;
* **a names file** (``--ann-names FILE``, UTF-8, line *i* + 1 names the image of id *i*,
  compared by name as everywhere in irviewer), for an index built in any other order.

A count alone can fit an index built in yet another order, so the order is checked before
anything is scored: up to :data:`SAMPLE` gallery images, evenly spaced, are searched for
with their own vectors (at the index's default parameters), and an order counts when at
least half of them find themselves among their first results under it (:data:`CHECK_K`,
and at most a tenth of the index, so that chance alone finds a tenth at most; an index of
unit vectors finds a vector itself, half leaves room for coarse codes and duplicates).
Where both orders fit the count, the one under which more images find themselves is
taken; a draw, or an order the sample does not confirm, is refused in one sentence naming
``--ann-names``. An id map
(``IndexIDMap``) with ids below 0 is refused: its ids are not rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from irviewer.core.ann.faiss_index import BuiltIndex
from irviewer.core.ann.spec import WHERE
from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import AlignedDescriptors, name_key, normalise_rows
from irviewer.core.errors import InputError, counted, either, examples

#: How a message asks for a names file.
NAMES_WHERE = either("--ann-names FILE", "a names file", key="ann_names")
#: How a message names the names file it speaks of.
NAMES_OPTION = either("--ann-names", "the names file", key="ann_names")
#: Gallery images searched for to check an order, at most.
SAMPLE = 64
#: Results of each such search in which an image must find itself (at most a tenth of the
#: index's vectors).
CHECK_K = 10
#: The share of the sampled images that must find themselves for an order to count.
CONFIRMED = 0.5


@dataclass(frozen=True)
class IdOrder:
    """How an index file's ids become gallery images: ``id_map[i]`` is the dataset gallery
    index of FAISS id *i* (-1: an image the dataset does not hold), ``sentence`` says which
    order was taken and why (for the output)."""

    id_map: np.ndarray
    sentence: str


def file_rows(aligned: AlignedDescriptors) -> int:
    """Return how many gallery rows the descriptor file has."""
    return len(aligned.gallery_names) or int(aligned.gallery.shape[0])


def rows_to_gallery(aligned: AlignedDescriptors, n_gallery: int) -> np.ndarray:
    """Return, per gallery row of the descriptor file, its dataset gallery index (-1 for a
    row the dataset does not hold)."""
    out = np.full(file_rows(aligned), -1, dtype=np.int64)
    if aligned.gallery_rows is None:
        out[:n_gallery] = np.arange(n_gallery)
    else:
        out[aligned.gallery_rows] = np.arange(n_gallery)
    return out


def read_id_names(path: Path) -> list[str]:
    """Return the names of a names file (UTF-8, one per line, a byte-order mark and a last
    empty line allowed); InputError (one sentence) when it cannot be read, is not UTF-8 or
    holds an empty line."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise InputError(f"{NAMES_OPTION} {p}: cannot be read ({e.strerror})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise InputError(f"{NAMES_OPTION} {p.name}: line {line} is not UTF-8 text; save the "
                         "file as UTF-8") from None
    names = text.splitlines()
    empty = next((i for i, n in enumerate(names) if not n.strip()), None)
    if empty is not None:
        raise InputError(f"{NAMES_OPTION} {p.name}: line {empty + 1} is empty; each line names "
                         "the image of one FAISS id")
    return [n.strip() for n in names]


def names_to_gallery(names: list[str], where: str, dataset: Dataset) -> np.ndarray:
    """Return the dataset gallery index of each name (-1: not a gallery image); InputError
    when a name is given twice or a gallery image is not named."""
    gallery = {name_key(g): i for i, g in enumerate(dataset.gallery)}
    keys = [name_key(n) for n in names]
    seen: dict[str, int] = {}
    for line, key in enumerate(keys, 1):
        if key in seen:
            raise InputError(f"{where}: lines {seen[key]} and {line} name the same image "
                             f"({names[line - 1]}); each image is one FAISS id")
        seen[key] = line
    out = np.array([gallery.get(k, -1) for k in keys], dtype=np.int64)
    missing = [g for g in dataset.gallery if name_key(g) not in seen]
    if missing:
        unnamed = counted(len(missing), "gallery image is", "gallery images are")
        raise InputError(f"{where}: {unnamed} not named, e.g. {examples(missing)}; the index "
                         "must hold the dataset's whole gallery")
    return out


def choose_id_order(built: BuiltIndex, aligned: AlignedDescriptors, dataset: Dataset,
                    label: str, method: str, names_file: Path | None = None) -> IdOrder:
    """Return how the ids of the index file ``built`` (named ``label``) become gallery
    images of ``dataset``, ``aligned`` being ``method``'s descriptors (module docstring);
    InputError (one sentence) when no order fits, the sampled images confirm none, or the
    index maps its vectors to ids below 0."""
    where = f"{WHERE} {label}"
    n, n_g, n_file = built.ntotal, dataset.n_gallery, file_rows(aligned)
    ids = built.facts.ids
    if ids is not None and ids[0] < 0:
        raise InputError(f"{where}: the index maps its vectors to ids {ids[0]:,} to "
                         f"{ids[1]:,}, and irviewer reads FAISS id i as an image (row i, or "
                         f"line i + 1 of {NAMES_WHERE}); rebuild it with ids from 0")
    top = n if ids is None else ids[1] + 1
    file_name = aligned.path.name if aligned.path is not None else method
    candidates: list[tuple[str, np.ndarray]] = []
    if names_file is not None:
        names = read_id_names(names_file)
        names_where = f"{where}: {Path(names_file).name}"
        if len(names) != n:
            raise InputError(f"{names_where} names {len(names):,} images but the index "
                             f"holds {n:,} vectors; give one line per FAISS id")
        candidates.append((f"the image on line i + 1 of {Path(names_file).name}",
                           names_to_gallery(names, names_where, dataset)))
    else:
        by_file = rows_to_gallery(aligned, n_g)
        first = aligned.gallery_rows is None  # the file's first rows are the gallery, in order
        if n == n_g:
            candidates.append(("gallery image i in the dataset's order" + (
                f", which is {file_name}'s too" if first else ""), np.arange(n_g)))
        if n == n_file and not (first and n_file == n_g):
            candidates.append((f"gallery row i of {file_name}, in the file's order", by_file))
    candidates = [(what, m) for what, m in candidates if top <= len(m)]
    if not candidates:
        counts = (f"the dataset has {n_g:,} gallery images and {file_name} "
                  f"{n_file:,} gallery rows" if n_file != n_g else
                  f"the dataset and {file_name} have {n_g:,} gallery images")
        raise InputError(f"{where}: the index holds {n:,} vectors"
                         + (f" with ids up to {ids[1]:,}" if ids is not None else "")
                         + f" but {counts}; build it over those in order, or name the image "
                         f"of each FAISS id with {NAMES_WHERE}")
    return _confirmed(built, aligned, dataset, where, candidates)


def _confirmed(built: BuiltIndex, aligned: AlignedDescriptors, dataset: Dataset, where: str,
               candidates: list[tuple[str, np.ndarray]]) -> IdOrder:
    """Return the candidate order under which most sampled gallery images find themselves;
    InputError when none is confirmed or two draw."""
    inverse = []
    for _, id_map in candidates:
        inv = np.full(dataset.n_gallery, -1, dtype=np.int64)
        held = id_map >= 0
        inv[id_map[held]] = np.flatnonzero(held)
        inverse.append(inv)
    usable = np.flatnonzero(np.all([inv >= 0 for inv in inverse], axis=0))
    if len(inverse) > 1:  # where the orders differ, so the sample tells them apart
        differ = usable[inverse[0][usable] != inverse[1][usable]]
        usable = differ if differ.size else usable
    sample = usable[np.unique(np.linspace(0, usable.size - 1, min(SAMPLE, usable.size))
                              .astype(np.int64))] if usable.size else usable
    rows = sample if aligned.gallery_rows is None else aligned.gallery_rows[sample]
    vectors = normalise_rows(aligned.gallery[np.sort(rows)])[np.argsort(np.argsort(rows))]
    _, found, _ = built.search(vectors, min(CHECK_K, max(built.ntotal // 10, 1)))
    hits = [int(np.any(found == inv[sample][:, None], axis=1).sum()) for inv in inverse]
    best = int(np.argmax(hits))
    need = max(1, int(np.ceil(CONFIRMED * sample.size)))
    short = [what.split(",")[0] for what, _ in candidates]
    said = f"{hits[best]} of {sample.size} sampled gallery images found themselves"
    other = f", {hits[1 - best]} as {short[1 - best]}" if len(hits) > 1 else ""
    if hits[best] < need or (len(hits) > 1 and hits[0] == hits[1]):
        tried = (f"as {short[0]}" if len(hits) == 1 else
                 f"{hits[0]} as {short[0]}, {hits[1]} as {short[1]}")
        raise InputError(f"{where}: the index's ids do not follow the dataset's or the "
                         f"file's order (of {sample.size} sampled gallery images, "
                         + (f"{hits[0]} found themselves {tried}" if len(hits) == 1 else
                            f"found themselves: {tried}")
                         + f"); name the image of each FAISS id with {NAMES_WHERE}")
    what, id_map = candidates[best]
    return IdOrder(id_map, f"FAISS id i read as {what}: {said} under it{other}")


__all__ = ["NAMES_OPTION", "NAMES_WHERE", "IdOrder", "choose_id_order", "file_rows",
           "names_to_gallery", "read_id_names", "rows_to_gallery"]
