"""The episode loop: one agent interprets one target through the PYTHON(...) text protocol.

Crash safety: the loop keeps no state that is not in the store. Each turn it reads where the
episode stands from its last stored message: after a user message the agent speaks (its message
is stored before anything else happens); after an assistant message that message's commands are
executed and the reply, the target calls and the counters are stored in one transaction. A killed
process therefore resumes at the right place: an agent message already stored is not asked for
again, and its commands run on resume exactly once as far as the store is concerned.

Round cap: `max_rounds` counts assistant messages. In protocol mode "find-compat" the
loop grants one extra round, because FIND's check (`round_count > 20` after the increment) lets 21
assistant messages through; in "default" mode the cap is exactly `max_rounds`. Method
"single_round" (FIND's --single_round) stops after the second assistant message, whose text is the
answer whether or not it has a [DESCRIPTION] tag, as FIND does.

Protocol mode "tools": the agent is offered the benchmark's commands as tools (its record's
`commands`) and answers with tool calls. A call runs the text command it stands for (so its
result is the text protocol's reply, byte for byte) and each result is stored as a `tool`
message, with a row per call in `tool_calls`, in the same transaction as the target calls;
`submit_answer` ends the episode with the answer rendered as text, which the same scorers score.
A call to an unknown tool or with arguments against the schema is answered as a tool error the
agent can correct. Budgets count as in the text modes (a round is one assistant message).

Protocol modes "code" and "code-tools": the episode also has a lab, a sandboxed Python process
(harness/lab/), started on the first cell. In "code" the ```python blocks of an assistant message
run as cells after its PYTHON(...) commands; in "code-tools" the `run_python` tool runs one cell.
A cell's target calls are metered and recorded like commands by the episode's `LabTurn`
(harness/lab/turns.py), and its reply and row are stored with the step. A final message runs no
cells; its fenced answer part may name a function of the lab (`lab:f`), whose source is
submitted.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from interp_harness.agents import protocol as proto
from interp_harness.agents.base import Agent, AgentError, check_usage
from interp_harness.agents.base import Message as AgentMessage
from interp_harness.agents.host_protocol import clean_call, valid_unicode
from interp_harness.agents.images import MAX_MESSAGE_IMAGES, ImagePart, recent_images
from interp_harness.agents.protocol import tools as tool_text
from interp_harness.agents.protocol.cells import RUN_PYTHON, RUN_PYTHON_SPEC, split_cells
from interp_harness.agents.toolspec import ToolCall, ToolSpec
from interp_harness.evaluator.api import EpisodeStats, ScoreResult
from interp_harness.evaluator.scorer import ScoringContext
from interp_harness.function_store.benchmark import benchmark
from interp_harness.harness.agent_host.errors import agent_traceback
from interp_harness.harness.domain.episode_end import EpisodeEnd
from interp_harness.harness.domain.spec import CODE_MODES, TOOL_MODES
from interp_harness.harness.domain.tool_checks import MAX_TOOL_CALLS, checked_arguments
from interp_harness.harness.episode import prompts
from interp_harness.harness.episode.context import EpisodeContext, ScoreHook
from interp_harness.harness.lab.prompt import lab_note
from interp_harness.harness.lab.turns import LabTurn
from interp_harness.harness.sandbox.code_runner import run_in_sandbox
from interp_harness.harness.store.models import Episode
from interp_harness.harness.store.models import Message as MessageRow

log = logging.getLogger(__name__)

_PARSE_INLINE_CHARS = 20_000  # messages parsed on the event loop; longer ones in a thread

NO_TOOL_HINT = (
    "No tool call found in your message. Run experiments by calling the tools; give your final "
    "answer by calling {submit}."
)
NO_COMMAND_HINT = (
    "No command found in your message. Call the function with "
    f"PYTHON({prompts.DIR2FUNC} input1 input2 ...), or give your final answer starting with "
    "[DESCRIPTION]: ."
)
NO_CELL_HINT = (
    "No command and no ```python cell found in your message. Run code in the lab in a block "
    "that starts with a line ```python and ends with a line ```, call the function with "
    f"PYTHON({prompts.DIR2FUNC} input1 input2 ...), or give your final answer starting with "
    "[DESCRIPTION]: ."
)


def default_score_hook() -> ScoreHook | None:
    """`interp_harness.evaluator.scoring.score_episode` when the evaluator provides it, else no
    scoring."""
    try:
        from interp_harness.evaluator.scoring import score_episode  # type: ignore[attr-defined]
    except ImportError:
        return None
    return score_episode


LOST = "lost"  # what run() returns when the process lost the run's lease: nothing was recorded


class LeaseLost(Exception):
    """This process no longer holds the episode's run (another may have taken it over)."""


