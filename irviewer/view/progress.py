"""Progress in words (Qt-free), for the terminal's progress bar and the window's dialogs:
a count, the rate and the time left from the pace so far."""

from __future__ import annotations


def clock(seconds: float) -> str:
    """Return a duration as m:ss (h:mm:ss from an hour on)."""
    s = max(0, round(seconds))
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def pace(done: int, total: int, elapsed: float) -> str:
    """Return the rate and the time left at the pace so far ("2.5/s  0:06 left"; "" before
    anything is done)."""
    if not done or elapsed <= 0 or total <= 0:
        return ""
    rate = done / elapsed
    return f"{rate:.1f}/s  {clock((total - done) / rate)} left"


def progress_words(stage: str, done: int, total: int, elapsed: float) -> str:
    """Return "Stage  done/total  rate  time left" (the stage alone without a count)."""
    if total <= 0:
        return stage
    rest = pace(done, total, elapsed)
    return f"{stage}  {done:,}/{total:,}" + (f"  {rest}" if rest else "")
