"""Opening a dataset with its descriptors, as one cancellable generator (Qt-free).

The GUI runs :func:`iter_open` in a worker thread and shows its progress; tests run it
directly. It yields :class:`Step` values and ends with one carrying the :class:`Opened`
result: the dataset, its ranking, and one evaluation per default protocol.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import align
from irviewer.core.evaluation import Evaluation, evaluate
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import Ranking, iter_rank
from irviewer.formats.base import ReadOptions
from irviewer.formats.descriptor_files import descriptor_names, read_descriptors
from irviewer.formats.registry import read_dataset
from irviewer.paths import resources_dir


@dataclass(frozen=True)
class Opened:
    """A dataset ready to inspect: its ranking and one evaluation per protocol."""

    dataset: Dataset
    ranking: Ranking
    evaluations: dict[str, Evaluation]
    descriptors_path: Path


@dataclass(frozen=True)
class Step:
    """Progress of :func:`iter_open`: a stage name, done of total, and the result at the end."""

    stage: str
    done: int = 0
    total: int = 0
    opened: Opened | None = field(default=None)


def demo_paths() -> tuple[Path, Path]:
    """Return the built-in demo's manifest and strong descriptor file."""
    demo = resources_dir() / "demo"
    return demo / "demo.csv", demo / "strong.npz"


def iter_open(dataset_path: Path, descriptors_path: Path, options: ReadOptions | None = None,
              k: int = 200) -> Iterator[Step]:
    """Read, rank and evaluate, yielding progress; the last step carries the result.

    Stop iterating (``close()``) to cancel between steps. InputError for bad input.
    """
    opts = options or ReadOptions()
    yield Step("reading the dataset")
    if opts.gallery_names is None:
        opts = ReadOptions(**{**opts.__dict__,
                              "gallery_names": descriptor_names(descriptors_path)})
    dataset = read_dataset(Path(dataset_path), None, opts)
    yield Step("reading the descriptors")
    descriptors = read_descriptors(Path(descriptors_path), gallery_names=dataset.gallery,
                                   query_names=tuple(q.name for q in dataset.queries))
    aligned = align(descriptors, dataset)
    ranking = None
    for progress in iter_rank(aligned, dataset, k=k):
        yield Step("ranking", progress.done, progress.total)
        ranking = progress.ranking or ranking
    assert ranking is not None
    yield Step("scoring")
    evaluations = {name: evaluate(dataset, ranking, get_protocol(name))
                   for name in dataset.protocols}
    yield Step("done", 1, 1, Opened(dataset, ranking, evaluations, Path(descriptors_path)))


def open_now(dataset_path: Path, descriptors_path: Path,
             options: ReadOptions | None = None, k: int = 200) -> Opened:
    """Return :func:`iter_open`'s result without progress (scripts, tests)."""
    last = None
    for step in iter_open(dataset_path, descriptors_path, options, k):
        last = step
    assert last is not None and last.opened is not None
    return last.opened
