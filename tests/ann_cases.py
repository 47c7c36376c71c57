"""A small instance-search set with clustered descriptors, written in the formats irviewer
reads (a CSV manifest and an .npz with names), for the approximate-search tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def clustered_set(root: Path, n_instances: int = 12, per: int = 8, dim: int = 16,
                  spread: float = 0.6, seed: int = 0) -> tuple[Path, Path]:
    """Write ``root/set.csv`` (one query and ``per`` gallery images per instance, plus a
    few distractors) and ``root/desc.npz`` (``names``, ``features``: gallery rows first in
    manifest order, then the queries); return both paths."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_instances, dim))
    lines, names, rows = ["image,instance,role"], [], []
    for i in range(n_instances):
        for j in range(per):
            name = f"i{i:02d}_g{j}.jpg"
            lines.append(f"{name},inst{i},gallery")
            names.append(name)
            rows.append(centres[i] + spread * rng.normal(size=dim))
    for j in range(n_instances):
        name = f"distractor{j}.jpg"
        lines.append(f"{name},distractor{j},gallery")
        names.append(name)
        rows.append(rng.normal(size=dim))
    for i in range(n_instances):
        name = f"i{i:02d}_q.jpg"
        lines.append(f"{name},inst{i},query")
        names.append(name)
        rows.append(centres[i] + spread * rng.normal(size=dim))
    root.mkdir(parents=True, exist_ok=True)
    manifest, npz = root / "set.csv", root / "desc.npz"
    manifest.write_text("\n".join(lines) + "\n")
    np.savez(npz, names=np.array(names), features=np.array(rows, dtype=np.float32))
    return manifest, npz


def unit(x: np.ndarray) -> np.ndarray:
    """Return ``x``'s rows scaled to unit L2 norm (float32)."""
    x = np.asarray(x, dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def milvus_collection(uri: str, name: str, names: list[str], vectors: np.ndarray,
                      index_type: str = "FLAT", metric: str = "IP",
                      params: dict | None = None) -> None:
    """Create the Milvus collection ``name`` at ``uri``: primary key ``name`` (VARCHAR),
    vector field ``vec``, one entity per (name, vector), indexed by ``index_type`` with its
    build ``params``."""
    from pymilvus import DataType, MilvusClient

    client = MilvusClient(uri=uri)
    if client.has_collection(name):
        client.drop_collection(name)
    schema = MilvusClient.create_schema(auto_id=False)
    schema.add_field("name", DataType.VARCHAR, is_primary=True, max_length=512)
    schema.add_field("vec", DataType.FLOAT_VECTOR, dim=int(vectors.shape[1]))
    index = client.prepare_index_params()
    index.add_index("vec", index_type=index_type, metric_type=metric, params=params or {})
    client.create_collection(name, schema=schema, index_params=index)
    client.insert(name, [{"name": n, "vec": v.tolist()} for n, v in
                         zip(names, np.asarray(vectors, dtype=np.float32), strict=True)])
    client.close()
