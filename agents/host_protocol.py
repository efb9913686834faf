"""The agent host's wire protocol: one JSON object per line, in both directions.

The orchestrator writes requests to the host's stdin (`Init` once, then `Step`s, then `Close`)
and reads one response per request from its stdout (`Ready` / `Reply` / `Closed`, or `Failure`).
Lines are bounded (`MAX_LINE`). A `Step` carries only what changed: the host keeps the
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


class _Msg(BaseModel):
    model_config = ConfigDict(extra="forbid")


def valid_unicode(text: str) -> str:
    """Lone surrogates (a provider's JSON may carry "\udcff") cannot be written as UTF-8: each
    becomes one U+FFFD (docs/sandbox.md)."""
    return _SURROGATE.sub("\ufffd", text)


class Network(_Msg):
    """The one route a provider agent has: a Unix socket the orchestrator forwards.

    `mode` "forward": every connection goes to the profile's http endpoint; the host listens on
    its private loopback and points `url_env` (e.g. OPENAI_BASE_URL) there. "connect": an
    allowlisting CONNECT proxy for an https endpoint; the host sets HTTPS_PROXY to its listener."""

    uds: str
    mode: Literal["forward", "connect"]
    url: str  # the profile's base URL, as the agent would use it
    url_env: str  # the variable the SDK reads it from


class Init(_Msg):
    type: Literal["init"] = "init"
    agent: str  # `module:Class`, already resolved by the orchestrator
    options: dict[str, Any] = Field(default_factory=dict)
    network: Network | None = None


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

    @field_validator("content", "model")
    @classmethod
    def _valid_unicode(cls, v: str | None) -> str | None:
        return None if v is None else valid_unicode(v)


class Failure(_Msg):
    """The agent (or its construction) raised: `category` as in AgentError."""

    type: Literal["error"] = "error"
    message: str
    category: str = "agent"
    retryable: bool = False

    @field_validator("message")
    @classmethod
    def _valid_unicode(cls, v: str) -> str:
        return valid_unicode(v)


class Closed(_Msg):
    type: Literal["closed"] = "closed"


Request = Annotated[Init | Step | Close, Field(discriminator="type")]
Response = Annotated[Ready | Reply | Failure | Closed, Field(discriminator="type")]
REQUEST: TypeAdapter[Init | Step | Close] = TypeAdapter(Request)
RESPONSE: TypeAdapter[Ready | Reply | Failure | Closed] = TypeAdapter(Response)


def encode(msg: _Msg) -> bytes:
    return msg.model_dump_json().encode() + b"\n"
