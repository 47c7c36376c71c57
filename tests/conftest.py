"""Test set-up shared by the whole suite: no display is ever needed."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
