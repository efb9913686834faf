"""`harness run`'s progress: one bar per run (the run, its floor run), each saying what its
episodes are doing now: preparing, starting (agent hosts), running (with their rounds and target
calls so far), scoring, or queued for a slot. Every column has a fixed width that fits the
terminal, so the bar never changes width as the text beside it changes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column

from interp_harness.harness.runs.scheduler import RunActivity, Scheduler
from interp_harness.harness.store import RUN_TERMINAL
from interp_harness.harness.store.models import EPISODE_TERMINAL
from interp_harness.harness.store.repo import Store

POLL_S = 0.2
ELAPSED = 7  # 0:00:00
BAR_MIN, BAR_MAX = 10, 40
STATE_WANTED = 56  # room for "2 running (rounds 14, calls 30), 1 starting, 37 queued"


def state_text(
    act: RunActivity,
    counts: dict[str, int],
    counters: dict[str, tuple[int, int]],
    statuses: dict[str, str],
) -> str:
    """What the run's episodes are doing now. `counts`: episodes by status; `counters`: rounds
    and target calls of each running episode; `statuses`: the status of each episode in flight
    (queued: its agent host is starting; ended: it is being scored)."""
    if act.preparing or not counts:  # not claimed yet, or its episodes not stored yet
        return "preparing its targets and their services"
    parts = []
    if counters:
        rounds = sum(r for r, _ in counters.values())
        calls = sum(c for _, c in counters.values())
        parts.append(f"{len(counters)} running (rounds {rounds}, calls {calls})")
    starting = sum(1 for s in statuses.values() if s == "queued")
    scoring = sum(1 for s in statuses.values() if s in EPISODE_TERMINAL)
    if starting:
        parts.append(f"{starting} starting")
    if scoring:
        parts.append(f"{scoring} scoring")
    queued = counts.get("queued", 0) - starting
    if queued > 0:
        full = " (slots full)" if act.slots_used >= act.slots else ""
        parts.append(f"{queued} queued{full}")
    return ", ".join(parts)


def make_progress(
    console: Console, labels: Sequence[str], totals: Sequence[int], quiet: bool
) -> Progress:
    """The bars, their widths fixed from the terminal's width now."""
    label_w = max(len(x) for x in labels)
    count_w = len(f"{max(totals)}/{max(totals)}")
    rest = console.width - label_w - count_w - ELAPSED - 4  # 4 spaces between 5 columns
    bar_w = max(BAR_MIN, min(BAR_MAX, rest - STATE_WANTED))
    state_w = max(
        10, rest - bar_w - 1
    )  # one column short: a full line would wrap on some terminals
    return Progress(
        TextColumn("{task.description}", table_column=Column(width=label_w, no_wrap=True)),
        BarColumn(bar_width=bar_w),
        MofNCompleteColumn(table_column=Column(width=count_w, justify="right", no_wrap=True)),
        TimeElapsedColumn(table_column=Column(width=ELAPSED, no_wrap=True)),
        TextColumn(
            "{task.fields[state]}",
            table_column=Column(width=state_w, no_wrap=True, overflow="ellipsis"),
        ),
        console=console,
        disable=quiet,
    )


def _statuses(store: Store, ids: Sequence[str]) -> dict[str, str]:
    """The status of each of `ids` (a few: the episodes in flight that are not running)."""
    eps = (store.episodes.get(eid, with_answer=False) for eid in ids)
    return {ep.id: ep.status for ep in eps if ep is not None}


async def follow(
    store: Store,
    sched: Scheduler,
    runs: Sequence[Any],
    progress: Progress,
    labels: Sequence[str],
    totals: Sequence[int],
) -> None:
    """Update the bars until every run has ended and this scheduler holds none of them."""
    with progress:
        tasks = [
            progress.add_task(lbl, total=n, state="") for lbl, n in zip(labels, totals, strict=True)
        ]
        while True:
            ended = True
            for task, r in zip(tasks, runs, strict=True):
                counts = store.episodes.counts(r.id)
                done = sum(n for s, n in counts.items() if s not in ("queued", "running"))
                act = sched.activity(r.id)
                counters = store.episodes.running_counters(r.id)
                statuses = _statuses(store, sorted(act.in_flight - counters.keys()))
                state = state_text(act, counts, counters, statuses)
                progress.update(task, completed=done, state=state)
                current = store.runs.get(r.id)
                # a cancelled run's episodes here are still being ended when its status is
                ended &= current is None or (
                    current.status in RUN_TERMINAL and not sched.holds(r.id)
                )
            if ended:
                break
            await asyncio.sleep(POLL_S)
