"""Agents for the agent-host tests. Like any agent run in a host, this module imports nothing but
our `agents` part and the standard library (it is bound alone into the sandbox)."""

from __future__ import annotations

import asyncio
import gc
import importlib
import json
import os
import socket
from typing import Any

from interp_harness.agents.base import Agent, AgentReply, Message
from interp_harness.agents.toolspec import ToolCall, ToolSpec

_HIDDEN_MODULES = (
    "interp_harness.function_store",
    "interp_harness.harness",
    "interp_harness.evaluator",
)
_BENIGN_ENV = {
    "PATH",
    "HOME",
    "LANG",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONPATH",
    "PYTHONNOUSERSITE",
    "PWD",
}


def _harness_objects() -> list[str]:
    """Every live object whose class comes from harness, function_store or evaluator, with what
    it would reveal (a Target's hidden truth prints its spec and canary)."""
    out = []
    for o in gc.get_objects():
        mod = type(o).__dict__.get("__module__")
        if isinstance(mod, str) and mod.startswith(tuple(m + "." for m in _HIDDEN_MODULES)):
            try:
                out.append(f"{type(o).__name__}: {str(o)[:2000]}")
            except Exception:
                out.append(type(o).__name__)
    return out


def _imports() -> list[str]:
    got = []
    for name in (
        *_HIDDEN_MODULES,
        "interp_harness.function_store.catalog",
        "interp_harness.function_store.numeric",
        "interp_harness.harness.store.repo",
        "interp_harness.evaluator.scoring",
    ):
        try:
            importlib.import_module(name)
            got.append(name)
        except Exception:  # noqa: S112 - failing is what we hope for
            continue
    return got


def _regenerate_catalog() -> str | None:
    """The find-gen catalog is generated from a seed: try to rebuild it."""
    try:
        from interp_harness.function_store.catalog import Catalog, CatalogOptions

        targets = Catalog(CatalogOptions(gen_seed=0)).list(dataset="find-gen", family="numeric")
        return str(targets[0].hidden)[:500]
    except Exception:
        return None


def _connect(where: list[Any]) -> list[str]:
    reached = []
    for w in where:
        try:
            if isinstance(w, str):  # a Unix socket path
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(3)
                s.connect(w)
            else:
                s = socket.create_connection((w[0], int(w[1])), timeout=3)
            s.close()
            reached.append(str(w))
        except OSError:
            continue
    return reached


class CheaterAgent(Agent):
    """Looks everywhere for the hidden target, then answers with what it found (as JSON).

    Options: probe_paths (files and directories to try to read), connect (["host", port] pairs or
    Unix socket paths to try to open)."""

    async def step(self, conversation: list[Message]) -> AgentReply:
        found = {
            "objects": _harness_objects(),
            "imports": _imports(),
            "catalog": _regenerate_catalog(),
            "env": {k: v for k, v in os.environ.items() if k not in _BENIGN_ENV},
            "paths": [p for p in self.options.get("probe_paths", []) if os.path.exists(p)],
            "connect": _connect(list(self.options.get("connect", []))),
        }
        return AgentReply(content="[DESCRIPTION]: " + json.dumps(found))


class CheaterOpenAIAgent(CheaterAgent):
    """The cheater under the openai provider: it gets the profile's key and route, nothing more."""

    provider = "openai"


class SleepyProbeAgent(Agent):
    """Calls the function on 0, 1, 2, ... sleeping `delay` s per step; answers after n_calls.
    Its message depends only on the conversation, so a fresh host continues identically."""

    async def step(self, conversation: list[Message]) -> AgentReply:
        await asyncio.sleep(float(self.options.get("delay", 0.3)))
        k = sum(m.role == "assistant" for m in conversation)
        if k < int(self.options.get("n_calls", 6)):
            return AgentReply(content=f"Probe {k}.\nCOMMAND: PYTHON(./temp/function.py {k})")
        return AgentReply(content="[DESCRIPTION]: done")


class PrintingAgent(Agent):
    """Prints to stdout (which must not corrupt the protocol), then answers."""

    async def step(self, conversation: list[Message]) -> AgentReply:
        print('noise on stdout\n{"type": "reply", "content": "forged"}', flush=True)
        return AgentReply(content=f"seen {len(conversation)}")


class ClaimsCategoryAgent(Agent):
    """Raises AgentError with the category its options name, without calling anything: a claim
    that a provider failed when none did."""

    name = "claims-category"

    async def step(self, conversation: list[Message]) -> AgentReply:
        from interp_harness.agents import AgentError

        raise AgentError("the provider is down, honest", category=self.options["category"])


class ToolEchoAgent(Agent):
    """Protocol mode `tools`: answers with what its step received (the tools' names, None when it
    was called without `tools=`; each tool result's call id and error flag) as JSON, and with the
    tool calls the last message asks for: `calls N` (N calls), or one call whose arguments are
    `surrogate` (a lone surrogate), `control` (control characters in id and name), `nan`,
    `deep` (nested 40 levels) or `big N` (an argument of N characters)."""

    name = "tool-echo"
    supports_tools = True

    async def step(
        self, conversation: list[Message], tools: list[ToolSpec] | None = None
    ) -> AgentReply:
        seen = {
            "tools": None if tools is None else [t.name for t in tools],
            "results": [
                [m.tool_call_id, m.content, m.is_error] for m in conversation if m.role == "tool"
            ],
            "calls": [c.id for m in conversation for c in m.tool_calls],
        }
        ask = conversation[-1].content.split()
        word, n = (ask[0], int(ask[1]) if len(ask) > 1 else 0) if ask else ("", 0)
        args: Any = {"inputs": ["1"]}
        ident, name = "c0", "call_function"
        if word == "surrogate":
            args = {"inputs": ["a\ud800b"], "\udcff": 1}
        elif word == "control":
            ident, name = "c\x1b[31m0", "call_\x07function"
        elif word == "nan":
            args = {"x": float("nan")}
        elif word == "deep":
            for _ in range(40):
                args = {"a": args}
        elif word == "big":
            args = {"inputs": ["x" * n]}
        count = n if word == "calls" else 1
        calls = [ToolCall(id=f"{ident}-{i}", name=name, arguments=args) for i in range(count)]
        return AgentReply(content=json.dumps(seen), tool_calls=calls)
