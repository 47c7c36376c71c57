"""How to start this very program again, as a command a person can paste: what
``irviewer index`` prints after indexing ("open it: …"), and the sentences that say to
index again.

The same irviewer runs three ways: the ``irviewer`` script that pip installs (on the
PATH), ``python -m irviewer`` (a checkout, a virtual environment not activated), and the
desktop app built by PyInstaller (``sys.frozen``), which has no ``irviewer`` on the PATH at
all. A printed command must start the program that printed it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

#: The name of the script pip installs (``[project.scripts]``).
SCRIPT = "irviewer"


def program_command() -> str:
    """Return the command that starts the running irviewer, quoted for the shell: the
    desktop app's own executable (a PyInstaller build); ``irviewer`` when that script
    started it and the PATH finds that same script; the script's full path when it is not
    the one on the PATH; else this Python interpreter with ``-m irviewer``."""
    if getattr(sys, "frozen", False):
        return shlex.quote(sys.executable)
    started = sys.argv[0] if sys.argv else ""
    if Path(started).stem == SCRIPT and Path(started).is_file():
        on_path = shutil.which(SCRIPT)
        if on_path is not None and os.path.realpath(on_path) == os.path.realpath(started):
            return SCRIPT
        return shlex.quote(os.path.abspath(started))
    return f"{shlex.quote(sys.executable)} -m {SCRIPT}"
