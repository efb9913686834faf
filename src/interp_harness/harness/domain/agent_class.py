"""How a run names its agent class: the spec's agent name (registry name, `pkg.mod:Class` or
entry point) when the run is planned, and the class's import path stored with the plan when its
episodes execute (in this process or a Ray worker)."""

from __future__ import annotations

from interp_harness.agents.registry import UnknownAgent, import_path, resolve_agent
from interp_harness.harness.domain.spec import RunSpec


class SelectionError(ValueError):
    """A run's request cannot be satisfied (unknown dataset/agent/target, empty selection)."""


def resolve_agent_class(spec: str, *, allow_dotted: bool = True) -> type:
    """The agent class for a spec (registry name, `pkg.mod:Class` or entry point). With
    `allow_dotted=False` (REST) a name that is not offered is refused before any import."""
    try:
        cls, _ = resolve_agent(spec, allow_dotted=allow_dotted)
    except (ValueError, TypeError) as e:
        raise SelectionError(str(e)) from e
    return cls


def import_agent_class(path: str) -> type:
    try:
        obj = import_path(path)
    except UnknownAgent as e:
        raise SelectionError(str(e)) from e
    if not isinstance(obj, type):
        raise SelectionError(f"planned agent class {path!r} is not a class")
    return obj


def planned_agent_class(spec: RunSpec, path: str | None) -> type:
    """The class the run's plan names; runs stored without one (before plans were stored, or
    with a class no other process can import) resolve the spec's agent name."""
    if path:
        return import_agent_class(path)
    return resolve_agent_class(spec.agent)
