"""What a user may pass to an agent: its `Options` (the fields a REST caller may set; the CLI's
`-o KEY=VALUE` takes the same names) with types and defaults, for `harness agents list` (the web
run form reads the same `Options` schemas: harness/web/run_form.py)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined


class OptionOut(BaseModel):
    name: str
    type: str
    default: Any = None
    required: bool = False
    description: str = ""


def _type_name(annotation: Any) -> str:
    name = getattr(annotation, "__name__", None)
    return name if name and not getattr(annotation, "__args__", None) else repr(annotation)


def options_of(spec: str) -> list[OptionOut] | None:
    """The agent's `Options` (what a REST caller may set; the CLI's `-o KEY=VALUE` takes the
    same names), with defaults; None when the agent does not load here."""
    from interp_harness.agents.registry import resolve_agent

    try:
        cls, _ = resolve_agent(spec)
    except Exception:  # listed with why by list_agents; nothing to describe
        return None
    out = []
    for name, f in cls.Options.model_fields.items():
        default = None if f.default is PydanticUndefined else f.default
        out.append(
            OptionOut(
                name=name,
                type=re.sub(r"\b(?:[a-z_]\w*\.)+", "", _type_name(f.annotation)),
                default=default,
                required=f.is_required(),
                description=f.description or "",
            )
        )
    return out
