"""The rendezvous between an episode and its external agent: one `Channel` per episode.

An external agent (Claude Code, any MCP client) runs its own loop and reaches the harness over
MCP (harness/mcp/server.py). Each of its tool calls is put on the episode's channel; the episode's
agent (`ExternalAgent.step`, harness/mcp/agent.py) takes it as the assistant's tool call, the
episode loop executes it and stores the result as a `tool` message, and the next `step` sees that
message and answers the MCP request waiting for it. The state lives here and in the store, never
in an MCP session: a client that reconnects with the same token carries on.

Everything runs in the orchestrator's event loop (the episode and the MCP server alike).
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from interp_harness.agents.base import AgentError
from interp_harness.agents.toolspec import SUBMIT, ToolCall

ANSWER_SUBMITTED = "answer submitted; the episode has ended"


class ToolMessage(Protocol):
    """What the channel reads of a stored or in-memory message (interp_harness.agents.base.Message, or a store
    row): a `tool` message names the call it answers."""

    role: str
    content: str


@dataclass(frozen=True)
class CallResult:
    """What an MCP `tools/call` answers: the tool message's text, and whether it is an error."""

    text: str
    is_error: bool = False


class Endpoint(BaseModel):
    """Where one episode's external agent connects, and with what: shown to the run's owner
    only (the token is that episode's agent)."""

    episode_id: str
    target_id: str
    url: str
    token: str


class EpisodeEnded(Exception):
    """The episode has ended: its channel takes no more calls."""


@dataclass
class _Pending:
    name: str
    arguments: dict[str, Any]
    answer: asyncio.Future[CallResult]
    refused: str | None = None  # a call refused at the MCP boundary: the episode's agent error


def token_key(token: str) -> str:
    # tokens are looked up by their hash: no table holds a token a timing probe could walk
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Channel:
    """One episode's rendezvous. `token` grants this episode's tools and nothing else."""

    episode_id: str
    token: str
    family: str = ""  # its benchmark (the tools it lists); set by whoever hands out the endpoint
    # its run's protocol mode: "code-tools" lists the lab's `run_python` beside the commands
    mode: str = "tools"
    ended: str | None = None  # why the episode ended, once it has
    # the episode's opening messages (role, text): what its agent is told, before any call
    task: list[tuple[str, str]] | None = None
    # whether a client has reached the endpoint with the token: until then the episode waits
    # for it without an execution slot (the scheduler asks `Rendezvous.awaits_client`)
    connected: bool = False
    _on_connect: set[Callable[[], None]] = field(default_factory=set)
    _started: asyncio.Event = field(default_factory=asyncio.Event)
    _pending: asyncio.Queue[_Pending] = field(default_factory=asyncio.Queue)
    _answers: dict[str, _Pending] = field(default_factory=dict)  # call id -> its MCP request

    # the MCP side -------------------------------------------------------------------------

    def connect(self) -> None:
        """A request with this episode's token arrived: its client is here."""
        if self.connected:
            return
        self.connected = True
        wake, self._on_connect = self._on_connect, set()
        for callback in wake:
            callback()

    def refuse(self, reason: str) -> CallResult:
        """A call refused at the MCP boundary before it reached the episode (its arguments over
        the agent message cap): the client reads why at once, and the episode ends at its next
        step with `reason` as its agent error, as a native agent's oversized message does.
        Nothing of the call is kept."""
        if self.ended is not None:
            return CallResult(f"episode ended: {self.ended}", True)
        done = asyncio.get_running_loop().create_future()
        result = CallResult(f"call refused: {reason}; the episode ends with this agent error", True)
        done.set_result(result)
        self._pending.put_nowait(_Pending("", {}, done, refused=reason))
        return result

    async def call(self, name: str, arguments: dict[str, Any]) -> CallResult:
        """Hand one tool call to the episode and wait for its result. A client that goes away
        while waiting cancels this; a call the episode has not taken yet is then dropped."""
        if self.ended is not None:
            raise EpisodeEnded(self.ended)
        pending = _Pending(name, dict(arguments), asyncio.get_running_loop().create_future())
        self._pending.put_nowait(pending)
        return await pending.answer

    async def opening(self) -> list[tuple[str, str]]:
        """The episode's opening messages, once it has started (its first step)."""
        if self.task is None and self.ended is not None:
            raise EpisodeEnded(self.ended)
        await self._started.wait()
        if self.task is None:
            raise EpisodeEnded(self.ended or "ended")
        return self.task

    # the episode side ---------------------------------------------------------------------

    async def next_call(self, conversation: Sequence[ToolMessage]) -> ToolCall:
        """Answer the calls whose results end `conversation`, then wait for the client's next
        call. Its id is `mcp_<n>`, n counting the episode's tool calls (resume-safe: the stored
        conversation holds the earlier ones)."""
        if self.task is None:
            opening = conversation[: _opening_length(conversation)]
            self.task = [(m.role, m.content) for m in opening]
            self._started.set()
        self._deliver(conversation)
        n = 1 + sum(len(getattr(m, "tool_calls", None) or ()) for m in conversation)
        while True:
            pending = await self._pending.get()
            if pending.refused is not None:
                raise AgentError(pending.refused, category="agent")
            if pending.answer.done():  # its client went away before the episode took it
                continue
            try:
                call = ToolCall(id=f"mcp_{n}", name=pending.name, arguments=pending.arguments)
            except ValidationError as e:  # e.g. a 300-character tool name: not the episode's
                why = e.errors()[0]["msg"]
                pending.answer.set_result(CallResult(f"invalid tool call: {why}", True))
                continue
            self._answers[call.id] = pending
            return call

    def _deliver(self, conversation: Sequence[ToolMessage]) -> None:
        for m in reversed(conversation):
            if m.role != "tool":
                break
            pending = self._answers.pop(getattr(m, "tool_call_id", None) or "", None)
            if pending is not None and not pending.answer.done():
                pending.answer.set_result(
                    CallResult(m.content, bool(getattr(m, "is_error", False)))
                )

    def close(self, reason: str, transcript: Sequence[ToolMessage] = ()) -> None:
        """The episode has ended (`reason`): answer every waiting request (a submitted answer as
        such; a call whose result the final transcript holds with that result) and refuse the
        rest. Idempotent."""
        if self.ended is not None:
            return
        self.ended = reason
        self._started.set()  # wakes a client waiting for a task that will not come
        self._deliver(transcript)
        for call_id, pending in self._answers.items():
            if pending.answer.done():
                continue
            if pending.name == SUBMIT:
                pending.answer.set_result(CallResult(ANSWER_SUBMITTED))
            else:
                result = _result_of(call_id, transcript)
                pending.answer.set_result(result or CallResult(f"episode ended: {reason}", True))
        self._answers.clear()
        while not self._pending.empty():
            pending = self._pending.get_nowait()
            if not pending.answer.done():
                pending.answer.set_result(CallResult(f"episode ended: {reason}", True))


