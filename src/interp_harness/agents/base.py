"""The agent interface. An agent takes the conversation so far and returns its next message."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from interp_harness.agents.images import MAX_MESSAGE_IMAGES, ImagePart
from interp_harness.agents.toolspec import ToolCall

# `Agent.families` of an agent that plays every benchmark family (an LLM, a replay)
ANY_FAMILY: frozenset[str] = frozenset({"*"})

# Bounds on what one agent message may claim. 2**22 tokens is above any model's context; 501
# messages of it (the most rounds a run may allow) still fit the store's 32-bit counters.
MAX_MESSAGE_TOKENS = 2**22
MAX_MESSAGE_COST_USD = 1e6


class Message(BaseModel):
    """One message of the conversation. In protocol mode `tools` an assistant message may carry
    tool calls, and each result comes back as a `tool` message naming the call it answers. In
    the code modes a reply may carry the images of a cell's figures."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_calls: list[ToolCall] = Field(default_factory=list)  # assistant
    tool_call_id: str | None = None  # tool: the call this result answers
    is_error: bool = False  # tool: the call failed (unknown tool, bad arguments, refused input)
    # user / tool: the figures a lab cell made (PNG; agents/images.py); its text names each one
    images: list[ImagePart] = Field(default_factory=list, max_length=MAX_MESSAGE_IMAGES)


class Usage(BaseModel):
    """What one agent message cost. Validated wherever an agent's claim enters the harness
    (`check_usage`): non-negative, bounded, finite."""

    prompt_tokens: int = Field(0, ge=0, le=MAX_MESSAGE_TOKENS)
    completion_tokens: int = Field(0, ge=0, le=MAX_MESSAGE_TOKENS)
    cost_usd: float = Field(0.0, ge=0, le=MAX_MESSAGE_COST_USD, allow_inf_nan=False)

    def __add__(self, other: Usage) -> Usage:
        # a total, not one message's claim: the per-message bounds do not apply
        return Usage.model_construct(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
        )


class AgentReply(BaseModel):
    content: str
    tool_calls: list[ToolCall] = Field(default_factory=list)  # protocol mode `tools` only
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None  # the model id that produced it, when there is one


class AgentError(RuntimeError):
    """A failure of the agent's provider. `category` is one of: agent, infrastructure, budget."""

    def __init__(self, message: str, *, category: str = "agent", retryable: bool = False) -> None:
        super().__init__(message)
        self.category = category
        self.retryable = retryable


def check_usage(usage: object) -> Usage:
    """`usage` as a valid Usage, revalidated (an agent may have built or altered it without
    validation); AgentError (category agent) saying what is wrong otherwise."""
    try:
        data = usage.model_dump() if isinstance(usage, BaseModel) else usage
        return Usage.model_validate(data)
    except (ValidationError, TypeError, ValueError) as e:
        raise AgentError(
            f"agent reported invalid usage: {_problems(e)}", category="agent"
        ) from None


def _problems(e: Exception) -> str:
    if isinstance(e, ValidationError):  # the fields and rules, not the (possibly huge) input
        return "; ".join(
            f"{'.'.join(map(str, x['loc'])) or 'usage'}: {x['msg']}" for x in e.errors()
        )
    return f"{type(e).__name__}"[:200]


def plays(agent_cls: type, family: str) -> bool:
    """Whether `agent_cls` may play a target of `family`: it declares that family or every
    one, or declares nothing."""
    declared = getattr(agent_cls, "families", None)
    return declared is None or bool(ANY_FAMILY & declared) or family in declared


class AgentOptions(BaseModel):
    """The options an API caller may set for an agent (subclass per agent). Unknown keys are
    refused. The CLI (the operator) may also set the names in `operator_only` (an endpoint, a
    file to read); any other name the class does not declare is refused there too, once the
    class declares any."""

    model_config = ConfigDict(extra="forbid")
    operator_only: ClassVar[frozenset[str]] = frozenset()


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
    # True when `step` takes `tools=` and may answer with tool calls (protocol mode `tools`);
    # a run in that mode refuses an agent without it
    supports_tools: ClassVar[bool] = False
    # True when the agent writes Python cells for a lab (protocol modes `code`, `code-tools`):
    # a run in another mode refuses it
    needs_lab: ClassVar[bool] = False
    # The benchmark families (a target's `family`) the agent can play: pre-flight refuses a run
    # on targets of another family, naming the agents that fit. ANY_FAMILY: every family. None
    # (a custom agent's default): not declared, so never refused.
    families: ClassVar[frozenset[str] | None] = None

    def __init__(self, **options: Any) -> None:
        self.options = options

    @abstractmethod
    async def step(self, conversation: list[Message]) -> AgentReply:
        """Return the next assistant message given the conversation (system, user, assistant...).

        Agents with `supports_tools` take `step(conversation, tools=[ToolSpec, ...])` in protocol
        mode `tools` (the benchmark's commands) and may reply with `tool_calls`."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release clients; called once when the episode ends."""
