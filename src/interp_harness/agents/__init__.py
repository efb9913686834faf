"""Interpreter agents: the interface, its registry and the built-in agents.

from interp_harness.agents import get_agent, list_agents, register_agent
agent = get_agent("scripted-numeric")            # a built-in or registered name
agent = get_agent("mypkg.mymod:MyAgent", x=1)    # a dotted path
agent = get_agent("my-plugin")                   # an `interp_harness.agents` entry point
"""

from interp_harness.agents.base import Agent, AgentError, AgentReply, Message, Usage
from interp_harness.agents.registry import (
    AgentInfo,
    UnknownAgent,
    get_agent,
    list_agents,
    register_agent,
    resolve_agent,
)

__all__ = [
    "Agent",
    "AgentError",
    "AgentInfo",
    "AgentReply",
    "Message",
    "UnknownAgent",
    "Usage",
    "get_agent",
    "list_agents",
    "register_agent",
    "resolve_agent",
]
