"""`irviewer figure --sweep`: an --ann sweep's mAP against search time per query, written
as PNG, PDF or SVG; a SPEC that sweeps nothing is refused in one sentence."""

from __future__ import annotations

import re

import pytest
from PySide6.QtGui import QImage

from irviewer.cli import main

pytest.importorskip("faiss")


@pytest.mark.parametrize("suffix", [".png", ".pdf", ".svg"])
def test_the_sweep_figure_is_written(tmp_path, suffix, capsys):
    out = tmp_path / f"sweep{suffix}"
    assert main(["figure", "--demo", "--ann", "IVF4,Flat:nprobe=1,2,4", "--sweep",
                 "--out", str(out)]) == 0
    assert "3 settings of IVF4,Flat:nprobe=1,2,4, instance" in capsys.readouterr().out
    data = out.read_bytes()
    assert data.startswith({".png": b"\x89PNG", ".pdf": b"%PDF", ".svg": b"<?xml"}[suffix])
    if suffix == ".svg":
        assert "nprobe=4" in data.decode() and "exact ranking" in data.decode()
    if suffix == ".png":  # 300 dpi, as every figure irviewer writes
        image = QImage(str(out))
        assert (image.width(), image.height()) == (round(640 * 300 / 72),
                                                   round(400 * 300 / 72))
        assert round(image.dotsPerMeterX() * 0.0254) == 300
    if suffix == ".pdf":  # one page of exactly the figure's size in points
        box = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", data)
        assert box is not None and (float(box[1]), float(box[2])) == (640, 400)


def test_a_spec_without_a_sweep_is_refused(tmp_path, capsys):
    assert main(["figure", "--demo", "--ann", "IVF4,Flat:nprobe=2", "--sweep",
                 "--out", str(tmp_path / "x.png")]) == 2
    assert capsys.readouterr().err.strip() == (
        "irviewer: error: --sweep draws one --ann SPEC with a comma list of values, e.g. "
        "--ann IVF256,Flat:nprobe=1,2,4,8, or one --engine with them, e.g. --engine "
        "gallery.db:nprobe=1,2,4")
