"""A progress generator's result, its steps passed over."""

from __future__ import annotations

from collections.abc import Generator

from irviewer.core.progress import result_of


def test_result_of_runs_every_step_and_returns_the_result():
    ran: list[int] = []

    def steps() -> Generator[int, None, str]:
        for i in range(3):
            ran.append(i)
            yield i
        return "done"

    assert result_of(steps()) == "done"
    assert ran == [0, 1, 2]
