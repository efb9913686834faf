"""`harness agents list`: the agents a run may name, where each comes from, and its options."""

from __future__ import annotations

import sys

import typer
from pydantic import BaseModel
from rich.markup import escape

from interp_harness.harness.agent_host.info import OptionOut, options_of
from interp_harness.harness.commands._table import Col, fitted, print_table, stdout

agents_app = typer.Typer(no_args_is_help=True, help="Interpreter agents: list them.")


class AgentListed(BaseModel):
    name: str
    kind: str  # builtin | registered | entry_point: where the name comes from
    provider: str
    description: str
    target: str
    tools: bool = False  # runs in protocol mode `tools`
    lab: bool = False  # writes lab cells: runs in protocol modes `code` and `code-tools` only
    families: list[str] | None = None  # what it plays ("*": every family); None: undeclared
    options: list[OptionOut] | None = None  # None: the agent could not be loaded


def listed() -> list[AgentListed]:
    from interp_harness.agents.registry import list_agents

    return [
        AgentListed(**a.model_dump(exclude={"source"}), kind=a.source, options=options_of(a.name))
        for a in list_agents()
    ]


def _option_cell(o: OptionOut) -> str:
    value = "required" if o.required else f"default {o.default!r}"
    return f"{o.name}: {o.type} ({value})"


def plays_cell(families: list[str] | None) -> str:
    """What `harness agents list` says an agent plays: its families, any, or "-" (undeclared:
    pre-flight lets it try every family)."""
    if families is None:
        return "-"
    return "any" if "*" in families else ", ".join(families)


COLUMNS = (
    Col("agent", "id"),
    Col("kind", "id"),
    Col("provider", "id"),
    Col("tools", "id"),
    Col("lab", "id"),
    Col("plays", "text"),
    # wrapped, never cut; under the table, one line per agent, where the row leaves it too
    # little room (an 80-column terminal)
    Col("description", "text", move=0, comfortable=30),
)


@agents_app.command("list")
def list_(
    as_json: bool = typer.Option(False, "--json", help="one JSON object per line"),
    with_options: bool = typer.Option(
        False, "--options", help="also each agent's options (-o KEY=VALUE), with their defaults"
    ),
) -> None:
    """Registered agents (built-in, @register_agent, entry points), one line each: kind,
    provider, whether it takes tools, whether it writes lab cells (protocol modes code and
    code-tools only), the families it plays; --options adds their options."""
    agents = listed()
    if as_json:
        for a in agents:
            sys.stdout.write(a.model_dump_json() + "\n")
        return
    out = stdout()
    rows = [
        [
            a.name,
            a.kind,
            a.provider,
            "yes" if a.tools else "-",
            "yes" if a.lab else "-",
            plays_cell(a.families),
            a.description,
        ]
        for a in agents
    ]
    print_table(out, fitted(COLUMNS, rows, out.width))
    if not with_options:
        out.print("options (-o KEY=VALUE) and their defaults: harness agents list --options")
        return
    for a in agents:
        out.print(f"\n[bold]{escape(a.name)}[/bold] options (-o KEY=VALUE):", highlight=False)
        if a.options is None:
            out.print("  (not loadable here)")
        for o in a.options or []:
            out.print(f"  {escape(_option_cell(o))}", highlight=False)
        if a.options == []:
            out.print("  none")


def register(app: typer.Typer) -> None:
    app.add_typer(agents_app, name="agents")
