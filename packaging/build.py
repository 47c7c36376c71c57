"""Build irviewer as a one-folder desktop app with PyInstaller and report its size:

    python packaging/build.py [--dist DIR] [--work DIR]

Needs ``pip install pyinstaller`` (and irviewer's own dependencies) in the Python that runs
it. Writes ``DIR/irviewer/`` (default ``dist/irviewer``): run ``dist/irviewer/irviewer`` (on
Windows ``irviewer.exe``), or double-click it: it opens on the museum demo, and File ▸ New
collection from a folder… makes a curator's own collection. On Linux, the README's "put it
in the desktop's menu" installs ``packaging/irviewer.desktop`` and its icon; starting a
kiosk at login is in docs/presentation.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def app_files(folder: Path) -> list[Path]:
    """Return the files under ``folder``, without the symbolic links PyInstaller makes to
    shared libraries it also holds (counting both would count those libraries twice)."""
    return [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()]


def folder_size(folder: Path) -> int:
    """Return the bytes of every file under ``folder`` (each stored file once)."""
    return sum(p.stat().st_size for p in app_files(folder))


def build(dist: Path, work: Path) -> Path:
    """Run PyInstaller on packaging/irviewer.spec; return the app's folder."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean",
                    "--log-level", "WARN", "--distpath", str(dist), "--workpath", str(work),
                    str(ROOT / "packaging" / "irviewer.spec")], check=True, cwd=ROOT)
    app = dist / "irviewer"
    print(f"built {app} in {time.perf_counter() - start:.0f} s: "
          f"{folder_size(app) / 2**20:.0f} MiB in "
          f"{len(app_files(app)):,} files")
    return app


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--work", type=Path, default=ROOT / "build")
    args = parser.parse_args()
    build(args.dist, args.work)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
