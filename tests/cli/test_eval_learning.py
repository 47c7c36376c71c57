"""`irviewer eval` on metric learning's benchmarks (Stanford Online Products, CUB-200-2011,
Cars196, In-Shop): the numbers printed with their conventions named, the JSON, the
conventions table's rules side by side, and one line with exit code 2 for a file that is not
the format asked for."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from irviewer.cli import main
from tests.formats.learning_files import write_cars, write_cub, write_inshop, write_sop


def signs(n: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).choice([-1.0, 1.0], size=(n, dim)).astype(np.float32)


def family(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """Write a small set of the family and descriptors for it (rows in the dataset's order);
    return (dataset, descriptors)."""
    rng = np.random.default_rng(1)
    if name == "sop":
        dataset, _ = write_sop(tmp_path / "sop", list(rng.integers(11319, 11327, 40)))
        n = 40
    elif name == "cub":
        write_cub(tmp_path / "cub", list(rng.integers(101, 110, 40)))
        dataset, n = tmp_path / "cub", 40
    elif name == "cars":
        dataset = tmp_path / "cars" / "cars_annos.mat"
        write_cars(dataset, list(rng.integers(99, 105, 40)))
        n = 40
    else:
        rows = [(f"id_{i % 7}", "query" if i % 2 else "gallery") for i in range(42)]
        dataset, _ = write_inshop(tmp_path / "inshop", rows)
        n = 42
    descriptors = tmp_path / f"{name}.npy"
    np.save(descriptors, signs(n))
    return dataset, descriptors


@pytest.mark.parametrize(("name", "protocol", "keys"), [
    ("sop", "sop", ["mAP@R", "mR-precision", "mP@1", "Recall@1", "Recall@10", "Recall@100",
                    "Recall@1000"]),
    ("cub", "metric-learning", ["mAP@R", "mR-precision", "mP@1", "Recall@1", "Recall@2",
                                "Recall@4", "Recall@8"]),
    ("cars", "metric-learning", ["mAP@R", "Recall@8"]),
    ("inshop", "inshop", ["Recall@1", "Recall@10", "Recall@20", "Recall@30", "Recall@40",
                          "Recall@50"]),
])
def test_each_family_prints_its_numbers_with_their_conventions(tmp_path, capsys, name,
                                                               protocol, keys):
    dataset, descriptors = family(tmp_path, name)
    out_json = tmp_path / "out.json"
    assert main(["eval", str(dataset), "-d", str(descriptors), "--json", str(out_json)]) == 0
    table = capsys.readouterr().out
    assert f"protocol {protocol}:" in table
    report = json.loads(out_json.read_text())
    ev = report["evaluations"][0]
    assert ev["protocol"]["name"] == protocol and ev["protocol"]["headline"] == "Recall@1"
    for key in keys:
        value = ev["summary"][key]
        assert 0.0 <= value <= 1.0
        line = next(x for x in table.splitlines() if x.split()[:1] == [key])
        assert f"{100 * value:.2f}" in line and ev["conventions"][key] in line
    if name == "inshop":
        assert "Recall@1_best" in ev["summary"] and "Recall@1_worst" in ev["conventions"]
    else:
        assert "pytorch-metric-learning" in ev["conventions"]["mAP@R"]
        assert ev["protocol"]["map_at_r"] is True


def test_ties_that_move_a_recall_are_said_under_it(tmp_path, capsys):
    rows = [(f"id_{i % 5}", "query" if i % 2 else "gallery") for i in range(40)]
    dataset, _ = write_inshop(tmp_path / "inshop", rows)
    np.save(tmp_path / "d.npy", signs(40, dim=4))  # 16 distinct vectors: ties everywhere
    assert main(["eval", str(dataset), "-d", str(tmp_path / "d.npy"), "--json",
                 str(tmp_path / "o.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    s = json.loads((tmp_path / "o.json").read_text())["evaluations"][0]["summary"]
    at = next(i for i, x in enumerate(lines) if x.split()[:1] == ["Recall@1"])
    assert s["Recall@1_worst"] < s["Recall@1"] <= s["Recall@1_best"] or \
        s["Recall@1_worst"] <= s["Recall@1"] < s["Recall@1_best"]
    assert lines[at + 1].split() == ["ties:", f"{100 * s['Recall@1_worst']:.2f}", "to",
                                     f"{100 * s['Recall@1_best']:.2f}", "by", "the", "order",
                                     "of", "tied", "scores", "(positives", "last", "/",
                                     "first)"]


def test_the_conventions_table_names_the_first_result_rule_beside_removal_by_index(
        tmp_path, capsys):
    dataset, descriptors = family(tmp_path, "cub")
    out_json = tmp_path / "out.json"
    assert main(["eval", str(dataset), "-d", str(descriptors), "--conventions", "--json",
                 str(out_json)]) == 0
    table = capsys.readouterr().out
    assert "MAP@R  the query removed by index" in table
    assert "MAP@R  the first result dropped" in table
    assert "Recall@1  the first result dropped, every query counted" in table
    rows = json.loads(out_json.read_text())["evaluations"][0]["all_conventions"]
    keys = {r["key"]: r for r in rows}
    assert keys["MAP@R by index"]["protocol_own"] is True
    assert keys["MAP@R first dropped"]["protocol_own"] is False
    assert "up to 1.5.1" in keys["MAP@R first dropped"]["source"]


@pytest.mark.parametrize("fmt", ["sop", "cub200", "cars196", "inshop"])
def test_a_file_of_another_format_exits_2_with_one_line(tmp_path, capsys, fmt):
    other = tmp_path / "set.csv"
    other.write_text("image,instance,role\na.jpg,a,both\nb.jpg,a,gallery\n")
    np.save(tmp_path / "d.npy", signs(2))
    rc = main(["eval", str(other), "--format", fmt, "-d", str(tmp_path / "d.npy")])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("irviewer: error: ") and len(err.strip().splitlines()) == 1
