"""`harness mcp serve`: a run of the agent `external` with its MCP server (docs/agents.md,
"External agents over MCP"). The run options are `harness run`'s; the agent defaults to
`external` and the protocol mode to `tools` (`code-tools` adds the lab's `run_python`)."""

from __future__ import annotations

import inspect

import typer

from interp_harness.harness.commands.run import execute_here, run, run_and_report

mcp_app = typer.Typer(no_args_is_help=True, help="Serve episodes to external agents over MCP.")

_DEFAULTS = {
    "agent": typer.Option("external", "--agent", "-a", help="an agent that runs over MCP"),
    "mode": typer.Option(
        "tools",
        "--mode",
        help="protocol mode: tools, or code-tools (the tools and run_python, a lab's cell)",
    ),
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


@mcp_app.command("resume")
def resume(
    run_id: str = typer.Argument(..., help="a stored run of the agent `external`"),
    mcp_host: str = _RUN.parameters["mcp_host"].default,
    mcp_port: int = _RUN.parameters["mcp_port"].default,
    mcp_endpoints: str = _RUN.parameters["mcp_endpoints"].default,
    as_json: bool = _RUN.parameters["as_json"].default,
) -> None:
    """Go on with a stored run of the agent `external` in this process (one stopped with Ctrl-C,
    or whose process died): new tokens for its unfinished episodes, printed as `serve` does."""
    work = execute_here(None, quiet=as_json, mcp=(mcp_host, mcp_port, mcp_endpoints), resume=run_id)
    run_and_report(work, as_json)


def register(app: typer.Typer) -> None:
    app.add_typer(mcp_app, name="mcp")
