"""The local-feature file of a collection (``local_features.npz``): every photo's keypoints
and SIFT descriptors, stored at index time so that a visitor's photo is verified against
its shortlist without decoding a single collection photo
(:mod:`irviewer.extract.local_features`).

An uncompressed .npz (written by :func:`~irviewer.formats.descriptor_files.write_npz`) with
``names`` (one per photo, the collection's photo names), ``offsets`` (int64, one more than
the names: photo i's rows are offsets[i]:offsets[i + 1]), ``points`` (float32 x, y in
pixels of the photo reduced to ``side`` px on its long side), ``descriptors`` (uint8, 128
per row) and ``side`` (one integer).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from irviewer.core.errors import InputError
from irviewer.core.local_features import FeatureTable
from irviewer.formats.descriptor_files import write_npz

#: The file's name in a collection folder.
LOCAL_FEATURES = "local_features.npz"


def write_local_features(path: Path, table: FeatureTable) -> None:
    """Write ``table`` to ``path`` atomically (see the module docstring)."""
    write_npz(Path(path), {"names": np.array(list(table.names), dtype=str),
                           "offsets": table.offsets.astype(np.int64),
                           "points": table.points.astype(np.float32),
                           "descriptors": table.descriptors.astype(np.uint8),
                           "side": np.array(table.side, dtype=np.int64)})


def read_local_features(path: Path) -> FeatureTable:
    """Return the table in ``path``; InputError with one sentence when it is missing or
    damaged (the remedy: index the photos again)."""
    path = Path(path)
    try:  # the file is ours to close, whatever numpy makes of it (a damaged zip)
        with path.open("rb") as stream, np.load(stream, allow_pickle=False) as archive:
            return FeatureTable(tuple(str(n) for n in archive["names"].tolist()),
                                np.asarray(archive["offsets"], np.int64),
                                np.asarray(archive["points"], np.float32),
                                np.asarray(archive["descriptors"], np.uint8),
                                int(np.asarray(archive["side"]).reshape(-1)[0]))
    except FileNotFoundError:
        raise InputError(f"{path.name}: no such file; index the photos again to make "
                         "it") from None
    except (OSError, ValueError, KeyError, EOFError, TypeError, zipfile.BadZipFile) as e:
        raise InputError(f"{path.name}: not a local-feature file irviewer wrote ({e}); index "
                         "the photos again to remake it") from None
