"""Finding an agent class by name: built-ins, `@register_agent`, dotted paths and entry points.

A spec is one of:
- a registered or built-in name (`openai`, `scripted-numeric`, ...);
- a dotted path `package.module:ClassName` (the class must subclass `interp_harness.agents.base.Agent`);
- the name of an entry point in the `interp_harness.agents` group of any installed distribution.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from importlib import metadata
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from interp_harness.agents.base import Agent

ENTRY_POINT_GROUP = "interp_harness.agents"

# Built-ins are imported on first use so that `list_agents` or a scripted run never pays for the
# provider SDKs (and a missing optional SDK only breaks the agent that needs it).
_BUILTINS: dict[str, str] = {
    "openai": "interp_harness.agents.openai_agent:OpenAIAgent",
    "anthropic": "interp_harness.agents.anthropic_agent:AnthropicAgent",
    "scripted-numeric": "interp_harness.agents.scripted_numeric:ScriptedNumericAgent",
    "scripted-numeric-code": "interp_harness.agents.scripted_numeric_code:ScriptedNumericCodeAgent",
    "scripted-strings": "interp_harness.agents.scripted_strings:ScriptedStringsAgent",
    "scripted-strings-code": "interp_harness.agents.scripted_strings_code:ScriptedStringsCodeAgent",
    "scripted-entities": "interp_harness.agents.scripted_words:ScriptedEntitiesAgent",
    "scripted-relations": "interp_harness.agents.scripted_words:ScriptedRelationsAgent",
    "scripted-neuron": "interp_harness.agents.scripted_neuron:ScriptedNeuronAgent",
    "neuron-fixed-explanation": "interp_harness.agents.neuron_floor:FixedExplanationFloor",
    "scripted-ravel": "interp_harness.agents.scripted_ravel:ScriptedRavelAgent",
    "scripted-circuits": "interp_harness.agents.scripted_circuits:ScriptedCircuitsAgent",
    "scripted-circuits-code": "interp_harness.agents.scripted_circuits_code:ScriptedCircuitsCodeAgent",
    "circuits-random": "interp_harness.agents.scripted_circuits:RandomCircuitFloor",
    "interpolation": "interp_harness.agents.interpolation:InterpolationAgent",
    "replay": "interp_harness.agents.replay:ReplayAgent",
}

_REGISTERED: dict[str, type[Agent]] = {}

Source = Literal["builtin", "registered", "entry_point", "dotted"]


class AgentInfo(BaseModel):
    name: str
    provider: str
    description: str
    source: Source
    target: str = ""  # where it comes from: module:Class, or the distribution of an entry point
    tools: bool = False  # takes the benchmark's commands as tools (protocol mode `tools`)
    lab: bool = False  # writes lab cells (`needs_lab`): protocol modes `code` and `code-tools` only
    # the families it declares it can play (Agent.families; "*": every one); None: undeclared
    families: list[str] | None = None


class UnknownAgent(ValueError):
    """No agent matches the spec; the message lists the known names."""


A = TypeVar("A", bound=type[Agent])


def register_agent(name: str | None = None) -> Callable[[A], A]:
    """Class decorator: `@register_agent("mine")` makes `get_agent("mine")` build that class."""

    def deco(cls: A) -> A:
        check_agent_class(cls, repr(name))
        key = name or cls.name
        if not key:
            raise ValueError(f"{cls.__qualname__}: give register_agent a name or set `name`")
        if not cls.name:
            cls.name = key
        _REGISTERED[key] = cls
        return cls

    return deco


def check_agent_class(obj: object, spec: str) -> type[Agent]:
    if not (isinstance(obj, type) and issubclass(obj, Agent)):
        raise TypeError(
            f"agent spec {spec} resolves to {obj!r}, which is not a subclass of interp_harness.agents.base.Agent"
        )
    return obj


# Import names before the src layout (issue 48): runs planned then stored their agent class under
# these (`interp_harness.orchestrator.mcp.agent:ExternalAgent`), and exports carry them; such a
# path still resolves, to the same module under its folder's name.
RENAMED_MODULES = {
    "interp_harness.orchestrator": "interp_harness.harness",
    "interp_harness.targets": "interp_harness.function_store",
}


def current_module(name: str) -> str:
    """A module's import name today, for a name stored before a part was renamed."""
    for old, new in RENAMED_MODULES.items():
        if name == old or name.startswith(old + "."):
            return new + name[len(old) :]
    return name


