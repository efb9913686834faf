"""The agent host's wire protocol: one JSON object per line, in both directions.

The orchestrator writes requests to the host's stdin (`Init` once, then `Step`s, then `Close`;
or, in pre-flight, `Check` then `Close`)
and reads one response per request from its stdout (`Ready` / `Reply` / `Closed`, or `Failure`).
Lines are bounded (`MAX_LINE`; a reply line by `reply_line_limit` of the message cap). A `Step` carries only what changed: the host keeps the
conversation it was last sent, keeps its first `keep` messages and appends `messages` (a context
reset sends keep=1, a fresh host gets everything). In protocol mode `tools` a `Step` carries the
tools too, and a `Reply` the agent's tool calls (bounded and cleaned here: `clean_call`). In the
code modes a `Step`'s messages may carry images (base64, bounded in all: `Step`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from interp_harness.agents.base import Message, Usage
from interp_harness.agents.images import MAX_CONVERSATION_IMAGE_BYTES, image_bytes
from interp_harness.agents.toolspec import ToolCall, ToolSpec

_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_LINE = 64 * 1024 * 1024  # one message, either way; a longer line is a protocol error
# An agent message's text, in characters (HARNESS_AGENT_MAX_MESSAGE_CHARS; operator).
DEFAULT_MAX_MESSAGE_CHARS = 256 * 1024
MAX_NOTE_CHARS = 4000  # a failure's message (stored as the episode's error)
MAX_TRACEBACK_CHARS = 16_000  # a failure's traceback (stored with the episode's end; its tail kept)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # terminal escapes too; \t, \n stay
MAX_MODEL_CHARS = 200  # a reply's model id
# Protocol mode `tools`: the commands one step offers, and the tool calls one reply may make
# (a model's parallel calls; far more than any benchmark's budget of calls per turn needs)
MAX_TOOLS = 64
MAX_TOOL_CALLS = 64
MAX_ARGUMENTS_DEPTH = 32  # nesting of a call's arguments, as for any JSON the store keeps
_CALL_FIELD_CHARS = 2 * 256  # a call's id and name (ToolCall's bounds)


def reply_line_limit(max_chars: int) -> int:
    """The longest Reply line a message of `max_chars` characters can take: JSON writes a control
    character as \\u00XX (6 bytes, the most any character takes), plus room for the other fields
    (tool calls' ids and names included)."""
    return 6 * max_chars + 64 * 1024 + 6 * MAX_TOOL_CALLS * _CALL_FIELD_CHARS


def reply_chars(content: str, tool_calls: list[ToolCall]) -> int:
    """What a reply counts against the message cap: its text and its calls' arguments (as JSON)."""
    return len(content) + sum(len(json.dumps(c.arguments, ensure_ascii=False)) for c in tool_calls)


def too_long(size: str, max_chars: int) -> str:
    """The agent error for a message of `size` (e.g. "41,943,040 characters")."""
    return (
        f"agent message is {size}; the limit is {max_chars:,} characters "
        "(HARNESS_AGENT_MAX_MESSAGE_CHARS)"
    )


class _Msg(BaseModel):
    model_config = ConfigDict(extra="forbid")


def valid_unicode(text: str) -> str:
    """Lone surrogates (a provider's JSON may carry "\udcff") cannot be written as UTF-8: each
    becomes one U+FFFD (docs/sandbox.md)."""
    return _SURROGATE.sub("\ufffd", text)


class Network(_Msg):
    """The one route a provider agent has: a Unix socket behind which the orchestrator's HTTP
    forwarder (interp_harness.harness.agent_host.net) relays requests to the profile's http(s) endpoint. The host
    listens on its private loopback and points `url_env` (e.g. OPENAI_BASE_URL) there, plain http."""

    uds: str
    mode: Literal["forward"] = "forward"
    url: str  # the profile's base URL, as the agent would use it
    url_env: str  # the variable the SDK reads it from


class Init(_Msg):
    type: Literal["init"] = "init"
    agent: str  # `module:Class`, already resolved by the orchestrator
    options: dict[str, Any] = Field(default_factory=dict)
    network: Network | None = None
    max_message_chars: int = Field(DEFAULT_MAX_MESSAGE_CHARS, ge=1)


class Check(_Msg):
    """Import the agent class and say its name (pre-flight: the agent's imports work in a host
    like the episodes'); nothing is built and no step is asked."""

    type: Literal["check"] = "check"
    agent: str  # `module:Class`


class Step(_Msg):
    """`tools`: protocol mode `tools`, the commands the agent may call (sent with every step: the
    host keeps no state for them); None: the text protocol, `step(conversation)` as ever.
    `messages` carry at most MAX_CONVERSATION_IMAGE_BYTES of images (base64 in the line), what
    a conversation passed through `recent_images` holds, so a step's line stays under MAX_LINE."""

    type: Literal["step"] = "step"
    keep: int = Field(0, ge=0)
    messages: list[Message]
    tools: list[ToolSpec] | None = Field(None, max_length=MAX_TOOLS)

    @field_validator("messages")
    @classmethod
    def _bounded_images(cls, v: list[Message]) -> list[Message]:
        if (n := image_bytes(v)) > MAX_CONVERSATION_IMAGE_BYTES:
            raise ValueError(
                f"the messages carry {n:,} bytes of images (at most "
                f"{MAX_CONVERSATION_IMAGE_BYTES:,})"
            )
        return v


class Close(_Msg):
    type: Literal["close"] = "close"


class Ready(_Msg):
    type: Literal["ready"] = "ready"
    name: str
    provider: str


class Reply(_Msg):
    type: Literal["reply"] = "reply"
    content: str
    tool_calls: list[ToolCall] = Field(default_factory=list, max_length=MAX_TOOL_CALLS)
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None

    @field_validator("content")
    @classmethod
    def _valid_unicode(cls, v: str) -> str:
        return valid_unicode(v)

    @field_validator("tool_calls")
    @classmethod
    def _clean_calls(cls, v: list[ToolCall]) -> list[ToolCall]:
        return [clean_call(c) for c in v]

    @field_validator("model")
    @classmethod
    def _short_model(cls, v: str | None) -> str | None:
        return None if v is None else valid_unicode(v[:MAX_MODEL_CHARS])


class Failure(_Msg):
    """The agent (or its construction) raised: `category` as in AgentError."""

    type: Literal["error"] = "error"
    message: str
    category: str = "agent"
    retryable: bool = False
    # the agent's code failed to import (its module, or a module it imports): the orchestrator
    # then says what an agent host can import
    import_error: bool = False
    # where the agent raised (Python's traceback, from the host: agent text, stored and shown
    # escaped, never run); None when the host itself refused the request
    traceback: str | None = None

    @field_validator("message")
    @classmethod
    def _valid_unicode(cls, v: str) -> str:
        if len(v) > MAX_NOTE_CHARS:  # an agent's exception text is stored: keep it short
            v = v[:MAX_NOTE_CHARS] + f" [... {len(v) - MAX_NOTE_CHARS:,} more characters]"
        return valid_unicode(v)

    @field_validator("traceback")
    @classmethod
    def _bounded(cls, v: str | None) -> str | None:
        return None if v is None else bounded_traceback(v)


def no_tools(name: str) -> str:
    """The error for an agent asked to run in protocol mode `tools` without supporting it."""
    return (
        f"agent {name!r} does not support protocol mode 'tools' (its class does not set "
        "supports_tools = True); run it in protocol mode 'default' or 'find-compat'"
    )


def invalid(e: Exception) -> str:
    """What is wrong, for an error message: the fields and rules, never the input (it may be a
    40 MB string)."""
    if not isinstance(e, ValidationError):
        return f"{type(e).__name__}: {str(e)[:200]}"
    return "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors()[:5])


def clean_call(call: ToolCall) -> ToolCall:
    """A tool call as the harness keeps it: id and name without control characters (they are
    shown and logged), arguments plain JSON (valid Unicode as content is, finite numbers, bounded
    nesting); ValueError otherwise."""
    ident, name = (valid_unicode(_CONTROL.sub("", x)) for x in (call.id, call.name))
    if not ident:
        raise ValueError("a tool call's id is empty")
    return ToolCall(id=ident, name=name, arguments=_clean_json(call.arguments, 0))


def _clean_json(value: Any, depth: int) -> Any:
    if depth > MAX_ARGUMENTS_DEPTH:
        raise ValueError(f"tool call arguments nested deeper than {MAX_ARGUMENTS_DEPTH} levels")
    if isinstance(value, str):
        return valid_unicode(value)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("tool call arguments hold a number that is not finite")
    if isinstance(value, dict):
        return {valid_unicode(str(k)): _clean_json(x, depth + 1) for k, x in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_json(x, depth + 1) for x in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    raise ValueError(f"tool call arguments hold a {type(value).__name__}, not JSON")


def bounded_traceback(text: str) -> str:
    """`text` with control characters (terminal escapes) dropped and at most MAX_TRACEBACK_CHARS
    characters: the tail, where the exception is, with a note of what was cut."""
    text = valid_unicode(_CONTROL.sub("", text))
    if len(text) <= MAX_TRACEBACK_CHARS:
        return text
    cut = len(text) - MAX_TRACEBACK_CHARS
    return f"[... {cut:,} characters cut]\n" + text[cut:]


class Closed(_Msg):
    type: Literal["closed"] = "closed"


Request = Annotated[Init | Check | Step | Close, Field(discriminator="type")]
Response = Annotated[Ready | Reply | Failure | Closed, Field(discriminator="type")]
REQUEST: TypeAdapter[Init | Check | Step | Close] = TypeAdapter(Request)
RESPONSE: TypeAdapter[Ready | Reply | Failure | Closed] = TypeAdapter(Response)


def encode(msg: _Msg) -> bytes:
    return msg.model_dump_json().encode() + b"\n"
