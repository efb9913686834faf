"""An episode's lab: the kernel process (started on the first cell, started again after one
was killed), the cells' numbering, and each cell's outcome as the agent reads it and the store
keeps it.

`Lab.run(code, on_call)` runs one cell and returns a `Cell`: what it printed and returned, cut
to the operator's cap, and how it ended: "ok", "error" (it raised, or a soft limit interrupted
it: the lab keeps its variables) or "restarted" (a hard limit, or the lab died: a fresh lab takes
the next cell, and the reply says every variable was lost). A lab that cannot be started at all
is an infrastructure failure (`LabStartError`), which ends the episode as an error.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from pydantic import BaseModel, Field

from interp_harness.agents.protocol.cells import format_cell
from interp_harness.agents.toolspec import ToolSpec
from interp_harness.harness.lab.api import module_source
from interp_harness.harness.lab.figures import Figure, accept_figures
from interp_harness.harness.lab.frames import Done
from interp_harness.harness.lab.limits import EXPORT_TIMEOUT_S, MAX_EXPORT_CHARS, LabLimits
from interp_harness.harness.lab.process import LabBroken, LabProcess, OnCall

log = logging.getLogger(__name__)

LOST = "the lab was restarted: every variable, import and file of the earlier cells was lost"
RESUMED = (
    "Note: the harness resumed this session in a fresh lab, so the variables of the earlier "
    "cells are gone; run again what you need."
)


class Cell(BaseModel):
    """One cell's outcome (a `lab_cells` row, less where it sits in the episode)."""

    number: int
    code: str
    status: str  # ok | error | restarted
    stdout: str = ""
    stderr: str = ""
    value: str | None = None
    error: str | None = None
    traceback: str | None = None
    cut: dict[str, int] = Field(default_factory=dict)  # characters left out, per part
    n_calls: int = 0
    wall_s: float = 0.0
    figures: list[Figure] = Field(default_factory=list)  # checked PNGs (harness/lab/figures.py)
    figure_notes: list[str] = Field(default_factory=list)  # the figures refused, and why

    def reply(self, note: str | None = None) -> str:
        """The text the agent reads for this cell."""
        calls = f"{self.n_calls} target call{'s' if self.n_calls != 1 else ''}"
        how = {
            "ok": f"ran ({calls}).",
            "error": f"raised an error ({calls}).",
            "restarted": f"was stopped ({calls}); {LOST}.",
        }[self.status]
        parts = {
            "stdout": self.stdout,
            "stderr": self.stderr,
            "value": self.value or "",
            "error": self.error or "",
            "traceback": self.traceback or "",
        }
        lines = [f.line(k) for k, f in enumerate(self.figures, 1)] + self.figure_notes
        text = format_cell(self.number, how, parts, self.cut, lines)
        return f"{note}\n{text}" if note else text


def _cut(text: str | None, cap: int, dropped: int = 0) -> tuple[str, int]:
    text = text or ""
    if len(text) <= cap:
        return text, dropped
    return text[:cap], len(text) - cap + dropped


class Lab:
    """One episode's lab."""

    def __init__(self, commands: Sequence[ToolSpec], limits: LabLimits, first_cell: int = 1):
        self.limits = limits
        self.source = module_source(commands)
        self.next_number = first_cell
        # cells ran before this process: their state is gone, unless a replay rebuilds it
        # (harness/lab/replay.py, which sets or clears the note)
        self.note: str | None = RESUMED if first_cell > 1 else None
        self._proc: LabProcess | None = None

    async def _process(self) -> LabProcess:
        if self._proc is None or not self._proc.alive:
            if self._proc is not None:
                if self._proc.killed:  # stopped between cells (LabProcess._watch_idle)
                    self.note = f"Note: {self._proc.killed}; {LOST}."
                await self._proc.close()
            self._proc = await LabProcess.start(self.source, self.limits)
        return self._proc

    async def run(
        self, code: str, on_call: OnCall, wall_s: float | None = None, number: int | None = None
    ) -> Cell:
        """Run one cell. `on_call` answers its target calls (the episode meters and records
        them, and says how many it answered: `Cell.n_calls` is filled in by the caller).
        `number`: a stored cell's own number, when a replay runs it again."""
        if number is None:
            number = self.next_number
            self.next_number += 1
        proc = await self._process()
        cap = self.limits.max_output_chars
        t0 = time.monotonic()
        try:
            done: Done = await proc.run_cell(number, code, on_call, wall_s)
        except LabBroken as e:
            self._proc = None
            log.info("lab cell %d stopped: %s", number, e.reason)
            return Cell(
                number=number,
                code=code,
                status="restarted",
                error=e.reason[:cap],
                wall_s=time.monotonic() - t0,
            )
        cut: dict[str, int] = {}
        parts: dict[str, str | None] = {}
        for name, text, dropped in (
            ("stdout", done.stdout, done.stdout_cut),
            ("stderr", done.stderr, done.stderr_cut),
            ("value", done.value, 0),
            ("error", done.error, 0),
            ("traceback", done.traceback, 0),
        ):
            kept, n = _cut(text, cap, dropped)
            parts[name] = kept if text is not None or kept else None
            if n:
                cut[name] = n
        figures, notes = accept_figures(
            done.figures, self.limits.max_figures, self.limits.max_figure_kb * 1024
        )
        if notes:
            log.info("lab cell %d: %d figures refused: %s", number, len(notes), notes[0])
        return Cell(
            number=number,
            code=code,
            status="error" if done.error else "ok",
            stdout=parts["stdout"] or "",
            stderr=parts["stderr"] or "",
            value=parts["value"],
            error=parts["error"],
            traceback=parts["traceback"],
            cut=cut,
            wall_s=time.monotonic() - t0,
            figures=figures,
            figure_notes=notes,
        )

    def take_resume_note(self) -> str | None:
        """The note for the first cell after a resume whose lab was not rebuilt (once)."""
        note, self.note = self.note, None
        return note

    async def reset(self) -> None:
        """Discard the process and its state: the next cell starts a fresh one."""
        if self._proc is not None:
            await self._proc.close()
            self._proc = None

    async def export(self, name: str) -> tuple[str | None, str | None]:
        """(source, None) for a function defined in the lab, or (None, why not)."""
        if self._proc is None or not self._proc.alive:
            return None, f"no function {name!r}: the lab holds no variables (it was restarted)"
        try:
            got = await self._proc.export(name, EXPORT_TIMEOUT_S)
        except LabBroken as e:
            self._proc = None
            return None, e.reason
        if got.source is None:
            return None, got.error or "the lab could not export it"
        if len(got.source) > MAX_EXPORT_CHARS:
            size = len(got.source)
            return None, f"its source is {size:,} characters (at most {MAX_EXPORT_CHARS:,})"
        return got.source, None

    async def aclose(self) -> None:
        if self._proc is not None:
            await self._proc.close()
            self._proc = None
