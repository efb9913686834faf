"""The agent host's wire protocol: one JSON object per line, in both directions.

The orchestrator writes requests to the host's stdin (`Init` once, then `Step`s, then `Close`;
or, in pre-flight, `Check` then `Close`)
and reads one response per request from its stdout (`Ready` / `Reply` / `Closed`, or `Failure`).
Lines are bounded (`MAX_LINE`; a reply line by `reply_line_limit` of the message cap). A `Step` carries only what changed: the host keeps the
conversation it was last sent, keeps its first `keep` messages and appends `messages` (a context
reset sends keep=1, a fresh host gets everything).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from agents.base import Message, Usage

_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_LINE = 64 * 1024 * 1024  # one message, either way; a longer line is a protocol error
# An agent message's text, in characters (HARNESS_AGENT_MAX_MESSAGE_CHARS; operator).
DEFAULT_MAX_MESSAGE_CHARS = 256 * 1024
MAX_NOTE_CHARS = 4000  # a failure's message (stored as the episode's error)
MAX_TRACEBACK_CHARS = 16_000  # a failure's traceback (stored with the episode's end; its tail kept)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # terminal escapes too; \t, \n stay
MAX_MODEL_CHARS = 200  # a reply's model id


def reply_line_limit(max_chars: int) -> int:
    """The longest Reply line a message of `max_chars` characters can take: JSON writes a control
    character as \\u00XX (6 bytes, the most any character takes), plus room for the other fields."""
    return 6 * max_chars + 64 * 1024


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
    forwarder (harness.agent_host_net) relays requests to the profile's http(s) endpoint. The host
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
    type: Literal["step"] = "step"
    keep: int = Field(0, ge=0)
    messages: list[Message]


class Close(_Msg):
    type: Literal["close"] = "close"


class Ready(_Msg):
    type: Literal["ready"] = "ready"
    name: str
    provider: str


class Reply(_Msg):
    type: Literal["reply"] = "reply"
    content: str
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None

    @field_validator("content")
    @classmethod
    def _valid_unicode(cls, v: str) -> str:
        return valid_unicode(v)

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
