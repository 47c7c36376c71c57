"""A synthetic instance set with injected label errors and decoys, for the label audit.

Each instance label has a centre in descriptor space; its images are the centre plus noise.
Two "methods" see the same images through different noise (and a method-specific shift of
each centre), so they agree on what is what but not on every rank. Injected errors: gallery
images whose manifest label is changed to another instance (their descriptor stays with the
true one). Decoys: correctly labelled gallery images made very hard, which a good audit must
not take for errors: turned away from their own instance and mostly noise, they rank below
almost every negative for their own queries. The truth is returned, so recall can be measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class SynthSet:
    """Paths of the written set and the truth about it."""

    manifest: Path
    descriptors: tuple[Path, ...]
    injected: dict[str, tuple[str, str]]  # image -> (written label, true label)
    decoys: tuple[str, ...]


def write_synth_set(folder: Path, n_labels: int = 60, per_label: int = 8,
                    queries_per_label: int = 2, n_injected: int = 12, n_decoys: int = 12,
                    dim: int = 64, noise: float = 0.55, seed: int = 0) -> SynthSet:
    """Write ``set.csv``, ``A.npz`` and ``B.npz`` under ``folder`` and return the truth.

    Images ``L<i>_g<j>`` (gallery) and ``L<i>_q<j>`` (queries) of label ``L<i>``.
    """
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    labels = [f"L{i:03d}" for i in range(n_labels)]
    centres = rng.standard_normal((n_labels, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    rows: list[tuple[str, str, str]] = []
    true_label: list[int] = []
    for i, lab in enumerate(labels):
        rows += [(f"{lab}_q{j}", lab, "query") for j in range(queries_per_label)]
        rows += [(f"{lab}_g{j}", lab, "gallery") for j in range(per_label)]
        true_label += [i] * (queries_per_label + per_label)
    gallery_rows = [k for k, r in enumerate(rows) if r[2] == "gallery"]
    picked = rng.choice(gallery_rows, size=n_injected + n_decoys, replace=False)
    injected_rows, decoy_rows = picked[:n_injected], picked[n_injected:]
    injected: dict[str, tuple[str, str]] = {}
    for k in injected_rows.tolist():
        name, lab, role = rows[k]
        other = labels[(labels.index(lab) + int(rng.integers(1, n_labels))) % n_labels]
        rows[k] = (name, other, role)
        injected[name] = (other, lab)
    decoys = tuple(rows[k][0] for k in decoy_rows.tolist())
    paths = []
    for m, method in enumerate(("A", "B")):
        shifted = centres + 0.6 * m * rng.standard_normal((n_labels, dim)).astype(
            np.float32) / np.sqrt(dim)
        shifted /= np.linalg.norm(shifted, axis=1, keepdims=True)
        vecs = shifted[true_label] + noise * rng.standard_normal(
            (len(rows), dim)).astype(np.float32) / np.sqrt(dim)
        for k in decoy_rows.tolist():
            # very hard: turned away from its own instance, mostly noise
            vecs[k] = -0.3 * shifted[true_label[k]] + 2.5 * rng.standard_normal(
                dim).astype(np.float32) / np.sqrt(dim)
        path = folder / f"{method}.npz"
        np.savez(path, features=vecs.astype(np.float32), names=np.array([r[0] for r in rows]))
        paths.append(path)
    manifest = folder / "set.csv"
    manifest.write_text("image,instance,role\n" + "".join(
        f"{name}.jpg,{lab},{role}\n" for name, lab, role in rows), encoding="utf-8")
    return SynthSet(manifest, tuple(paths), injected, decoys)