def import_path(path: str) -> object:
    module_name, _, attr = path.partition(":")
    module_name = current_module(module_name)
    if not module_name or not attr:
        raise UnknownAgent(f"bad dotted agent path {path!r}: expected 'package.module:ClassName'")
    try:
        obj: object = importlib.import_module(module_name)
    except ImportError as e:
        raise UnknownAgent(f"cannot import module {module_name!r} for agent {path!r}: {e}") from e
    except Exception as e:  # the module itself fails (a syntax error, a raise at import time)
        raise UnknownAgent(
            f"module {module_name!r} of agent {path!r} fails on import: {type(e).__name__}: {e}"
        ) from e
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as e:
            raise UnknownAgent(
                f"module {module_name!r} has no attribute {attr!r} (agent {path!r})"
            ) from e
    return obj


def _entry_points() -> dict[str, metadata.EntryPoint]:
    return {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def known_names() -> list[str]:
    return sorted(set(_BUILTINS) | set(_REGISTERED) | set(_entry_points()))


def resolve_agent(spec: str, *, allow_dotted: bool = True) -> tuple[type[Agent], Source]:
    """The agent class a spec names, and where it came from.

    `allow_dotted=False` (the REST API's default): only built-in, registered and entry-point
    names; anything else is refused before any module is imported."""
    spec = spec.strip()
    if spec in _REGISTERED:
        return _REGISTERED[spec], "registered"
    if spec in _BUILTINS:
        return check_agent_class(import_path(_BUILTINS[spec]), spec), "builtin"
    if ":" in spec:
        if not allow_dotted:
            raise UnknownAgent(
                f"agent {spec!r}: dotted paths are not accepted here (they import a module in the "
                f"server). Known agents: {', '.join(known_names())}. The operator may install the "
                f"agent as an entry point ({ENTRY_POINT_GROUP!r}), load it with HARNESS_PLUGINS, "
                "or allow dotted paths with HARNESS_API_ALLOW_DOTTED_AGENTS=1."
            )
        return check_agent_class(import_path(spec), spec), "dotted"
    eps = _entry_points()
    if spec in eps:
        try:
            obj = eps[spec].load()
        except Exception as e:  # a broken plugin must say which one
            raise UnknownAgent(
                f"entry point {spec!r} ({eps[spec].value}) failed to load: {e}"
            ) from e
        return check_agent_class(obj, spec), "entry_point"
    close = difflib.get_close_matches(spec, known_names(), n=1, cutoff=0.6)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise UnknownAgent(
        f"unknown agent {spec!r}.{hint} Known agents: {', '.join(known_names())}. "
        "A custom class can also be named by dotted path, e.g. 'mypkg.mymod:MyAgent', or installed "
        f"under the entry-point group {ENTRY_POINT_GROUP!r}."
    )


def get_agent(spec: str, **options: Any) -> Agent:
    """Build the agent a spec names, passing `options` to its constructor."""
    cls, _ = resolve_agent(spec)
    return cls(**options)


def _info(name: str, cls: type[Agent], source: Source, target: str) -> AgentInfo:
    doc = (cls.__doc__ or "").strip().splitlines()
    description = getattr(cls, "description", "") or (doc[0] if doc else "")
    declared = getattr(cls, "families", None)
    return AgentInfo(
        name=name,
        provider=cls.provider,
        description=description,
        source=source,
        target=target,
        tools=bool(getattr(cls, "supports_tools", False)),
        lab=bool(getattr(cls, "needs_lab", False)),
        families=None if declared is None else sorted(declared),
    )


def list_agents() -> list[AgentInfo]:
    """Every agent reachable by name. A plugin that fails to import is listed with the error."""
    out: dict[str, AgentInfo] = {}
    for name, path in _BUILTINS.items():
        try:
            out[name] = _info(name, check_agent_class(import_path(path), name), "builtin", path)
        except Exception as e:  # e.g. an SDK missing: still list it, with why
            out[name] = AgentInfo(
                name=name,
                provider="?",
                description=f"unavailable: {e}",
                source="builtin",
                target=path,
            )
    for name, cls in _REGISTERED.items():
        out[name] = _info(name, cls, "registered", f"{cls.__module__}:{cls.__qualname__}")
    for name, ep in _entry_points().items():
        if name in out:
            continue  # a built-in or registered name wins, as in resolve_agent
        dist = ep.dist.name if ep.dist is not None else "?"
        try:
            out[name] = _info(
                name, check_agent_class(ep.load(), name), "entry_point", f"{dist}: {ep.value}"
            )
        except Exception as e:
            out[name] = AgentInfo(
                name=name,
                provider="?",
                description=f"failed to load: {e}",
                source="entry_point",
                target=f"{dist}: {ep.value}",
            )
    return sorted(out.values(), key=lambda i: i.name)
