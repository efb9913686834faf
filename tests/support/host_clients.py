"""A client of a sandboxed agent host for an agent named as a run names it."""

from __future__ import annotations

from interp_harness.agents.registry import resolve_agent
from interp_harness.harness.agent_host.host import AgentHostClient, AgentHosts


def client(hosts: AgentHosts, spec: str, **options: object) -> AgentHostClient:
    cls, _ = resolve_agent(spec)
    return hosts.client(cls, dict(options))
