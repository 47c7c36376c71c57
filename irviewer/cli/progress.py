"""A progress bar on the terminal: the stage, a count, a bar, the rate and the time left.

On a terminal the bar is redrawn in place (at most ten times a second); into a file or a
pipe (a log) a line is written each tenth of the way and at the end of each stage, so a log
does not fill with redraws. Lines printed meanwhile (a photo that was skipped) go above the
bar.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from irviewer.view.progress import pace

BAR_WIDTH = 24


def bar_line(stage: str, done: int, total: int, elapsed: float) -> str:
    """Return one progress line: ``stage  done/total [####----]  rate/s  m:ss left`` (the
    rate and time left from the stage's pace so far; only the stage when there is no
    count)."""
    if total <= 0:
        return stage
    filled = round(BAR_WIDTH * done / total)
    rest = pace(done, total, elapsed)
    return (f"{stage}  {done:,}/{total:,} [{'#' * filled}{'-' * (BAR_WIDTH - filled)}]"
            + (f"  {rest}" if rest else ""))


class ProgressBar:
    """Shows :func:`bar_line` for each :meth:`update` on ``stream`` (stderr by default)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._stage = ""
        self._started = 0.0
        self._drawn = 0.0
        self._shown = ""
        self._logged_tenth = -1

    def update(self, stage: str, done: int, total: int) -> None:
        """Show ``done`` of ``total`` for ``stage`` (a new stage restarts the clock)."""
        now = time.perf_counter()
        if stage != self._stage:
            self._end_line()
            self._stage, self._started, self._logged_tenth = stage, now, -1
        line = bar_line(stage, done, total, now - self._started)
        if self.tty:
            if done < total and now - self._drawn < 0.1 and self._shown:
                return
            self._drawn = now
            self.stream.write("\r" + line.ljust(len(self._shown)))
            self._shown = line
        else:
            tenth = 10 * done // total if total > 0 else 0
            if tenth != self._logged_tenth and (tenth > self._logged_tenth or total <= 0):
                self._logged_tenth = tenth
                self.stream.write(line + "\n")
        self.stream.flush()

    def message(self, text: str) -> None:
        """Print ``text`` on its own line, above the bar."""
        if self.tty and self._shown:
            self.stream.write("\r" + " " * len(self._shown) + "\r")
            self.stream.write(text + "\n" + self._shown)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def _end_line(self) -> None:
        if self.tty and self._shown:
            self.stream.write("\n")
            self._shown = ""

    def close(self) -> None:
        """End the bar's line."""
        self._end_line()
        self.stream.flush()
