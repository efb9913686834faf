"""The FastAPI app: runs, episodes, live events, targets, agents (routers by resource in
harness/api/routers/), and the web UI. The scheduler runs in the same process.

Mutating routes need `Authorization: Bearer <token>` when HARNESS_API_TOKENS is set.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from interp_harness.harness.api import schemas as S
from interp_harness.harness.api.limits import BodyLimit
from interp_harness.harness.api.mcp import MOUNT as MCP_MOUNT
from interp_harness.harness.api.mcp import McpOwners
from interp_harness.harness.api.nul_guard import RejectNul
from interp_harness.harness.api.routers import ROUTERS
from interp_harness.harness.api.routers.deps import ApiState
from interp_harness.harness.services import build_services
from interp_harness.harness.settings import Settings


def create_app(settings: Settings | None = None, *, run_scheduler: bool = True) -> FastAPI:
    settings = settings or Settings()

    mcp = McpOwners(settings.agent_max_message_chars)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        svc = build_services(settings)  # applies pending migrations
        app.state.services = svc
        if run_scheduler:
            svc.scheduler.start()
        try:
            async with mcp.app.running():  # external agents' MCP sessions (harness/api/mcp.py)
                yield
        finally:
            await svc.aclose()
            if settings.sandbox != "inprocess":
                from interp_harness.harness.sandbox.workdir import release_instance

                # uvicorn re-raises SIGTERM after shutdown, which skips atexit: clean up here
                release_instance()

    app = FastAPI(
        title="interp-harness",
        version="0.1.0",
        summary="Evaluate automated-interpretability agents (FIND and more).",
        lifespan=lifespan,
    )
    app.state.api = ApiState.from_settings(settings)
    app.state.mcp = mcp
    mcp.app.failures = app.state.api.failures  # one budget of wrong tokens: REST, web, MCP
    app.mount(MCP_MOUNT, mcp.app)
    app.add_middleware(BodyLimit, max_bytes=settings.api_max_body_bytes)
    app.add_middleware(RejectNul)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        """FastAPI's 422 without the offending input: it may be a key, a NaN or a lone surrogate
        (neither of which JSON can carry back, which turned bad input into a 500)."""
        return JSONResponse(status_code=422, content={"detail": S.validation_errors(exc.errors())})

    # imported here: interp_harness.harness.web reads interp_harness.harness.api's schemas, so a module-level import would
    # make `import interp_harness.harness.web` (before interp_harness.harness.api) circular
    from interp_harness.harness.web import router as web_router

    app.include_router(web_router)  # the web UI (docs/web.md): /, /ui/...
    for router in ROUTERS:
        app.include_router(router)
    return app
