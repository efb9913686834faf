"""The agent interface. An agent takes the conversation so far and returns its next message."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field


class Message(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
        )


class AgentReply(BaseModel):
    content: str
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None  # the model id that produced it, when there is one


class AgentError(RuntimeError):
    """A failure of the agent's provider. `category` is one of: agent, infrastructure, budget."""

    def __init__(self, message: str, *, category: str = "agent", retryable: bool = False) -> None:
        super().__init__(message)
        self.category = category
        self.retryable = retryable


class AgentOptions(BaseModel):
    """The options an API caller may set for an agent (subclass per agent). Unknown keys are
    refused; the CLI (the operator) is not bound by it."""

    model_config = ConfigDict(extra="forbid")


class Agent(ABC):
    """Subclass, set `name`, implement `step`. Options arrive as keyword arguments.

    `Options` is the schema of what a REST caller may pass (docs/security.md); the default, no
    fields, means a caller may set no option at all."""

    name: ClassVar[str] = ""
    provider: ClassVar[str] = "local"  # concurrency limits are per provider
    description: ClassVar[str] = ""  # one line, shown by `list_agents()`
    # Options that name a file the agent reads (e.g. a transcript): its agent host gets that file
    # read-only at the same path, and nothing else of the orchestrator's file system.
    file_options: ClassVar[tuple[str, ...]] = ()
    Options: ClassVar[type[AgentOptions]] = AgentOptions

    def __init__(self, **options: Any) -> None:
        self.options = options

    @abstractmethod
    async def step(self, conversation: list[Message]) -> AgentReply:
        """Return the next assistant message given the conversation (system, user, assistant...)."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release clients; called once when the episode ends."""
