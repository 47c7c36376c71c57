"""The datasets whose descriptor files are not ranked by cosine similarity over one gallery,
each with its family's own ranker: HPatches task lists rank each query's own pool
(:func:`irviewer.formats.hpatches_tasks.iter_rank_tasks`), DISC21 makes the predicted pairs
of isc2021's descriptor track (:func:`irviewer.formats.disc21.iter_rank_disc21`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import Descriptors
from irviewer.core.ranking import Ranking
from irviewer.formats.disc21 import NAME as DISC21
from irviewer.formats.disc21 import iter_rank_disc21
from irviewer.formats.hpatches_tasks import NAME as TASKS
from irviewer.formats.hpatches_tasks import iter_rank_tasks

#: A family's ranker: (dataset, descriptors, depth, DISC21's pair settings ``--copy-pairs``)
#: -> (done, total, None) per step, then (total, total, the ranking).
OwnRanker = Callable[[Dataset, Descriptors, int, str | None],
                     Iterator[tuple[int, int, Ranking | None]]]

_RANKERS: dict[str, OwnRanker] = {
    TASKS: lambda dataset, descriptors, k, _pairs: iter_rank_tasks(dataset, descriptors, k),
    DISC21: lambda dataset, descriptors, k, pairs: iter_rank_disc21(descriptors, dataset, k,
                                                                    pairs),
}


def own_ranker(format: str) -> OwnRanker | None:
    """Return the ranker of datasets read by reader ``format``, None for the cosine ranking
    over one gallery."""
    return _RANKERS.get(format)
