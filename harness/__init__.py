"""The orchestrator: API, scheduler, episode loop, PYTHON(...) protocol, SQL store and CLI."""

# The agent `external` lives here, not in `agents`: it is the orchestrator's end of an MCP
# rendezvous (harness/mcp). Registering it on import makes every entry point (CLI, REST, web)
# know its name.
import interp_harness.orchestrator.mcp.agent  # noqa: F401, E402
