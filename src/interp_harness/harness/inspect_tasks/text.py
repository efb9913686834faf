"""Protocol "text": FIND's text loop, run by the harness's own `EpisodeRunner` (so the turns,
the round cap, the parser, FIND's context reset and the reply text are those of `harness run`,
and the scores compare with FIND's paper). The interpreter is Inspect's model under evaluation,
reached through an in-process bridge agent; the episode is kept in an ephemeral SQLite store (a
temporary directory per eval process, removed when the run ends or the process exits). After the
episode, `state.messages` mirrors the conversation and `state.output.completion` is the final
answer."""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from pathlib import Path

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store

from interp_harness.agents.base import Agent, AgentReply, Usage
from interp_harness.agents.base import Message as AgentMessage
from interp_harness.harness.domain.spec import Budgets, ProtocolMode, ProtocolOptions, RunSpec
from interp_harness.harness.episode.context import EpisodeContext
from interp_harness.harness.episode.runner import EpisodeRunner
from interp_harness.harness.inspect_tasks.keys import (
    ANSWER,
    END_REASON,
    INPUTS,
    ROUNDS,
    TARGET_CALLS,
    tagged,
)
from interp_harness.harness.inspect_tasks.resources import resources
from interp_harness.harness.inspect_tasks.tools import final_output
from interp_harness.harness.store.repo import Store, open_store

AGENT_LABEL = "inspect"  # the runs' agent in the ephemeral store (never shown anywhere)


class EpisodeFailed(RuntimeError):
    """The episode ended in an error (its category in brackets first)."""


class _EpisodeStore:
    """The process's ephemeral store, created on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._dir: Path | None = None
        self._store: Store | None = None

    def get(self) -> Store:
        with self._lock:
            if self._store is None:
                self._dir = Path(tempfile.mkdtemp(prefix="interp-harness-inspect-"))
                self._store = open_store(f"sqlite:///{self._dir / 'episodes.db'}")
                atexit.register(self.close)
            return self._store

    def close(self) -> None:
        with self._lock:
            st, d = self._store, self._dir
            self._store = self._dir = None
        if st is not None:
            st.engine.dispose()
        if d is not None:
            shutil.rmtree(d, ignore_errors=True)


EPISODES = _EpisodeStore()


class InspectModelAgent(Agent):
    """The bridge: the harness's agent interface answered by Inspect's model for this sample."""

    name = "inspect-model"

    def __init__(self, state: TaskState) -> None:
        super().__init__()
        self.state = state
        self.output: ModelOutput | None = None
        self.failure: BaseException | None = None  # what Inspect raised (a limit, a model error)

    async def step(self, conversation: list[AgentMessage]) -> AgentReply:
        messages = [_chat(m) for m in conversation]
        try:
            output = await get_model().generate(messages)
        except Exception as e:
            # the runner records it as an agent error; the solver re-raises it afterwards so that
            # Inspect sees its own exception (e.g. a token limit ends the sample as a limit)
            self.failure = e
            raise
        self.output = output
        self.state.messages = [*messages, output.message]  # the live transcript
        u = output.usage
        return AgentReply(
            content=output.completion,
            usage=Usage(
                prompt_tokens=u.input_tokens if u else 0,
                completion_tokens=u.output_tokens if u else 0,
                cost_usd=(u.total_cost or 0.0) if u else 0.0,
            ),
            model=output.model,
        )


def _chat(m: AgentMessage, model: str | None = None) -> ChatMessage:
    if m.role == "system":
        return ChatMessageSystem(content=m.content)
    if m.role == "assistant":
        return ChatMessageAssistant(content=m.content, model=model)
    return ChatMessageUser(content=m.content)


@solver
def text_loop(
    mode: ProtocolMode = "find-compat",
    max_rounds: int = 20,
    max_target_calls: int | None = None,
) -> Solver:
    """One harness episode on the sample's target, with the model under evaluation as the
    interpreter (protocol modes "find-compat" or "default")."""
    spec_args = {
        "protocol": ProtocolOptions(mode=mode),
        "budgets": Budgets(max_rounds=max_rounds, max_target_calls=max_target_calls),
    }

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        target = resources().target(str(state.sample_id))
        spec = RunSpec(agent=AGENT_LABEL, dataset=target.dataset, ids=[target.id], **spec_args)
        db = EPISODES.get()
        run = db.runs.create(spec, [target.id])
        db.episodes.ensure(
            run.id,
            [
                {
                    "idx": 0,
                    "target_id": target.id,
                    "dataset": target.dataset,
                    "family": target.family,
                    "variant": target.variant,
                }
            ],
        )
        ep = db.episodes.of_run(run.id)[0]
        agent = InspectModelAgent(state)
        # no score hook: the task's scorer scores the answer
        ctx = EpisodeContext(store=db, target=target, spec=spec, client=resources().client())
        status = await EpisodeRunner(ctx, ep, agent).run()
        final = db.episodes.get(ep.id)
        assert final is not None
        state.messages = [
            _chat(AgentMessage(role=m.role, content=m.content), m.model)  # type: ignore[arg-type]
            for m in db.episodes.messages(ep.id)
        ]
        counters = store()
        counters.set(TARGET_CALLS, final.target_calls)
        counters.set(INPUTS, final.inputs)
        counters.set(ROUNDS, final.rounds)
        if status == "error":
            if agent.failure is not None:
                raise agent.failure
            raise EpisodeFailed(tagged(final.error_category, final.error or ""))
        if status == "budget_exhausted":
            counters.set(END_REASON, final.end_reason)  # rounds, target_calls, tokens, ...
        answer = final.final_answer or ""  # budget_exhausted: no answer, as the harness
        counters.set(ANSWER, answer)
        state.output = final_output(agent.output or ModelOutput(model=str(get_model())), answer)
        return state

    return solve
