"""Benchmark: what scoring an approximate index costs, as a ratio to what it cannot avoid,
measured in one run; and a Milvus Lite engine through irviewer against its client alone.

Run from the repository root (a script, not a test; pytest does not collect this folder):

    python tests/benchmarks/bench_ann.py                 # both cases
    python tests/benchmarks/bench_ann.py --cases ivf     # only the 1M IVF case
    python tests/benchmarks/bench_ann.py --json OUT.json

(ivf) 70 queries x 1,000,000 gallery x 2048 float16, memory-mapped, the gallery of
    bench_eval.py's case (c) (an rOxford-like 5,000 images followed by 995,000
    distractors, three protocols). The index, ``--index`` (default IVF256,PQ32) at
    ``--nprobe`` (default 8), is built once from the gallery rows the way ``--ann`` builds a
    factory string (trained on 100,000 evenly spaced rows, the gallery added in chunks),
    and its building is reported apart. Then, interleaved, best of ``--repeats``:

    * floor = the exact evaluation (matching rows, ranking, every protocol's metrics: what
      bench_eval.py's case (c) times) + FAISS's own search of the same 70 queries on the
      same index at the same nprobe and depth (one call, FAISS's default threads, timed
      around FAISS's search in the process that holds the index);
    * ann = what irviewer does for ``--ann`` on top of building: the exact evaluation (the
      comparison needs it), every setting searched, its lists scored as result lists, the
      recalls, its evaluation under every protocol and the per-query comparison (ΔAP, lost
      positives) the report gives.

    ratio = ann / floor; target <= 1.2.

(milvus) Milvus Lite (a local .db) holding 100,000 gallery vectors of ``--dim`` (default
    256) with a FLAT index; ``--milvus-queries`` (default 128) queries, top 100. Queries per
    second through irviewer's engine search (batches of 64, the names matched to the
    gallery) against the client alone (the same batches, the same request), interleaved,
    best of the repeats.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
importlib.import_module("irviewer")
import numpy as np  # noqa: E402
from bench_eval import gallery_map, revisited_like  # noqa: E402

from irviewer.core.ann.faiss_index import iter_build_factory, set_parameters  # noqa: E402
from irviewer.core.ann.search import Searched, iter_settings  # noqa: E402
from irviewer.core.ann.spec import AnnSpec, parse_ann_spec  # noqa: E402
from irviewer.core.dataset import Dataset  # noqa: E402
from irviewer.core.descriptors import (  # noqa: E402
    Descriptors,
    DescriptorTable,
    align,
    normalise_rows,
)
from irviewer.core.evaluation import evaluate  # noqa: E402
from irviewer.core.progress import result_of  # noqa: E402
from irviewer.core.protocols import get_protocol  # noqa: E402
from irviewer.core.ranking import Ranking, rank  # noqa: E402
from irviewer.methods.method import Method  # noqa: E402
from irviewer.methods.spec import DESCRIPTORS, Approximate, MethodSpec, Source  # noqa: E402
from irviewer.opening.base_comparison import against_base  # noqa: E402
from irviewer.opening.opener import Opened  # noqa: E402
from irviewer.opening.request import OpenRequest  # noqa: E402
from irviewer.reports.ann_report import ann_member  # noqa: E402

DEPTH = 100


def ivf_case(workdir: Path, index: str, nprobe: int, repeats: int) -> dict[str, float]:
    """Case (ivf): see the module docstring."""
    rng = np.random.default_rng(2)
    ds5k, q, g5k = revisited_like(rng, 70, 5000, 2048)
    gallery = gallery_map(workdir, g5k, rng)
    n = len(gallery)
    ds = replace(ds5k, gallery=ds5k.gallery + tuple(f"d{i}" for i in range(n - 5000)))
    descriptors = Descriptors(path=Path("case-ivf.npy"), dim=2048,
                              tables=(DescriptorTable(tuple(x.name for x in ds.queries), q),
                                      DescriptorTable(ds.gallery, gallery)))
    aligned = align(descriptors, ds)
    start = time.perf_counter()
    built = result_of(iter_build_factory(index, aligned.gallery, aligned.gallery_rows, n))
    build_s = time.perf_counter() - start
    print(f"  built {index} over {n:,} rows in {build_s:.1f} s", file=sys.stderr)
    spec = parse_ann_spec(f"{index}:nprobe={nprobe}")
    protocols = [get_protocol(p) for p in ds.protocols]
    qn = normalise_rows(q)
    floor = ann = float("inf")
    summary: dict[str, object] = {}
    for _ in range(repeats):  # interleaved: both see the same machine load
        t = time.perf_counter()
        exact = rank(align(descriptors, ds), ds, k=DEPTH)
        _ = [evaluate(ds, exact, p) for p in protocols]
        exact_s = time.perf_counter() - t
        set_parameters(built, spec.settings()[0], "floor")
        _, _, own_s = built.search(qn, DEPTH)  # timed in FAISS's process, around its search
        floor = min(floor, exact_s + own_s)
        t = time.perf_counter()
        exact = rank(align(descriptors, ds), ds, k=DEPTH)
        _ = [evaluate(ds, exact, p) for p in protocols]
        searched = result_of(iter_settings("gallery", aligned, exact, ds, DEPTH, built,
                                           spec.settings()))
        opened = _opened(ds, exact, searched, spec)
        names = [x.name for x in ds.queries]
        for s in searched:
            for p in protocols:
                member = ann_member(against_base(opened, s.name, p.name), names, ds.gallery)
        ann = min(ann, time.perf_counter() - t)
        summary = {"recall@10": round(member["recall@10"], 4), "mAP": round(member["mAP"], 4),
                   "mAP_exact": round(member["mAP_exact"], 4),
                   "ms_per_query": round(searched[0].run.ms_per_query, 3)}
    print(f"  {index}:nprobe={nprobe} ({protocols[-1].name}): {summary}", file=sys.stderr)
    return {"build_s": round(build_s, 2), "floor_s": round(floor, 3), "ann_s": round(ann, 3),
            "ratio": round(ann / floor, 3)}


def _opened(ds: Dataset, exact: Ranking, searched: list[Searched], spec: AnnSpec) -> Opened:
    """Return the exact method and the searched ones as the opening makes them, each
    derived one with its base (what eval's ann block compares)."""
    source = Source(Path("case-ivf.npy"), DESCRIPTORS, 0)
    plain = Method("gallery", source.path, DESCRIPTORS, exact,
                   spec=MethodSpec("gallery", source, depth=DEPTH))
    derived = [Method(s.name, source.path, DESCRIPTORS, s.ranking, ann=s.run,
                      spec=MethodSpec(s.name, source, Approximate(spec.text, setting), DEPTH,
                                      "gallery"))
               for s, setting in zip(searched, spec.settings(), strict=True)]
    return Opened(ds, {m.name: m for m in (plain, *derived)}, OpenRequest(Path("case-ivf")))


def milvus_case(dim: int, n_queries: int, repeats: int) -> dict[str, float]:
    """Case (milvus): see the module docstring."""
    import logging

    from pymilvus import DataType, MilvusClient

    from irviewer.core.ann.milvus_engine import BATCH, connect, describe, iter_engine_search

    logging.getLogger("pymilvus").setLevel(logging.CRITICAL)
    rng = np.random.default_rng(3)
    n = 100_000
    gallery = normalise_rows(rng.standard_normal((n, dim), dtype=np.float32))
    queries = normalise_rows(rng.standard_normal((n_queries, dim), dtype=np.float32))
    names = [f"g{i:06d}.jpg" for i in range(n)]
    with tempfile.TemporaryDirectory() as folder:
        uri = str(Path(folder) / "gallery.db")
        client = MilvusClient(uri=uri)
        schema = MilvusClient.create_schema(auto_id=False)
        schema.add_field("name", DataType.VARCHAR, is_primary=True, max_length=64)
        schema.add_field("vec", DataType.FLOAT_VECTOR, dim=dim)
        params = client.prepare_index_params()
        params.add_index("vec", index_type="FLAT", metric_type="IP")
        client.create_collection("gallery", schema=schema, index_params=params)
        t = time.perf_counter()
        for a in range(0, n, 5000):
            client.insert("gallery", [{"name": names[i], "vec": gallery[i].tolist()}
                                      for i in range(a, min(a + 5000, n))])
        client.load_collection("gallery")
        print(f"  inserted {n:,} x {dim} in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        mine = connect(uri)
        found = describe(mine, uri, "gallery", None, dim)
        def client_alone() -> None:
            for a in range(0, n_queries, BATCH):
                client.search("gallery", data=queries[a:a + BATCH].tolist(), limit=DEPTH,
                              output_fields=["name"], anns_field="vec",
                              search_params={"metric_type": "IP"})

        def through_irviewer() -> None:
            result_of(iter_engine_search(mine, found, queries, DEPTH, "searching"))

        client.search("gallery", data=queries[:1].tolist(), limit=DEPTH)  # warm-up
        alone = through = float("inf")
        for i in range(repeats):  # interleaved, the order alternating
            for which in ((client_alone, through_irviewer) if i % 2 == 0
                          else (through_irviewer, client_alone)):
                t = time.perf_counter()
                which()
                took = time.perf_counter() - t
                if which is client_alone:
                    alone = min(alone, took)
                else:
                    through = min(through, took)
        client.close()
    return {"client_qps": round(n_queries / alone, 1), "irviewer_qps": round(
        n_queries / through, 1), "ratio": round(through / alone, 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", default="ivf,milvus")
    parser.add_argument("--index", default="IVF256,PQ32")
    parser.add_argument("--nprobe", type=int, default=8)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--milvus-queries", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/irviewer-bench"))
    args = parser.parse_args()
    cases = set(args.cases.split(","))
    results: dict[str, dict[str, float]] = {}
    if "milvus" in cases:
        results["milvus"] = milvus_case(args.dim, args.milvus_queries, args.repeats)
        r = results["milvus"]
        print(f"milvus  100,000 x {args.dim} FLAT, {args.milvus_queries} queries, top "
              f"{DEPTH}: client alone {r['client_qps']:.1f} q/s, through irviewer "
              f"{r['irviewer_qps']:.1f} q/s (time ratio {r['ratio']:.3f})")
    if "ivf" in cases:
        results["ivf"] = ivf_case(args.workdir, args.index, args.nprobe, args.repeats)
        r = results["ivf"]
        print(f"ivf     70 x 1,000,000 x 2048 float16, {args.index}:nprobe={args.nprobe}: "
              f"built in {r['build_s']:.1f} s (apart); floor (exact eval + FAISS's own search) "
              f"{r['floor_s']:.3f} s, --ann scoring {r['ann_s']:.3f} s, ratio "
              f"{r['ratio']:.3f} (target <= 1.2)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
