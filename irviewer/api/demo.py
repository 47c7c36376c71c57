""":func:`demo`: where the built-in museum demo's files are (the dataset ``irviewer eval
--demo`` scores, its two descriptor files, its photos), to try the API on real images."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from irviewer.opening.request import demo_paths


@dataclass(frozen=True)
class Demo:
    """The built-in museum demo: 22 photos of paintings (the queries) against 154 views of
    them (the gallery). ``dataset`` is its manifest (a CSV: image, instance, role, title),
    ``strong`` and ``weak`` its descriptor files (.npz: ``features``, one row per image, and
    their ``names``), ``images`` the folder its image names are relative to."""

    dataset: Path
    strong: Path
    weak: Path
    images: Path


def demo() -> Demo:
    """Return the built-in demo's files (:class:`Demo`)."""
    manifest, strong = demo_paths()
    return Demo(manifest, strong, strong.with_name("weak.npz"), manifest.parent)


__all__ = ["Demo", "demo"]
