"""`harness mcp serve`: a run of the agent `external` with its MCP server (docs/agents.md,
"External agents over MCP"). The run options are `harness run`'s; the agent defaults to
`external` and the protocol mode to `tools`."""

from __future__ import annotations

import inspect

import typer

from harness.commands.run import run

mcp_app = typer.Typer(no_args_is_help=True, help="Serve episodes to external agents over MCP.")

_DEFAULTS = {
    "agent": typer.Option("external", "--agent", "-a", help="an agent that runs over MCP"),
    "mode": typer.Option("tools", "--mode", help="protocol mode (the agent calls tools)"),
}


def serve(**options: object) -> None:
    """Store a run of the agent `external`, print each episode's MCP endpoint and token, and
    run its episodes as their clients call the tools (Ctrl-C leaves the run resumable)."""
    run(**options)  # type: ignore[arg-type]


# `harness run`'s options, with the two defaults above
_RUN = inspect.signature(run, eval_str=True)  # types, not the strings of `from __future__`
serve.__signature__ = _RUN.replace(  # type: ignore[attr-defined]
    parameters=[
        p.replace(default=_DEFAULTS[p.name]) if p.name in _DEFAULTS else p
        for p in _RUN.parameters.values()
    ]
)
mcp_app.command("serve")(serve)


def register(app: typer.Typer) -> None:
    app.add_typer(mcp_app, name="mcp")