def _opening_length(conversation: Sequence[ToolMessage]) -> int:
    """How many messages open the conversation before the agent's first one."""
    for i, m in enumerate(conversation):
        if m.role not in ("system", "user"):
            return i
    return len(conversation)


def _result_of(call_id: str, transcript: Sequence[ToolMessage]) -> CallResult | None:
    for m in transcript:
        if m.role == "tool" and getattr(m, "tool_call_id", None) == call_id:
            return CallResult(m.content, bool(getattr(m, "is_error", False)))
    return None


class Rendezvous:
    """This process's channels, by episode and by token. A channel is opened when its endpoint is
    handed out or when its episode starts, whichever comes first; its token is valid until the
    episode ends."""

    def __init__(self) -> None:
        self._channels: dict[str, Channel] = {}
        self._by_token: dict[str, Channel] = {}

    def open(self, episode_id: str, family: str = "", mode: str = "") -> Channel:
        """The episode's channel, made (with a fresh token) on first use, and again once it has
        ended (the episode runs again: a resume); the old token keeps saying it ended."""
        ch = self._channels.get(episode_id)
        if ch is None or ch.ended is not None:
            ch = Channel(episode_id, secrets.token_urlsafe(32))
            self._channels[episode_id] = ch
            self._by_token[token_key(ch.token)] = ch
        ch.family = family or ch.family
        ch.mode = mode or ch.mode
        return ch

    def by_token(self, token: str) -> Channel | None:
        return self._by_token.get(token_key(token))

    def get(self, episode_id: str) -> Channel | None:
        """The episode's channel in this process, if it has one (made by `open`)."""
        return self._channels.get(episode_id)

    def awaits_client(self, episode_id: str, family: str, wake: Callable[[], None]) -> bool:
        """Whether the episode still waits for its client's first request (its channel is
        opened here if it has none: the endpoint a client may be given); `wake` is called once
        the client comes."""
        ch = self.open(episode_id, family)
        if ch.connected:
            return False
        ch._on_connect.add(wake)
        return True

    def close(self, episode_id: str, reason: str, transcript: Sequence[ToolMessage] = ()) -> None:
        """End the episode's channel; its token now only answers that the episode has ended.
        A later run of the same episode (a resume in another process) gets a new token."""
        ch = self._channels.get(episode_id)
        if ch is not None:
            ch.close(reason, transcript)


# One per orchestrator process: the episodes and the MCP server of that process meet here.
RENDEZVOUS = Rendezvous()
