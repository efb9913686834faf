"""The solvers of protocols "tools" and "code": a setup step that gives every sample its target's
tools (so an agent passed with `--solver` finds them in `state.tools`), and the default agent,
Inspect's `react()` with `submit_answer` as its submit tool. Protocol "code" adds `run_python`,
a cell of the sample's lab (harness/inspect_tasks/lab_tool.py)."""

from __future__ import annotations

from inspect_ai.agent import AgentState, AgentSubmit, as_solver, react
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolDef
from inspect_ai.util import store

from interp_harness.harness.episode import prompts
from interp_harness.harness.inspect_tasks.keys import ANSWER, END_REASON, ROUNDS
from interp_harness.harness.inspect_tasks.lab_tool import Figures, code_tools
from interp_harness.harness.inspect_tasks.tools import final_output, sample_tools


def _rounds(messages: list) -> int:
    """A round is one assistant message, as in the harness."""
    return sum(isinstance(m, ChatMessageAssistant) for m in messages)


def _tools(
    state: TaskState, max_target_calls: int | None, code: bool, figures: Figures = "image"
) -> tuple[list[ToolDef], ToolDef]:
    """The sample's tools: (calls, with `run_python` in protocol "code"; the answer)."""
    target_id, family = str(state.sample_id), state.metadata["family"]
    if code:
        return code_tools(target_id, family, max_target_calls, state.uuid, figures)
    return sample_tools(target_id, family, max_target_calls)


@solver
def tools_setup(
    max_target_calls: int | None = None, code: bool = False, figures: Figures = "image"
) -> Solver:
    """The harness's tools-mode system prompt and the sample's tools (calls, then the answer)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        calls, answer = _tools(state, max_target_calls, code, figures)
        if not any(isinstance(m, ChatMessageSystem) for m in state.messages):
            state.messages.insert(0, ChatMessageSystem(content=prompts.system_prompt("tools")))
        state.tools = [*(t.as_tool() for t in calls), answer.as_tool()]
        return state

    return solve


@solver
def harness_react(
    max_rounds: int = 20,
    max_target_calls: int | None = None,
    code: bool = False,
    figures: Figures = "image",
) -> Solver:
    """Inspect's `react()` on the sample's tools; `submit_answer` ends it and its rendered text is
    the completion. `max_rounds` caps the assistant messages: after the last one (its tool calls
    have run) the sample ends without an answer, as a harness episode ends "budget_exhausted";
    so does a call beyond `max_target_calls` (not run)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        calls, answer = _tools(state, max_target_calls, code, figures)

        async def on_continue(agent_state: AgentState) -> bool:
            counters = store()
            rounds = _rounds(agent_state.messages)
            counters.set(ROUNDS, rounds)
            if counters.get(END_REASON):  # a budget the tools count ran out
                return False
            if rounds >= max_rounds:
                counters.set(END_REASON, "rounds")
                return False
            return True

        agent = react(
            prompt=None,  # the system prompt is the harness's, added by tools_setup
            tools=calls,
            submit=AgentSubmit(tool=answer, answer_only=True, keep_in_messages=True),
            on_continue=on_continue,
        )
        state = await as_solver(agent)(state, generate)
        counters = store()
        counters.set(ROUNDS, _rounds(state.messages))
        # the final answer is what submit_answer rendered; none (rounds spent): "" as the harness
        state.output = final_output(state.output, counters.get(ANSWER, ""))
        return state

    return solve
