"""Protocol "code" of the Inspect tasks: the sample's tools are protocol "tools"'s plus
`run_python`, whose cells run in one lab per sample (harness/lab: the same sandboxed process,
`target` module, call checks and answers naming a lab function as an episode's in protocol mode
`code-tools`; docs/code-mode.md).

A cell's target calls are metered as the call tools' are (`metered_call`: the sample's store
counts calls and inputs, `max_target_calls` refuses the call past it with `BudgetExhausted` in
the cell and ends the sample as `target_calls`). A lab is made at the sample's first cell and
closed by the task's cleanup when the sample ends (the cleanup runs after each attempt, error or
not); the run's end closes any left (harness/inspect_tasks/hooks.py).
"""

from __future__ import annotations

import base64
from typing import Any, Literal

from inspect_ai.log import transcript
from inspect_ai.model import Content, ContentImage, ContentText
from inspect_ai.solver import TaskState
from inspect_ai.tool import ToolDef

from interp_harness.agents.protocol import tools as tool_text
from interp_harness.agents.protocol.cells import RUN_PYTHON_SPEC
from interp_harness.function_store.benchmark import benchmark
from interp_harness.harness.inspect_tasks.keys import tagged
from interp_harness.harness.inspect_tasks.resources import resources
from interp_harness.harness.inspect_tasks.tools import (
    InputRefused,
    calls_spent,
    checked,
    metered_call,
    sample_tools,
    tool_def,
)
from interp_harness.harness.lab.api import call_commands, call_value
from interp_harness.harness.lab.frames import Call, CallResult
from interp_harness.harness.lab.limits import LabLimits
from interp_harness.harness.lab.message_caps import MessageCaps
from interp_harness.harness.lab.process import LabStartError
from interp_harness.harness.lab.session import Cell, Lab
from interp_harness.harness.lab.turns import (
    budget_spent,
    checked_call,
    lab_answer_args,
    refused,
)

# how a cell's figures reach the model: "image" (each as a PNG image, beside the text that names
# it) or "text" (the text alone, for a model that takes no images); the task parameter `figures`
Figures = Literal["image", "text"]
FIGURES: tuple[Figures, ...] = ("image", "text")


class LabFailed(RuntimeError):
    """The sample's lab could not start (infrastructure: a sample error, never a score)."""


class SampleLabs:
    """This process's labs, one per running sample, by the sample's uuid (`TaskState.uuid`:
    unique per sample and epoch)."""

    def __init__(self) -> None:
        self._labs: dict[str, Lab] = {}
        self._caps: dict[str, MessageCaps] = {}

    def caps(self, key: str) -> MessageCaps:
        """The sample's running totals of what one model message's cells keep."""
        return self._caps.setdefault(key, MessageCaps())

    def get(self, key: str) -> Lab | None:
        return self._labs.get(key)

    def lab(self, key: str, family: str) -> Lab:
        """The sample's lab, made on first use with the operator's limits (HARNESS_LAB_*)."""
        if key not in self._labs:
            limits = LabLimits.from_settings(resources().settings)
            self._labs[key] = Lab(benchmark(family).commands, limits)
        return self._labs[key]

    async def close(self, key: str) -> None:
        self._caps.pop(key, None)
        lab = self._labs.pop(key, None)
        if lab is not None:
            await lab.aclose()

    async def aclose(self) -> None:
        """Close every lab (the run has ended)."""
        for key in list(self._labs):
            await self.close(key)


LABS = SampleLabs()


async def close_sample_lab(state: TaskState) -> None:
    """The task's cleanup: the sample's lab ends with it."""
    await LABS.close(state.uuid)


def _message_number() -> int:
    """Which model message of the sample the tool call answers: the model events so far."""
    return sum(1 for e in transcript().events if e.event == "model")


def _run_python(
    target_id: str, family: str, max_calls: int | None, key: str, figures: Figures
) -> ToolDef:
    specs = {s.name: s for s in call_commands(benchmark(family).commands)}

    async def execute(code: str) -> str | list[Content]:
        checked(RUN_PYTHON_SPEC, {"code": code})
        made = 0

        async def on_call(frame: Call) -> CallResult:
            nonlocal made
            spec = await checked_call(specs, frame)
            if isinstance(spec, CallResult):
                return spec
            if calls_spent(max_calls):
                return budget_spent(frame, max_calls or 0)
            try:
                outputs = await metered_call(target_id, tool_text.to_words(spec, frame.arguments))
            except InputRefused as e:
                return refused(frame, e.detail)
            made += 1
            value, errors = call_value(spec, outputs)
            return CallResult(id=frame.id, ok=True, value=value, errors=errors)

        lab = LABS.lab(key, family)
        try:
            # a failed target call (TargetCallFailed) ends the cell, its lab and the sample
            cell = await lab.run(code, on_call)
        except LabStartError as e:
            raise LabFailed(tagged("infrastructure", f"the lab could not start: {e}")) from e
        cell.n_calls = made
        # the run_python calls of one model message share its caps, as a code-tools step's do
        notes = [lab.take_resume_note(), *LABS.caps(key).apply(_message_number(), cell, lab.limits)]
        return cell_content(cell, "\n".join(n for n in notes if n) or None, figures)

    # never beside another call of the message: one lab runs one cell at a time
    return tool_def(RUN_PYTHON_SPEC, execute, parallel=False)


def cell_content(cell: Cell, note: str | None, figures: Figures) -> str | list[Content]:
    """A cell's reply for the model: its text (which names each figure, `[figure 1: 640x480
    PNG]`), then with `figures="image"` each figure the caps kept, as a PNG image. Inspect puts
    the images where the model's API takes them (in the tool result, or in a user message after
    it, as the native `openai` agent does)."""
    text = cell.reply(note)
    if figures != "image" or not cell.figures:
        return text
    images = [
        ContentImage(image="data:image/png;base64," + base64.b64encode(f.png).decode())
        for f in cell.figures
    ]
    return [ContentText(text=text), *images]


def code_tools(
    target_id: str, family: str, max_target_calls: int | None, key: str, figures: Figures = "image"
) -> tuple[list[ToolDef], ToolDef]:
    """Protocol "tools"'s tools for one sample (`key`: its uuid) with `run_python` after the
    call tools, and an answer tool whose fenced parts may name a function of the lab (`lab:f`)."""
    answer_spec = tool_text.answer_spec(benchmark(family).commands)

    async def resolve(arguments: dict[str, Any]) -> dict[str, Any]:
        assert answer_spec is not None  # sample_tools refuses a family without one
        return await lab_answer_args(LABS.get(key), answer_spec, arguments)

    calls, answer = sample_tools(target_id, family, max_target_calls, resolve)
    return [*calls, _run_python(target_id, family, max_target_calls, key, figures)], answer
