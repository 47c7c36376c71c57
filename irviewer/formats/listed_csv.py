"""Result files in a benchmark's own CSV layout, recognised by their first line: a Google
Landmarks v2 submission (``id,images``, :mod:`irviewer.formats.gldv2`) and DISC21
predictions (``query_id,reference_id,score``, :mod:`irviewer.formats.disc21`)."""

from __future__ import annotations

from pathlib import Path

from irviewer.core.copy_pairs import parse_pair_settings
from irviewer.core.dataset import Dataset
from irviewer.core.ranking.listed import ListedRanking
from irviewer.formats.disc21 import read_disc21_predictions, sniff_disc21_predictions
from irviewer.formats.gldv2 import read_gldv2_submission, sniff_gldv2_submission


def sniff_listed_csv(path: Path) -> bool:
    """Return True for a GLDv2 submission or DISC21 predictions file (by its first line)."""
    return sniff_gldv2_submission(path) or sniff_disc21_predictions(path)


def read_listed_csv(path: Path, dataset: Dataset, pairs: str | None = None
                    ) -> tuple[ListedRanking, tuple[str, ...]]:
    """Return (the ranking, notes) of a GLDv2 submission or of DISC21 predictions (the
    latter bounded by the cap of ``pairs``, ``--copy-pairs``); InputError as each reader."""
    if sniff_gldv2_submission(path):
        return read_gldv2_submission(path, dataset)
    return read_disc21_predictions(path, dataset, parse_pair_settings(pairs))
