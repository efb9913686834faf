"""External agents over MCP: the per-episode rendezvous (channel), the agent `external` and the
MCP server (`harness mcp serve`, and mounted in the REST API)."""
