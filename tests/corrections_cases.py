"""Small on-disk datasets of every correctable family, each with a descriptor file, for the
corrections tests (seeded; negative cosine scores included)."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from irviewer.formats.base import ReadOptions

FAMILIES = ("manifest", "instances", "reid", "reid-manifest", "oxford", "revisited",
            "holidays")


@dataclass(frozen=True)
class Case:
    """One family's dataset on disk: its path, descriptor file, reader options (and as
    command-line arguments), and where apply-corrections writes its corrected copy."""

    family: str
    dataset: Path
    descriptors: Path
    options: ReadOptions
    args: tuple[str, ...]
    out: Path


def _touch(folder: Path, names: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        (folder / n).write_bytes(b"")


def _descriptors(path: Path, names: list[str], seed: int) -> Path:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(len(names), 8)).astype(np.float32)
    np.savez(path, features=vectors, names=np.array(names))
    return path


def make_case(family: str, root: Path, seed: int = 0) -> Case:
    """Return the :class:`Case` of ``family`` written under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    build = {"manifest": _manifest, "instances": _instances, "reid": _reid,
             "reid-manifest": _reid_manifest, "oxford": _oxford, "revisited": _revisited,
             "holidays": _holidays}[family]
    return build(root, seed)


def _manifest(root: Path, seed: int) -> Case:
    rows = ["image,instance,role,title"]
    names = []
    for label in ("a", "b", "c", "d"):
        for i in range(4):
            role = "both" if i == 0 and label in "ab" else "gallery"
            rows.append(f"img/{label}{i}.jpg,{label},{role},{label} {i}")
            names.append(f"{label}{i}")
        rows.append(f"img/{label}_q.jpg,{label},query,")
        names.append(f"{label}_q")
    rows.append("img/lonely_q.jpg,zz,query,")  # removed by the reader: no gallery image
    path = root / "set.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return Case("manifest", path, _descriptors(root / "d.npz", names, seed), ReadOptions(),
                (), root / "fixed.csv")


def _instances(root: Path, seed: int) -> Case:
    base = root / "museum"
    gallery = [f"{label}-{i}.jpg" for label in "abcd" for i in range(3)]
    queries = [f"{label}-q{i}.jpg" for label in "abcd" for i in range(2)]
    _touch(base / "gallery", gallery)
    _touch(base / "query", queries)
    names = [n[:-4] for n in (*gallery, *queries)]
    return Case("instances", base, _descriptors(root / "d.npz", names, seed), ReadOptions(),
                (), base / "fixed.csv")


def _reid_names() -> tuple[list[str], list[str]]:
    query = [f"{pid:04d}_c{cam}s1_000001_00.jpg" for pid in (1, 2, 3, 4) for cam in (1, 2)]
    gallery = [f"{pid:04d}_c{cam}s1_00010{k}_00.jpg" for pid in (1, 2, 3, 4)
               for cam in (1, 2, 3) for k in range(2)]
    gallery += ["-1_c1s1_000200_00.jpg", "-1_c2s1_000201_00.jpg",
                "0000_c1s1_000300_00.jpg", "0000_c3s1_000301_00.jpg"]
    return query, gallery


def _reid(root: Path, seed: int) -> Case:
    base = root / "market"
    query, gallery = _reid_names()
    _touch(base / "query", query)
    _touch(base / "bounding_box_test", gallery)
    names = [n[:-4] for n in (*gallery, *query)]
    return Case("reid", base, _descriptors(root / "d.npz", names, seed), ReadOptions(), (),
                base / "fixed.csv")


def _reid_manifest(root: Path, seed: int) -> Case:
    query, gallery = _reid_names()
    rows = ["image,instance,role,camera"]
    for role, files in (("gallery", gallery), ("query", query)):
        for f in files:
            pid, cam = f.split("_c")[0], f.split("_c")[1][0]
            rows.append(f"imgs/{f},{int(pid)},{role},{cam}")
    path = root / "people.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    names = [n[:-4] for n in (*gallery, *query)]
    return Case("reid-manifest", path, _descriptors(root / "d.npz", names, seed),
                ReadOptions(), (), root / "fixed.csv")


def _oxford(root: Path, seed: int) -> Case:
    gt = root / "gt_files"
    gt.mkdir()
    images = [f"{place}_{i:06d}" for place in ("souls", "bridge") for i in range(1, 9)]
    _touch(root / "jpg", [f"{n}.jpg" for n in images])
    rng = np.random.default_rng(seed)
    for place in ("souls", "bridge"):
        for qi in (1, 2):
            qid = f"{place}_{qi}"
            (gt / f"{qid}_query.txt").write_text(f"oxc1_{place}_{qi:06d} 1.5 2 30 40.25\n")
            pool = [n for n in images if n != f"{place}_{qi:06d}"]
            picked = rng.permutation(pool)[:9].tolist()
            good = [f"{place}_{qi:06d}", *picked[:3]]
            for group, members in (("good", good), ("ok", picked[3:5]),
                                   ("junk", picked[5:7])):
                (gt / f"{qid}_{group}.txt").write_text("".join(f"{m}\n" for m in members))
    options = ReadOptions(images=root / "jpg")
    return Case("oxford", gt, _descriptors(root / "d.npz", images, seed), options,
                ("--images", str(root / "jpg")), root / "fixed_gt")


def _revisited(root: Path, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    imlist = [f"im{i:03d}" for i in range(24)]
    qimlist = [f"qim{i}" for i in range(4)]
    gnd = []
    for _ in qimlist:
        order = rng.permutation(len(imlist)).tolist()
        gnd.append({"easy": sorted(order[:3]), "hard": sorted(order[3:6]),
                    "junk": sorted(order[6:8]), "bbx": [1.0, 2.0, 50.0, 60.5]})
    path = root / "gnd_rtest.pkl"
    path.write_bytes(pickle.dumps({"imlist": imlist, "qimlist": qimlist, "gnd": gnd}))
    return Case("revisited", path, _descriptors(root / "d.npz", imlist + qimlist, seed),
                ReadOptions(), (), root / "fixed.pkl")


def _holidays(root: Path, seed: int) -> Case:
    names = [f"{g}{n:02d}" for g in (1000, 1001, 1002, 1003) for n in range(3)] + ["100401"]
    path = root / "holidays_images.dat"
    path.write_text("".join(f"{n}.jpg\n" for n in names))
    return Case("holidays", path, _descriptors(root / "d.npz", names, seed), ReadOptions(),
                (), root / "fixed.dat")
