"""A benchmark's commands as Inspect tools (protocol "tools"), bound to one sample's target.

A call tool runs the text command it stands for (`to_words`) on the sandboxed target service and
returns the harness's tool result text byte for byte (`format_reply(outputs, "default", ...)`),
as `harness run --protocol-mode tools` does (harness/episode/runner.py `_tool_turn`). The answer tool
(`submit_answer`) returns the tagged final answer text (`to_answer`), which react() makes the
completion; it is also kept in the sample's store. Counters live in the sample's store (the
keys below), so they hold whichever Inspect agent calls the tools."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from inspect_ai.model import Content, ModelOutput
from inspect_ai.tool import ToolDef, ToolError, ToolParams
from inspect_ai.util import store

from interp_harness.agents import protocol as proto
from interp_harness.agents.protocol import tools as tool_text
from interp_harness.agents.toolspec import ToolSpec
from interp_harness.function_store.benchmark import benchmark
from interp_harness.function_store.models import CallOutput
from interp_harness.harness.domain.tool_checks import argument_errors
from interp_harness.harness.episode.runner import target_category
from interp_harness.harness.inspect_tasks.keys import (
    ANSWER,
    END_REASON,
    INPUTS,
    TARGET_CALLS,
    tagged,
)
from interp_harness.harness.inspect_tasks.resources import resources


class TargetCallFailed(RuntimeError):
    """A target call failed on the target's or the sandbox's side (not the agent's input)."""


def final_output(output: ModelOutput, answer: str) -> ModelOutput:
    """The sample's output with `answer` as its completion. No answer (a budget ended the sample):
    an output without choices, since Inspect fills an empty completion from the last message."""
    if answer:
        output.completion = answer
        return output
    return ModelOutput(model=output.model, usage=output.usage)


def checked(spec: ToolSpec, arguments: dict[str, Any]) -> None:
    # Inspect validates against the same schema; this keeps the harness's own wording and its
    # extra checks (tool_checks) so a result never differs from `harness run`'s
    if problems := argument_errors(spec, arguments):
        raise ToolError(f"invalid arguments for {spec.name}: {problems}")


class InputRefused(Exception):
    """The target service refused the agent's input (`detail`: what the agent reads)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def calls_spent(max_calls: int | None) -> bool:
    """Whether the sample's budget of target calls is spent; if so, the sample's end reason is
    set. The default solver then ends the sample without an answer, as the harness ends the
    episode; another solver learns it from the refusal."""
    if max_calls is None or store().get(TARGET_CALLS, 0) < max_calls:
        return False
    store().set(END_REASON, "target_calls")
    return True


async def metered_call(target_id: str, words: list[str]) -> list[CallOutput]:
    """One target call on the sandboxed service, counted in the sample's store (calls, inputs)
    once it ran. InputRefused: the service refused the agent's input (not counted);
    TargetCallFailed: the target or its sandbox failed (a sample error, never a score)."""
    try:
        outputs = await resources().call(target_id, words)
    except Exception as e:
        if getattr(e, "category", None) == "agent":
            raise InputRefused(str(getattr(e, "detail", e))) from None
        # categorised as `harness run` categorises it
        text = f"target call failed: {type(e).__name__}: {e}"
        raise TargetCallFailed(tagged(target_category(e), text)) from e
    counters = store()
    counters.set(TARGET_CALLS, counters.get(TARGET_CALLS, 0) + 1)
    counters.set(INPUTS, counters.get(INPUTS, 0) + len(words))
    return outputs


def _call_tool(
    spec: ToolSpec, target_id: str, decimals: int | None, max_calls: int | None
) -> Callable[..., Awaitable[str]]:
    async def execute(**kwargs: Any) -> str:
        checked(spec, kwargs)
        if calls_spent(max_calls):
            # the call is not run (a LimitExceededError raised in a tool would only become a
            # tool error too)
            raise ToolError(
                f"target-call budget exhausted: {max_calls} calls (max_target_calls); "
                "this call did not run"
            )
        try:
            outputs = await metered_call(target_id, tool_text.to_words(spec, kwargs))
        except InputRefused as e:
            raise ToolError(proto.format_error(e.detail)) from None
        return proto.format_reply(outputs, "default", decimals=decimals)

    return execute


Arguments = dict[str, Any]


def _answer_tool(
    spec: ToolSpec, resolve: Callable[[Arguments], Awaitable[Arguments]] | None
) -> Callable[..., Awaitable[str]]:
    async def execute(**kwargs: Any) -> str:
        checked(spec, kwargs)
        if resolve is not None:  # protocol "code": a part may name a function of the lab
            kwargs = await resolve(kwargs)
        answer = tool_text.to_answer(spec, kwargs)
        store().set(ANSWER, answer)
        return answer

    return execute


def tool_def(
    spec: ToolSpec, fn: Callable[..., Awaitable[str | list[Content]]], parallel: bool | None = None
) -> ToolDef:
    """`spec` as an Inspect tool run by `fn` (`parallel=False`: never run beside another call)."""
    return ToolDef(
        fn,
        name=spec.name,
        description=spec.tool_description(),
        parameters=ToolParams.model_validate(spec.parameters),
        parallel=parallel,
        max_output=0,  # the harness's reply, never cut by Inspect's 16 kB default
    )


def sample_tools(
    target_id: str,
    family: str,
    max_target_calls: int | None,
    resolve: Callable[[Arguments], Awaitable[Arguments]] | None = None,
) -> tuple[list[ToolDef], ToolDef]:
    """The family's commands as Inspect tools for one target: (call tools, the answer tool).
    `resolve`: what the answer's arguments become before they are rendered (protocol "code")."""
    record = benchmark(family)
    answer = tool_text.answer_spec(record.commands)
    if answer is None:
        raise ValueError(f"family {family!r} declares no answer command: use protocol 'text'")
    calls = [
        tool_def(s, _call_tool(s, target_id, record.reply_decimals, max_target_calls))
        for s in record.commands
        if s.kind == "call"
    ]
    return calls, tool_def(answer, _answer_tool(answer, resolve))
