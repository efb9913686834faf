"""`harness agents list`: the agents a run may name, where each comes from, and its options."""

from __future__ import annotations

import sys

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from harness.agent_info import OptionOut, options_of

agents_app = typer.Typer(no_args_is_help=True, help="Interpreter agents: list them.")


class AgentListed(BaseModel):
    name: str
    kind: str  # builtin | registered | entry_point: where the name comes from
    provider: str
    description: str
    target: str
    tools: bool = False  # runs in protocol mode `tools`
    options: list[OptionOut] | None = None  # None: the agent could not be loaded


def listed() -> list[AgentListed]:
    from agents.registry import list_agents

    return [
        AgentListed(**a.model_dump(exclude={"source"}), kind=a.source, options=options_of(a.name))
        for a in list_agents()
    ]


def _option_cell(o: OptionOut) -> str:
    value = "required" if o.required else f"default {o.default!r}"
    return f"{o.name}: {o.type} ({value})"


@agents_app.command("list")
def list_(as_json: bool = typer.Option(False, "--json", help="one JSON object per line")) -> None:
    """Registered agents (built-in, @register_agent, entry points): kind, provider, options."""
    agents = listed()
    if as_json:
        for a in agents:
            sys.stdout.write(a.model_dump_json() + "\n")
        return
    t = Table("agent", "kind", "provider", "tools", "options (-o KEY=VALUE)", "description")
    for a in agents:
        opts = (
            "(not loadable here)" if a.options is None else "\n".join(map(_option_cell, a.options))
        )
        tools = "yes" if a.tools else "-"
        t.add_row(a.name, a.kind, a.provider, tools, escape(opts or "-"), escape(a.description))
    Console().print(t)


def register(app: typer.Typer) -> None:
    app.add_typer(agents_app, name="agents")
