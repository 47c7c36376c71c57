"""Long work as generators: each yields its progress steps and returns its result."""

from __future__ import annotations

from collections.abc import Generator
from typing import TypeVar

T = TypeVar("T")


def result_of(steps: Generator[object, None, T]) -> T:
    """Return the value the generator ``steps`` returns, its progress steps passed over (the
    scripts' and tests' way to run what the window runs with a progress bar)."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
