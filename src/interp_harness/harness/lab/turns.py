"""The lab's part of the episode loop (protocol modes `code` and `code-tools`): `LabTurn`, which
`interp_harness.harness.episode.runner.EpisodeRunner` holds and calls.

A cell's target calls take the path a command takes: the command is looked up in the
benchmark's declaration, its arguments are checked against the schema (as a tool call's are),
the budget of target calls is checked, the call goes through the episode's target client
(its `call_target`: the same time limit, the same refusals), and the call is counted (calls and
inputs) and recorded as a `target_calls` row of the message's step, in the same transaction as
the reply and the cell's own row. The lab gets the outputs read as values (harness/lab/api.py);
it never writes a record. A call past `max_target_calls` is refused in the cell
(`target.BudgetExhausted`) and the episode ends after that cell, as a text command past the
budget ends it.

A resumed episode's lab is rebuilt before its first use in the new process by replaying the
stored cells, their calls answered from the store (harness/lab/replay.py).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from interp_harness.agents.images import MAX_MESSAGE_IMAGES, ImagePart
from interp_harness.agents.protocol.cells import LAB_REF
from interp_harness.agents.protocol.tools import answer_spec, by_name, to_words
from interp_harness.agents.toolspec import ToolSpec
from interp_harness.function_store.benchmark import benchmark
from interp_harness.harness.domain.episode_end import EpisodeEnd
from interp_harness.harness.domain.spec import Budgets
from interp_harness.harness.domain.tool_checks import checked_arguments
from interp_harness.harness.lab.api import call_commands, call_value
from interp_harness.harness.lab.frames import Call, CallResult
from interp_harness.harness.lab.limits import LabLimits
from interp_harness.harness.lab.message_caps import MessageCaps
from interp_harness.harness.lab.process import LabStartError
from interp_harness.harness.lab.replay import rebuild
from interp_harness.harness.lab.session import Lab
from interp_harness.harness.store.models import Episode
from interp_harness.harness.store.repo import Store

LabFactory = Callable[[Sequence[ToolSpec], int], Lab]  # (commands, first cell number) -> Lab
MAX_CELLS_PER_MESSAGE = 20
# The parts of a cell's output, in the order they share what is left of the message's cap.


@dataclass
class CellsRun:
    """What the cells of one message did: the replies, the rows to store, and the end of the
    episode when a cell ran into the budget."""

    replies: list[str] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    cells: list[dict[str, Any]] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)  # lab_figures rows
    images: list[ImagePart] = field(default_factory=list)  # the same figures, for the agent
    end: EpisodeEnd | None = None


class Counts(Protocol):
    """The episode's counters a cell's calls add to (the loop's state)."""

    target_calls: int
    inputs: int


CallTarget = Callable[[list[str]], Awaitable[dict[str, Any]]]


class LabTurn:
    """The lab's part of one episode: its lab (started at the first cell, rebuilt from the
    store after a resume), its cells' target calls, the rows they leave, and answers that name
    a function of the lab.

    It gets from the episode loop only what it uses: the store and the episode's row to read and
    write, the target's family (its commands), the budgets, the lab factory, and four callables
    of the loop: `call_target` (a target call with the episode's time limit and refusals; a dict
    with `_outputs`, or `_rejected` when the service refused the input), `fence` (raises once
    this process no longer holds the run), `time_left` (seconds of the wall budget; None: no
    budget) and `counters` (the episode's counters to store, from the loop's state)."""

    def __init__(
        self,
        store: Store,
        episode: Episode,
        family: str,
        budgets: Budgets,
        factory: LabFactory | None,
        *,
        call_target: CallTarget,
        fence: Callable[[], None],
        time_left: Callable[[], float | None],
        counters: Callable[[Any], dict[str, Any]],
    ) -> None:
        self.store, self.ep, self.family, self.budgets = store, episode, family, budgets
        self.factory = factory
        self.call_target, self.fence = call_target, fence
        self.time_left, self.counters = time_left, counters
        self._lab: Lab | None = None
        self._caps = MessageCaps()  # what one message's cells keep, all of them together

    def commands(self) -> list[ToolSpec]:
        """The benchmark's commands, which the lab's `target` module offers."""
        return list(benchmark(self.family).commands)

    async def _get_lab(self) -> Lab:
        if self._lab is None:
            if self.factory is None:
                raise EpisodeEnd(
                    "error",
                    "lab_error",
                    category="infrastructure",
                    error="protocol mode needs a lab, and this executor offers none",
                )
            stored = self.store.lab.cells(self.ep.id)
            lab = self._lab = self.factory(self.commands(), len(stored) + 1)
            if stored:  # a resumed episode: its lab's state is rebuilt from the store
                specs = by_name(call_commands(self.commands()))
                calls = self.store.episodes.target_calls(self.ep.id)
                try:
                    await rebuild(lab, stored, calls, partial(checked_call, specs))
                except LabStartError as e:
                    raise EpisodeEnd(
                        "error", "lab_error", category="infrastructure", error=str(e)
                    ) from None
        return self._lab

    async def _lab_for_answer(self) -> Lab | None:
        """The lab an answer's `lab:NAME` reads: this process's, or after a resume the one
        rebuilt from the stored cells; None when no cell ran."""
        if self._lab is None and self.store.lab.cells(self.ep.id):
            return await self._get_lab()
        return self._lab

    async def close(self) -> None:
        lab, self._lab = self._lab, None
        if lab is not None:
            await lab.aclose()

    async def run_cells(
        self, st: Counts, step: int, cells: Sequence[tuple[int, str]], first_call: int
    ) -> CellsRun:
        """Run `cells` ((index in the message, code)) in order; target calls are numbered from
        `first_call` within the step. Raises EpisodeEnd when a target call fails (the calls
        made are stored first) or the lab cannot start."""
        out = CellsRun()
        if len(cells) > MAX_CELLS_PER_MESSAGE:
            out.replies.append(
                f"Response: Error: {len(cells)} cells in one message; at most "
                f"{MAX_CELLS_PER_MESSAGE} run, the rest were skipped."
            )
            cells = cells[:MAX_CELLS_PER_MESSAGE]
        lab = await self._get_lab()
        specs = by_name(call_commands(self.commands()))
        budgets = self.budgets
        next_idx = first_call
        for idx, code in cells:
            made: list[dict[str, Any]] = []

            async def on_call(
                frame: Call, made: list[dict[str, Any]] = made, first: int = next_idx
            ) -> CallResult:
                spec = await checked_call(specs, frame)
                if isinstance(spec, CallResult):
                    return spec
                cap = budgets.max_target_calls
                if cap is not None and st.target_calls >= cap:
                    out.end = EpisodeEnd("budget_exhausted", "target_calls", answer="")
                    return budget_spent(frame, cap)
                words = to_words(spec, frame.arguments)
                call = await self.call_target(words)
                if "_rejected" in call:
                    return refused(frame, call["_rejected"])
                made.append({"step": step, "idx": first + len(made), **call})
                st.target_calls += 1
                st.inputs += len(words)
                value, errors = call_value(spec, call["_outputs"])
                return CallResult(id=frame.id, ok=True, value=value, errors=errors)

            try:
                cell = await lab.run(code, on_call, wall_s=self.time_left())
            except LabStartError as e:
                self.store_rows(st, out.calls + made, out.cells, out.figures)
                raise EpisodeEnd(
                    "error", "lab_error", category="infrastructure", error=str(e)
                ) from None
            except EpisodeEnd:
                self.store_rows(st, out.calls + made, out.cells, out.figures)
                raise
            cell.n_calls = len(made)
            notes = [
                lab.take_resume_note(),
                *self._caps.apply(step, cell, lab.limits),
            ]
            out.replies.append(cell.reply("\n".join(n for n in notes if n) or None))
            out.cells.append(
                {
                    "step": step,
                    "idx": idx,
                    "number": cell.number,
                    "code": cell.code,
                    "status": cell.status,
                    "stdout": cell.stdout,
                    "stderr": cell.stderr,
                    "value": cell.value,
                    "error": cell.error,
                    "traceback": cell.traceback,
                    "cut": cell.cut,
                    "first_call": next_idx,
                    "n_calls": cell.n_calls,
                    "wall_s": cell.wall_s,
                }
            )
            for i, fig in enumerate(cell.figures):
                out.figures.append(
                    {"step": step, "cell_idx": idx, "index": i, "png": fig.png,
                     "width": fig.width, "height": fig.height}
                )  # fmt: skip
                if len(out.images) < MAX_MESSAGE_IMAGES:  # the rest: stored, and named in the text
                    out.images.append(ImagePart(png=fig.png, width=fig.width, height=fig.height))
            out.calls += made
            next_idx += len(made)
            if out.end is not None:
                break
        return out

    def store_rows(
        self,
        st: Counts,
        calls: list[dict[str, Any]],
        cells: list[dict[str, Any]],
        figures: list[dict[str, Any]] | None = None,
    ) -> None:
        """Calls and cells (with their figures) of a message whose reply is never stored (the
        episode ends)."""
        self.fence()
        with self.store.transaction() as tx:  # the calls with their cells and counters, or none
            for c in calls:
                tx.episodes.add_target_call(self.ep.id, _call_row(c))
            tx.lab.add_cells(self.ep.id, cells, figures or ())
            tx.episodes.update(self.ep.id, **self.counters(st))

    # ---- answers that name a function of the lab --------------------------------------------
    async def answer_text(self, text: str) -> str:
        """A final message with every fenced answer part that reads `lab:NAME` replaced by
        NAME's source from the lab."""
        spec = answer_spec(self.commands())
        for t in spec.tags if spec is not None else ():
            if not t.fence:
                continue
            pattern = re.compile(
                re.escape(t.tag)
                + r"[ \t]*:?\s*(?:```[A-Za-z]*[ \t]*\n)?\s*lab:([A-Za-z_][A-Za-z0-9_]{0,99})"
                + r"\s*(?:```)?",
            )
            m = pattern.search(text)
            if m is None:
                continue
            source = await lab_source(await self._lab_for_answer(), m.group(1))
            block = f"{t.tag}: \n```python\n{source.rstrip()}\n```\n"
            text = text[: m.start()] + block + text[m.end() :]
        return text

    async def answer_args(self, spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
        return await lab_answer_args(await self._lab_for_answer(), spec, arguments)


def sandboxed_labs(limits: LabLimits) -> LabFactory:
    """The lab factory of an episode that runs in this process: each lab in this process's
    sandboxes, with the operator's `limits`."""
    return lambda commands, first: Lab(commands, limits, first)


# ---- shared with the Inspect tasks' run_python (harness/inspect_tasks/lab_tool.py) --------------


async def checked_call(specs: dict[str, ToolSpec], frame: Call) -> ToolSpec | CallResult:
    """The declared `call` command a cell's call names, its arguments checked against the
    command's schema (counts and lengths first, the schema off the event loop); else the call's
    refusal."""
    spec = specs.get(frame.command)
    if spec is None:
        known = ", ".join(specs)
        return refused(frame, f"unknown command {frame.command[:64]!r}; known: {known}")
    if problems := await checked_arguments(spec, frame.arguments):
        return refused(frame, f"invalid arguments for {spec.name}: {problems}")
    return spec


def budget_spent(frame: Call, cap: int) -> CallResult:
    """A call past `max_target_calls` (the cell gets `target.BudgetExhausted`)."""
    error = f"the session's budget of {cap} target calls is spent"
    return CallResult(id=frame.id, ok=False, kind="budget", error=error)


async def lab_source(lab: Lab | None, name: str) -> str:
    """The source of the lab's function `name`, as an answer's code; else a comment saying why
    not (it scores as missing code)."""
    if lab is None:
        source, why = None, "no cell ran in this process"
    else:
        source, why = await lab.export(name)
    if source is None:
        return f"# lab:{name} could not be submitted: {why}\n"
    return source


async def lab_answer_args(
    lab: Lab | None, spec: ToolSpec, arguments: dict[str, Any]
) -> dict[str, Any]:
    """submit_answer's arguments with each fenced part that reads `lab:NAME` replaced by
    NAME's source from the lab."""
    out = dict(arguments)
    for t in spec.tags:
        value = out.get(t.arg)
        if t.fence and isinstance(value, str) and (m := LAB_REF.match(value)):
            out[t.arg] = await lab_source(lab, m.group(1))
    return out


def refused(frame: Call, why: str) -> CallResult:
    return CallResult(id=frame.id, ok=False, kind="refused", error=why[:2000])


def _call_row(c: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in c.items() if not k.startswith("_")}