@dataclass
class _State:
    last_step: int
    last_role: str
    last_content: str
    last_tool_calls: list[ToolCall]
    conversation: list[AgentMessage]  # what the agent sees next (kept incrementally: O(1)/step)
    rounds: int
    target_calls: int
    inputs: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


__all__ = ["LOST", "EpisodeRunner", "LeaseLost", "default_score_hook", "offered_tools"]


def offered_tools(family: str, mode: str) -> list[ToolSpec]:
    """The tools an episode offers in protocol `mode`: the benchmark's commands in "tools" and
    "code-tools", with the lab's `run_python` in "code-tools"; none in the text modes. The MCP
    server lists the same (harness/mcp/server.py)."""
    tools = list(benchmark(family).commands) if mode in TOOL_MODES else []
    if mode == "code-tools":
        tools.append(RUN_PYTHON_SPEC)
    return tools


class EpisodeRunner:
    """Runs (or resumes) one stored episode to its end, then scores it."""

    def __init__(self, ctx: EpisodeContext, episode: Episode, agent: Agent) -> None:
        """`ctx`: what the run gives the episode (harness/episode/context.py); `agent`: the
        episode's agent, built for it by the caller."""
        self.ctx, self.ep, self.agent = ctx, episode, agent
        # the context's most read parts, by their short names
        self.store, self.target, self.spec = ctx.store, ctx.target, ctx.spec
        self._inputs_sent = 0  # inputs of the calls made (budgets.max_inputs); set on load
        self.client = ctx.client
        self.should_stop, self.owns = ctx.should_stop, ctx.owns
        self.mode = self.spec.protocol.mode
        self.method = self.spec.protocol.method
        self.tools = offered_tools(self.target.family, self.mode)
        # the lab's part of the loop: what it may use of this runner, passed explicitly
        self.lab = LabTurn(
            self.store,
            episode,
            self.target.family,
            self.spec.budgets,
            ctx.lab_factory,
            call_target=self._call_target,
            fence=self._fence,
            time_left=self._time_left,
            counters=self._counters,
        )

    # ---- public -----------------------------------------------------------------------------
    async def run(self) -> str:
        """Run to the end; returns the episode's final status (LOST, with nothing more recorded,
        once this process no longer holds the run). Scores completed episodes."""
        ep = self.ep
        if not self.owns():
            return LOST
        if ep.status in ("completed", "budget_exhausted"):
            await self._score_if_needed(ep.final_answer or "")
            return ep.status
        if ep.status in ("error", "cancelled"):
            return ep.status
        self.store.episodes.start(ep.id, ep.run_id)
        self._t0 = time.monotonic()
        self._active0 = ep.active_s
        try:
            try:
                end = await self._loop()
            finally:
                await self.lab.close()
        except EpisodeEnd as e:
            end = e
        except LeaseLost:
            return LOST
        except asyncio.CancelledError:
            # Cancelled with its run: record it. A server shutting down leaves it "running" so
            # that the next start resumes it.
            if self.should_stop() and self.owns():
                self._finish(EpisodeEnd("cancelled", "cancelled"))
            raise
        except Exception as e:  # a bug or a store failure: never a score
            log.exception("episode %s failed", ep.id)
            end = EpisodeEnd("error", "exception", category="infrastructure", error=_describe(e))
        if not self.owns():
            return LOST
        self._finish(end)
        if end.status in ("completed", "budget_exhausted"):
            await self._score_if_needed(end.answer or "")
        return end.status

    # ---- the loop ---------------------------------------------------------------------------
    def _fence(self) -> None:
        if not self.owns():
            raise LeaseLost(self.ep.run_id)

    def _elapsed(self) -> float:
        return self._active0 + (time.monotonic() - self._t0)

    def _time_left(self) -> float | None:
        """Seconds left of the wall-time budget; None when there is none."""
        wall = self.spec.budgets.max_wall_s
        return None if wall is None else max(0.0, wall - self._elapsed())

    def _round_cap(self) -> int:
        if self.method == "single_round":
            return 2
        cap = self.spec.budgets.max_rounds
        return cap + 1 if self.mode == "find-compat" else cap

    def _prompt(self) -> str:
        ex = self.target.exemplars if self.method in ("exemplars", "single_round") else None
        text = prompts.task_prompt(self.target.public.prompt_family, ex)
        if self.tools:
            text += prompts.tools_note(self.tools)
        if self.mode in CODE_MODES:
            text += lab_note(self.lab.commands(), self.ctx.lab_limits, tools=bool(self.tools))
        return text

    @property
    def _text_mode(self) -> proto.Mode:
        """How the text of a message is read: FIND's way in "find-compat", else ours."""
        return "find-compat" if self.mode == "find-compat" else "default"

    def _load_state(self) -> _State:
        msgs = self.store.episodes.messages(self.ep.id)
        if not msgs:
            self.store.episodes.add_messages(
                self.ep.id,
                [
                    {
                        "step": 0,
                        "role": "system",
                        "content": prompts.system_prompt(
                            "tools" if self.mode in TOOL_MODES else self._text_mode
                        ),
                    },
                    {"step": 1, "role": "user", "content": self._prompt()},
                ],
            )
            msgs = self.store.episodes.messages(self.ep.id)
        calls = self.store.episodes.target_calls(self.ep.id)
        self._inputs_sent = sum(len(c.inputs) for c in calls)  # budgets.max_inputs counts them
        return _State(
            last_step=msgs[-1].step,
            last_role=msgs[-1].role,
            last_content=msgs[-1].content,
            last_tool_calls=[ToolCall.model_validate(c) for c in msgs[-1].tool_calls],
            conversation=self._conversation(msgs, self._stored_images()),
            rounds=sum(m.role == "assistant" for m in msgs),
            target_calls=len(calls),
            inputs=sum(len(c.inputs) for c in calls),
            prompt_tokens=sum(m.prompt_tokens for m in msgs),
            completion_tokens=sum(m.completion_tokens for m in msgs),
            cost_usd=sum(m.cost_usd for m in msgs),
        )

    def _counters(self, st: _State) -> dict[str, Any]:
        return {
            "rounds": st.rounds,
            "target_calls": st.target_calls,
            "inputs": st.inputs,
            "prompt_tokens": st.prompt_tokens,
            "completion_tokens": st.completion_tokens,
            "cost_usd": st.cost_usd,
            "active_s": self._elapsed(),
        }

    def _stored_images(self) -> dict[int, list[ImagePart]]:
        """The stored figures by the step of the reply that carried them: in mode `code` the
        user message after the cell's message, in `code-tools` its tool call's result."""
        if self.mode not in CODE_MODES:
            return {}
        out: dict[int, list[ImagePart]] = {}
        for f in self.store.lab.figures(self.ep.id):
            step = f.step + 1 + (f.cell_idx if self.mode == "code-tools" else 0)
            if len(kept := out.setdefault(step, [])) < MAX_MESSAGE_IMAGES:  # as when it ran
                kept.append(ImagePart(png=f.png, width=f.width, height=f.height))
        return out

    @staticmethod
    def _conversation(
        msgs: list[MessageRow], images: dict[int, list[ImagePart]] | None = None
    ) -> list[AgentMessage]:
        """What the agent sees: everything since the last context reset (FIND's newSession),
        with the figures of the code modes' replies (`images`, by step)."""
        conv: list[AgentMessage] = []
        for m in msgs:
            if m.role == "user" and m.resets_context:
                conv = conv[:1]  # keep the system prompt
            conv.append(
                AgentMessage(
                    role=m.role,  # type: ignore[arg-type]
                    content=m.content,
                    tool_calls=m.tool_calls,  # type: ignore[arg-type]
                    tool_call_id=m.tool_call_id,
                    is_error=m.is_error,
                    images=(images or {}).get(m.step, []) if m.role != "assistant" else [],
                )
            )
        return conv

    async def _loop(self) -> EpisodeEnd:
        st = self._load_state()
        budgets = self.spec.budgets
        while True:
            self._fence()
            if self.should_stop():
                raise EpisodeEnd("cancelled", "cancelled")
            if st.last_role != "assistant":
                self._check_budgets(st)
                await self._agent_turn(st, st.last_step + 1)
                continue
            if self.mode in TOOL_MODES:
                await self._tool_turn(st)
                continue
            step, content = st.last_step, st.last_content
            # mode code: the commands and the answer are read outside the message's cells
            prose, cells = split_cells(content) if self.mode == "code" else (content, [])
            if len(prose) > _PARSE_INLINE_CHARS:  # long: off the event loop (others keep going)
                parsed = await asyncio.to_thread(proto.parse_message, prose, self._text_mode)
            else:
                parsed = proto.parse_message(prose, mode=self._text_mode)
            final = parsed.has_description or (self.method == "single_round" and st.rounds >= 2)
            if not final and st.rounds >= self._round_cap():
                raise EpisodeEnd("budget_exhausted", "rounds", answer="")
            commands = list(parsed.commands)
            if self.mode == "find-compat":
                commands = commands[:1]  # FIND executes the first match only
            elif final:
                commands = []  # the loop ends here: nobody would read the outputs
            calls, replies = [], []
            for idx, cmd in enumerate(commands):
                if (
                    budgets.max_target_calls is not None
                    and st.target_calls >= budgets.max_target_calls
                ):
                    if calls:  # the message's calls that ran are kept; the rest do not run
                        self._store_calls(st, calls)
                    raise EpisodeEnd("budget_exhausted", "target_calls", answer="")
                call = await self._call_target(list(cmd.inputs))
                if "_rejected" in call:  # the service refused the agent's input: tell the agent
                    replies.append(proto.format_error(call["_rejected"]))
                    continue
                calls.append({"step": step, "idx": idx, **call})
                st.target_calls += 1
                st.inputs += len(cmd.inputs)
                decimals = benchmark(self.target.family).reply_decimals
                replies.append(
                    proto.format_reply(call["_outputs"], self._text_mode, decimals=decimals)
                )
            if final:
                if calls:
                    self._store_calls(st, calls)
                reason = "description" if parsed.has_description else "single_round"
                if self.mode == "code":
                    content = await self.lab.answer_text(content)
                return EpisodeEnd("completed", reason, answer=content)
            lab_run = None
            if cells:
                lab_run = await self.lab.run_cells(
                    st, step, list(enumerate(cells)), first_call=len(commands)
                )
                if lab_run.end is not None:
                    self.lab.store_rows(st, calls + lab_run.calls, lab_run.cells, lab_run.figures)
                    raise lab_run.end
                calls += lab_run.calls
            resets = False
            if self.mode == "find-compat":
                if replies:
                    text = replies[0]
                elif parsed.errors:
                    text = proto.format_error(parsed.errors[0])
                elif parsed.no_command:
                    # FIND restarts the conversation with the original prompt
                    text, resets = self._prompt(), True
                else:
                    text = proto.format_error("Unrecognized command")
            else:
                replies += [proto.format_error(e) for e in parsed.errors]
                cell_replies = lab_run.replies if lab_run is not None else []
                if not replies and not cell_replies:
                    hint = NO_CELL_HINT if self.mode == "code" else NO_COMMAND_HINT
                    text = proto.format_error(hint)
                elif len(replies) == 1:
                    text = replies[0]  # exactly FIND's text for the common one-command message
                else:
                    text = "\n".join(r.rstrip("\n") for r in replies)
                if cell_replies:  # each as written: its parts' lengths count every character
                    text = "\n".join([text.rstrip("\n")] * bool(replies) + cell_replies)
            msg = {"step": step + 1, "role": "user", "content": text, "resets_context": resets}
            self._fence()
            event = {"step": step + 1, "rounds": st.rounds, "target_calls": st.target_calls}
            with self.store.transaction() as tx:  # the reply with what it reports, or nothing
                tx.episodes.add_step(
                    self.ep.id, msg, self._counters(st), calls=[_call_row(c) for c in calls]
                )
                if lab_run is not None:
                    tx.lab.add_cells(self.ep.id, lab_run.cells, lab_run.figures)
                tx.events.add(self.ep.run_id, "step", event, self.ep.id)
            st.last_step, st.last_role, st.last_content = step + 1, "user", text
            images = lab_run.images if lab_run is not None else []
            user = AgentMessage(role="user", content=text, images=images)
            if resets:  # FIND's newSession: the agent starts over from [system, prompt]
                st.conversation = [*st.conversation[:1], user]
            else:
                st.conversation.append(user)

    async def _tool_turn(self, st: _State) -> None:
        """Run the tool calls of the last assistant message (protocol modes "tools" and
        "code-tools", where `run_python` runs a cell); raises EpisodeEnd at `submit_answer` or a
        budget."""
        step, calls = st.last_step, st.last_tool_calls
        specs = tool_text.by_name(self.tools)
        submit = next(
            (c for c in calls if c.name in specs and specs[c.name].kind == "answer"), None
        )
        if submit is not None and not await checked_arguments(specs[submit.name], submit.arguments):
            arguments = submit.arguments
            if self.mode == "code-tools":
                arguments = await self.lab.answer_args(specs[submit.name], arguments)
            answer = tool_text.to_answer(specs[submit.name], arguments)
            ended = "not run: the episode ended at submit_answer"
            rows = [
                _tool_row(step, i, c, *(("answer submitted", None) if c is submit else ("", ended)))
                for i, c in enumerate(calls)
            ]
            self._fence()
            self.store.episodes.add_tool_calls(self.ep.id, rows)
            raise EpisodeEnd("completed", "submit_answer", answer=answer)
        if st.rounds >= self._round_cap():
            raise EpisodeEnd("budget_exhausted", "rounds", answer="")
        budgets = self.spec.budgets
        decimals = benchmark(self.target.family).reply_decimals
        results: list[dict[str, Any]] = []  # the tool messages
        tool_rows: list[dict[str, Any]] = []
        target_rows: list[dict[str, Any]] = []
        cell_rows: list[dict[str, Any]] = []
        figure_rows: list[dict[str, Any]] = []
        images: dict[int, list[ImagePart]] = {}  # a run_python result's figures, by its step
        lab_idx = len(calls)  # the cells' target calls are numbered after the message's tool calls
        end: EpisodeEnd | None = None
        for idx, c in enumerate(calls):
            t = time.monotonic()
            spec = specs.get(c.name)
            error: str | None = None
            if spec is None:
                error = f"unknown tool {c.name[:100]!r}; the tools are: {', '.join(specs)}"
            elif problems := await checked_arguments(spec, c.arguments):
                error = f"invalid arguments for {spec.name}: {problems}"
            if error is not None:  # no text command stands for it: a plain error
                text = f"Error: {error}"
            elif c.name == RUN_PYTHON:
                try:
                    ran = await self.lab.run_cells(st, step, [(idx, c.arguments["code"])], lab_idx)
                except EpisodeEnd:
                    if tool_rows:
                        self._fence()
                        self.store.episodes.add_tool_calls(self.ep.id, tool_rows)
                    if target_rows:
                        self._store_calls(st, target_rows)
                    raise
                target_rows += ran.calls
                cell_rows += ran.cells
                figure_rows += ran.figures
                images[step + 1 + idx] = ran.images
                lab_idx += len(ran.calls)
                text = "\n".join(ran.replies)
                if ran.end is not None:
                    end = ran.end
                    tool_rows.append(_tool_row(step, idx, c, text, None, time.monotonic() - t))
                    break
            else:
                assert spec is not None
                if (
                    budgets.max_target_calls is not None
                    and st.target_calls >= budgets.max_target_calls
                ):  # the calls made so far are stored below; the rest are not run
                    end = EpisodeEnd("budget_exhausted", "target_calls", answer="")
                    break
                words = tool_text.to_words(spec, c.arguments)
                call = await self._call_target(words)
                if "_rejected" in call:  # the service refused the agent's input
                    error = call["_rejected"]
                    text = proto.format_error(call["_rejected"])
                else:
                    target_rows.append({"step": step, "idx": idx, **call})
                    st.target_calls += 1
                    st.inputs += len(words)
                    text = proto.format_reply(call["_outputs"], "default", decimals=decimals)
            tool_rows.append(_tool_row(step, idx, c, text, error, time.monotonic() - t))
            results.append(
                {
                    "step": step + 1 + idx,
                    "role": "tool",
                    "content": text,
                    "tool_call_id": c.id,
                    "is_error": error is not None,
                }
            )
        if end is not None:
            if tool_rows:
                self._fence()
                self.store.episodes.add_tool_calls(self.ep.id, tool_rows)
            if target_rows or cell_rows:
                self.lab.store_rows(st, target_rows, cell_rows, figure_rows)
            raise end
        if not calls:
            hint = NO_TOOL_HINT.format(submit=tool_text.SUBMIT)
            results = [{"step": step + 1, "role": "user", "content": proto.format_error(hint)}]
        last = results[-1]["step"]
        self._fence()
        event = {
            "step": last,
            "rounds": st.rounds,
            "target_calls": st.target_calls,
            "tool_errors": sum(r["error"] is not None for r in tool_rows),
        }
        with self.store.transaction() as tx:  # the reply with what it reports, or nothing
            tx.episodes.add_step(
                self.ep.id,
                results,
                self._counters(st),
                calls=[_call_row(c) for c in target_rows],
                tool_calls=tool_rows,
            )
            tx.lab.add_cells(self.ep.id, cell_rows, figure_rows)
            tx.events.add(self.ep.run_id, "step", event, self.ep.id)
        st.last_step, st.last_role = last, results[-1]["role"]
        st.last_content, st.last_tool_calls = results[-1]["content"], []
        st.conversation.extend(
            AgentMessage(
                role=r["role"],
                content=r["content"],
                tool_call_id=r.get("tool_call_id"),
                is_error=r.get("is_error", False),
                images=images.get(r["step"], []),
            )
            for r in results
        )

    def _store_calls(self, st: _State, calls: list[dict[str, Any]]) -> None:
        self._fence()
        with self.store.transaction() as tx:  # the calls with the counters that count them
            for c in calls:
                tx.episodes.add_target_call(self.ep.id, _call_row(c))
            tx.episodes.update(self.ep.id, **self._counters(st))

    def _check_budgets(self, st: _State) -> None:
        b = self.spec.budgets
        if st.rounds >= self._round_cap():
            raise EpisodeEnd("budget_exhausted", "rounds", answer="")
        if b.max_tokens is not None and st.tokens >= b.max_tokens:
            raise EpisodeEnd("budget_exhausted", "tokens", answer="")
        if b.max_wall_s is not None and self._elapsed() >= b.max_wall_s:
            raise EpisodeEnd("budget_exhausted", "wall_time", answer="")

    async def _agent_turn(self, st: _State, step: int) -> None:
        # a copy (agents may keep or alter what they are given), with the latest figures only
        conv = recent_images(st.conversation)
        t = time.monotonic()
        left, bound = self._time_left(), self.ctx.step_timeout_s
        by_step = bound is not None and (left is None or bound < left)
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a cancellation (run
            # cancelled, server stopping) that arrives as the step completes
            async with asyncio.timeout(bound if by_step else left):
                if self.tools:
                    reply = await self.agent.step(conv, tools=list(self.tools))  # type: ignore[call-arg]
                else:
                    reply = await self.agent.step(conv)
        except TimeoutError:
            if by_step:  # the operator's bound on one step, not the run's wall-time budget
                raise EpisodeEnd(
                    "error",
                    "agent_error",
                    category="agent",
                    error=f"agent step timed out: no reply within {bound:g} s "
                    "(HARNESS_AGENT_STEP_TIMEOUT_S)",
                ) from None
            raise EpisodeEnd("budget_exhausted", "wall_time", answer="") from None
        except AgentError as e:
            raise EpisodeEnd(
                "error",
                "agent_error",
                category=_category(e.category),
                error=str(e),
                traceback=agent_traceback(e),
            ) from e
        except Exception as e:
            raise EpisodeEnd("error", "agent_error", category="agent", error=_describe(e)) from e
        latency = time.monotonic() - t
        if not isinstance(getattr(reply, "content", None), str):
            raise EpisodeEnd(
                "error", "agent_error", category="agent", error=f"agent returned {reply!r}"
            )
        # an in-process agent's text may hold lone surrogates the store cannot write (hosted
        # agents' replies are cleaned the same way by the host protocol)
        content = valid_unicode(reply.content)
        model = valid_unicode(reply.model) if reply.model else reply.model
        try:  # an in-process agent's claim; a hosted agent's was checked at the host boundary
            u = check_usage(reply.usage)
            tool_calls = self._check_tool_calls(reply)
        except AgentError as e:
            raise EpisodeEnd("error", "agent_error", category="agent", error=str(e)) from None
        st.rounds += 1
        st.prompt_tokens += u.prompt_tokens
        st.completion_tokens += u.completion_tokens
        st.cost_usd += u.cost_usd
        msg = {
            "step": step,
            "role": "assistant",
            "content": content,
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "cost_usd": u.cost_usd,
            "latency_s": latency,
            "model": model,
            "tool_calls": [c.model_dump() for c in tool_calls],
        }
        self._fence()
        self.store.episodes.add_step(self.ep.id, msg, self._counters(st))
        st.last_step, st.last_role, st.last_content = step, "assistant", content
        st.last_tool_calls = tool_calls
        st.conversation.append(
            AgentMessage(role="assistant", content=content, tool_calls=tool_calls)
        )

    def _check_tool_calls(self, reply: Any) -> list[ToolCall]:
        """The reply's tool calls, revalidated (an in-process agent may have built them without
        validation): none outside protocol mode "tools", at most MAX_TOOL_CALLS, plain JSON."""
        raw = getattr(reply, "tool_calls", None) or []
        if not raw:
            return []
        if not self.tools:
            raise AgentError("agent returned tool calls outside protocol mode 'tools'")
        if len(raw) > MAX_TOOL_CALLS:
            raise AgentError(f"agent returned {len(raw)} tool calls; at most {MAX_TOOL_CALLS}")
        try:
            calls = [
                clean_call(
                    ToolCall.model_validate(c.model_dump() if hasattr(c, "model_dump") else c)
                )
                for c in raw
            ]
        except (ValueError, TypeError) as e:
            raise AgentError(f"agent returned an invalid tool call: {str(e)[:500]}") from None
        return calls

    async def _call_target(self, inputs: list[str]) -> dict[str, Any]:
        cap, sent = self.spec.budgets.max_inputs, self._inputs_sent
        if cap is not None and sent + len(inputs) > cap:  # refused like a bad input: told
            return {
                "_rejected": f"input budget: {sent} of {cap} inputs used (budgets.max_inputs); "
                f"a call of {len(inputs)} would pass it"
            }
        t = time.monotonic()
        try:
            outputs = await asyncio.wait_for(
                self.client.call(self.target.id, inputs), self._time_left()
            )
        except TimeoutError:
            raise EpisodeEnd("budget_exhausted", "wall_time", answer="") from None
        except Exception as e:
            if getattr(e, "category", None) == "agent":  # e.g. too many inputs in one call
                return {"_rejected": str(getattr(e, "detail", e))}
            raise EpisodeEnd(
                "error", "target_error", category=target_category(e), error=_describe(e)
            ) from e
        self._inputs_sent = sent + len(inputs)
        return {
            "inputs": inputs,
            "outputs": [o.model_dump() for o in outputs],
            "latency_s": time.monotonic() - t,
            "_outputs": outputs,
        }

    # ---- the end ----------------------------------------------------------------------------
    def _finish(self, end: EpisodeEnd) -> None:
        self.store.episodes.finish(
            self.ep.id,
            self.ep.run_id,
            status=end.status,
            end_reason=end.reason,
            error_category=end.category,
            error=end.error,
            final_answer=end.answer,
            active_s=self._elapsed(),
            traceback=end.traceback,
        )
        self.ep.status, self.ep.final_answer = end.status, end.answer

    async def _score_if_needed(self, answer: str) -> None:
        score_hook = self.ctx.score_hook
        if score_hook is None:
            return
        ep = self.store.episodes.get(self.ep.id)
        if ep is None or ep.scored:
            return
        stats = EpisodeStats(
            target_calls=ep.target_calls,
            inputs=ep.inputs,
            rounds=ep.rounds,
            exemplar_init=ep.exemplar_init,
        )
        # the scorer reads ground truth through our sandboxed client, not by running the target,
        # and runs agent code in our sandboxes
        ctx = ScoringContext(call_target=self.client.call, code_runner=run_in_sandbox)
        try:
            results = await score_hook(self.target, answer, stats, ctx)
            rows = [ScoreResult.model_validate(r).model_dump() for r in results]
        except Exception as e:  # a scorer failure is an error state, never a 0
            log.exception("scoring hook failed for episode %s", ep.id)
            rows = [
                ScoreResult(
                    metric="scoring",
                    status="error",
                    error_category="infrastructure",
                    error=_describe(e),
                ).model_dump()
            ]
        if self.owns():  # else the run's new owner scores it
            self.store.scores.save(ep.id, rows)


def _tool_row(
    step: int, idx: int, call: ToolCall, result: str, error: str | None, latency_s: float = 0.0
) -> dict[str, Any]:
    return {
        "step": step,
        "idx": idx,
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments,
        "result": result,
        "error": error,
        "latency_s": latency_s,
    }


def _call_row(c: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in c.items() if not k.startswith("_")}


def _describe(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def _category(cat: str | None) -> str:
    return cat if cat in ("agent", "target", "judge", "infrastructure", "budget") else "agent"


def target_category(e: BaseException) -> str:
    """Which side a failed target call failed on: "target" or "infrastructure"."""
    # The target service says which side failed (TargetServiceError.category); otherwise a
    # transport failure is the service being unreachable (infrastructure) and anything else the
    # target itself failed to answer.
    cat = getattr(e, "category", None)
    if cat in ("target", "infrastructure"):
        return cat
    try:
        import httpx

        if isinstance(e, httpx.TransportError):
            return "infrastructure"
    except ImportError:  # pragma: no cover
        pass
    return "target"
