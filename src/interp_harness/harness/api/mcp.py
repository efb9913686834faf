"""The MCP server inside the REST API (`/mcp/<episode id>`): a run of the agent `external`
created with `POST /runs` is served by this process, and its endpoints and tokens go to the run's
owner only: in the `POST /runs` reply, and in `GET /runs/{id}` to a caller with the same API
token as created it (with no API tokens configured, there is no owner to recognise: only the
`POST` reply has them). Owners are kept in memory, as the episode tokens are."""

from __future__ import annotations

from fastapi import Request

from interp_harness.agents.host_protocol import DEFAULT_MAX_MESSAGE_CHARS
from interp_harness.harness.domain.rendezvous import Endpoint, token_key
from interp_harness.harness.mcp.server import (
    McpApp,
    bearer,
    issue_endpoints,
    store_episodes_now,
)
from interp_harness.harness.runs.plan import RunPlan
from interp_harness.harness.store.models import Run
from interp_harness.harness.store.repo import Store

MOUNT = "/mcp"


class McpOwners:
    """Which API token created which run of an agent that meets its client over MCP."""

    def __init__(self, max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS) -> None:
        """`max_message_chars`: the operator's agent message cap, one MCP call's arguments."""
        # every request needs an episode's token
        self.app = McpApp(rebinding_protection=False, max_message_chars=max_message_chars)
        self._owners: dict[str, str] = {}

    @staticmethod
    def _caller(request: Request) -> str | None:
        token = bearer(request.headers)
        return None if token is None else token_key(token)

    def created(self, request: Request, store: Store, run: Run, plan: RunPlan) -> list[Endpoint]:
        """The new run's endpoints, for the reply to its creator, who becomes its owner."""
        caller = self._caller(request)
        if caller is not None:
            self._owners[run.id] = caller
        store_episodes_now(store, run, plan)
        return self.endpoints(request, store, run.id)

    def for_owner(self, request: Request, store: Store, run_id: str) -> list[Endpoint] | None:
        owner = self._owners.get(run_id)
        if owner is None or self._caller(request) != owner:
            return None
        return self.endpoints(request, store, run_id)

    def endpoints(self, request: Request, store: Store, run_id: str) -> list[Endpoint]:
        base = str(request.base_url).rstrip("/") + MOUNT
        return issue_endpoints(store, run_id, base, self.app.rendezvous)
