"""An agent's failure as the orchestrator records it: the agent host's traceback kept beside the
message (`HostedAgentError`), and the one wording of a failure to build the agent."""

from __future__ import annotations

from interp_harness.agents.base import AgentError


class HostedAgentError(AgentError):
    """An AgentError the agent host reported, with the traceback it sent (agent text, bounded
    by the protocol; None when the host sent none)."""

    def __init__(
        self,
        message: str,
        *,
        category: str = "agent",
        retryable: bool = False,
        agent_traceback: str | None = None,
    ) -> None:
        super().__init__(message, category=category, retryable=retryable)
        self.agent_traceback = agent_traceback


def agent_traceback(e: BaseException) -> str | None:
    """The traceback an agent host reported with `e`; None for any other exception (an
    in-process agent's, or the orchestrator's own)."""
    return e.agent_traceback if isinstance(e, HostedAgentError) else None


CREATE_PREFIX = "agent could not be created: "


def creation_error(e: BaseException) -> str:
    """The episode's error when its agent could not be built, said once ("agent could not be
    created: ...") whether the host or this process said it first."""
    text = str(e) if isinstance(e, AgentError) else f"{type(e).__name__}: {e}"
    return text if text.startswith(CREATE_PREFIX) else CREATE_PREFIX + text
