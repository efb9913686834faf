"""Hostile code for tests/harness/sandbox/test_sandbox_env.py: `snoop()` reads every environment a
sandboxed process can see (each /proc/<pid>/environ it can open, its own, os.environ); the agents
put it in their message, and the tests paste its source into answer code and target scripts.
Standard library and the `agents` package only: the agent host binds this file alone."""

from __future__ import annotations

from interp_harness.agents.base import Agent, AgentReply, Message


def snoop() -> str:
    """One "<source>: NAME=value" line per variable found; "<source>! Error" where refused.
    Self-contained (its imports inside): tests paste its source into other code."""
    import glob
    import os

    lines = []
    paths = sorted(glob.glob("/proc/[0-9]*/environ"))
    paths += ["/proc/self/environ", "/proc/thread-self/environ", "/proc/1/environ"]
    for path in paths:
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError as e:
            lines.append(f"{path}! {type(e).__name__}")
            continue
        for item in raw.split(b"\0"):
            if item:
                lines.append(f"{path}: {item.decode('utf-8', 'replace')}")
    lines += [f"os.environ: {k}={v}" for k, v in os.environ.items()]
    return "\n".join(lines)


class EnvSnoopAgent(Agent):
    async def step(self, conversation: list[Message]) -> AgentReply:
        return AgentReply(content="[DESCRIPTION]: " + snoop())


class EnvSnoopOpenAIAgent(EnvSnoopAgent):
    """The same under the openai provider: it gets its profile's key and URL, nothing else."""

    provider = "openai"
