"""Importing irviewer shortens OpenBLAS's spin after a multiply, keeping a user's value."""

from __future__ import annotations

import os
import subprocess
import sys


def _value_seen(env: dict[str, str]) -> str:
    out = subprocess.run([sys.executable, "-c", "import irviewer, os; "
                          "print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))"],
                         env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_openblas_spin_is_short_unless_the_user_set_it():
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    assert _value_seen(env) == "4"
    assert _value_seen({**env, "OPENBLAS_THREAD_TIMEOUT": "20"}) == "20"
