"""`harness run`'s progress says what each run's episodes are doing now, not only how many ended
(an LLM episode runs for minutes at 0/N; a run sat at 0/40 for 38 s with nothing shown): a run
still preparing says so, an episode whose agent host is starting shows as starting, running ones
show their rounds and target calls, and the bar keeps one width whatever the text beside it.
The real command runs in this process (CliRunner) with a live display (rich's TTY switches)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.run_support import cli_env
from typer.testing import CliRunner

from interp_harness.harness.cli import app

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
BAR = re.compile(r"[━╸╺╾╼─]+")


def _frames(stderr: str) -> list[str]:
    """Each line the live display drew, in order (cursor moves and colours taken out)."""
    text = ANSI.sub("", stderr)
    return [x for part in text.split("\r") for x in part.split("\n") if x.strip()]


def _run(
    tmp_path: Path, columns: int, *options: str, floor: bool = False, **extra: str
) -> list[str]:
    env = cli_env(tmp_path) | {
        # a live display although stderr is not a terminal here (rich's own switches)
        "TTY_COMPATIBLE": "1",
        "TTY_INTERACTIVE": "1",
        "COLUMNS": str(columns),
    }
    env |= extra
    args = ["run", "--agent", "progress_agents:SlowStartAgent", "-d", "find-gen", "-f", "numeric"]
    args += ["--limit", "1", "--seed", "0", *([] if floor else ["--no-floor"]), *options]
    r = CliRunner().invoke(app, args, env=env)
    assert r.exit_code == 0, (r.stderr[-3000:], r.exception)
    return _frames(r.stderr)


@pytest.mark.slow
def test_progress_shows_starting_then_rounds_and_calls_of_running_episodes(
    tmp_path: Path,
) -> None:
    # the agent takes 2 s to build (its host is starting), then 6 rounds of 0.5 s
    lines = [
        x for x in _run(tmp_path, 100, "-o", "start_s=2", "-o", "n_calls=6", "-o", "delay=0.5")
    ]
    bars = [x for x in lines if x.startswith("episodes ")]
    states = [BAR.split(x, maxsplit=1)[1] for x in bars if BAR.search(x)]
    starting = [i for i, x in enumerate(states) if "1 starting" in x]
    running = [
        (i, int(a), int(b))
        for i, x in enumerate(states)
        for a, b in re.findall(r"1 running \(rounds (\d+), calls (\d+)\)", x)
    ]
    assert starting, states
    assert running, states
    # starting comes first, then the episode's counters as they grew, before it ended
    assert max(starting) < min(i for i, _, _ in running)
    assert any(rounds >= 2 and calls >= 2 for _, rounds, calls in running), states
    assert max(c for _, _, c in running) <= 6


def test_progress_bar_keeps_its_width_and_fits_the_terminal(tmp_path: Path) -> None:
    lines = _run(tmp_path, 80, "-o", "n_calls=4", "-o", "delay=0.3")
    bars = [x for x in lines if x.startswith("episodes ") and BAR.search(x)]
    assert len(bars) > 3, lines
    widths = {len(BAR.search(x).group()) for x in bars}  # type: ignore[union-attr]
    assert len(widths) == 1, widths  # the bar never changes width
    assert all(len(x.rstrip()) <= 80 for x in bars), [x for x in bars if len(x.rstrip()) > 80]
    texts = {BAR.split(x, maxsplit=1)[1].strip() for x in bars}
    assert any("running (rounds" in t for t in texts), texts  # the text beside it did change


def test_a_bar_waiting_for_a_slot_says_so_and_the_floor_bar_ends_full(tmp_path: Path) -> None:
    # one slot for the run and its floor run: one of them waits while the other's episode runs
    # (the floor's bar sat at 0/N with nothing said until the main run ended)
    lines = _run(
        tmp_path, 100, "-o", "n_calls=4", "-o", "delay=0.3", floor=True,
        HARNESS_MAX_CONCURRENCY="1",
    )  # fmt: skip
    bars = [x for x in lines if x.startswith(("episodes ", "floor episodes ")) and BAR.search(x)]
    waiting = [x for x in bars if "0/1" in x and "1 queued (slots full)" in x]
    assert waiting, bars
    floor = [x for x in bars if x.startswith("floor episodes ")]
    assert floor and "1/1" in floor[-1], floor
