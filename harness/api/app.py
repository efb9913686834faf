"""The FastAPI app: runs, episodes, live events, targets, agents. Scheduler runs in the same process.

Mutating routes need `Authorization: Bearer <token>` when HARNESS_API_TOKENS is set.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from fastapi import Depends, FastAPI, Header, HTTPException, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from sqlalchemy import text
from starlette.background import BackgroundTask

from harness.api import schemas as S
from harness.api.limits import BodyLimit, StreamSlots
from harness.api.nul_guard import RejectNul
from harness.policy import ApiPolicy, RequestInvalid
from harness.preflight import PreflightError, preflight
from harness.scheduler import (
    CatalogCache,
    Scheduler,
    SelectionError,
    create_run,
    load_score_hook,
    make_target_client,
)
from harness.settings import Settings, load_plugins
from harness.store import RUN_TERMINAL, current_revision, make_engine
from harness.store.models import Event
from harness.store.repo import Store
from harness.store.specs import RunSpec
from harness.target_client import TargetClient

ERRORS = {
    400: {"model": S.ErrorOut, "description": "bad input (says what is wrong)"},
    401: {"model": S.ErrorOut, "description": "missing or wrong bearer token"},
}
NOT_FOUND = {404: {"model": S.ErrorOut, "description": "no such id"}}
MAX_OFFSET = 1_000_000_000  # beyond any store's size, far inside SQLite's 64-bit integers
MAX_EVENT_ID = 2**62


@dataclass
class Services:
    settings: Settings
    store: Store
    catalogs: CatalogCache
    client: TargetClient
    scheduler: Scheduler


def create_app(settings: Settings | None = None, *, run_scheduler: bool = True) -> FastAPI:
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        load_plugins(settings)
        store = Store(make_engine(settings.url))  # applies pending migrations
        catalogs = CatalogCache()
        client = make_target_client(settings, catalogs)
        sched = Scheduler(
            store,
            client,
            settings=settings,
            catalogs=catalogs,
            score_hook=load_score_hook(settings.score_hook),
        )
        app.state.services = Services(settings, store, catalogs, client, sched)
        if run_scheduler:
            sched.start()
        try:
            yield
        finally:
            await sched.stop()
            await client.aclose()
            store.engine.dispose()
            if settings.sandbox != "inprocess":
                from harness.sandbox.workdir import release_instance

                # uvicorn re-raises SIGTERM after shutdown, which skips atexit: clean up here
                release_instance()

    app = FastAPI(
        title="interp-harness",
        version="0.1.0",
        summary="Evaluate automated-interpretability agents (FIND and more).",
        lifespan=lifespan,
    )

    policy = ApiPolicy.from_settings(settings)
    # Building a find-gen catalog for a seed not loaded yet costs seconds of CPU: one at a time,
    # and (with tokens configured) only for callers with a token (issue 27).
    seed_builds = threading.BoundedSemaphore(1)
    app.add_middleware(BodyLimit, max_bytes=settings.api_max_body_bytes)
    app.add_middleware(RejectNul)
    streams = StreamSlots(settings.sse_max_streams, settings.sse_max_per_client)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        """FastAPI's 422 without the offending input: it may be a key, a NaN or a lone surrogate
        (neither of which JSON can carry back, which turned bad input into a 500)."""
        return JSONResponse(status_code=422, content={"detail": S.validation_errors(exc.errors())})

    def services(request: Request) -> Services:
        return request.app.state.services

    def authorised(authorization: str | None = Header(None)) -> bool:
        """True when no tokens are configured or the request carries one of them."""
        tokens = settings.tokens
        if not tokens:
            return True
        scheme, _, token = (authorization or "").partition(" ")
        return scheme.lower() == "bearer" and any(
            hmac.compare_digest(token.encode(), t.encode()) for t in tokens
        )

    def require_token(ok: bool = Depends(authorised)) -> None:
        if not ok:
            raise HTTPException(
                401,
                "missing or invalid bearer token (send 'Authorization: Bearer <token>')",
                headers={"WWW-Authenticate": "Bearer"},
            )

    def get_run_or_404(svc: Services, run_id: str):  # type: ignore[no-untyped-def]
        run = svc.store.get_run(run_id)
        if run is None:
            raise HTTPException(404, f"no run with id {run_id!r}")
        return run

    # imported here: harness.web reads harness.api's schemas, so a module-level import would
    # make `import harness.web` (before harness.api) circular
    from harness.web import router as web_router

    app.include_router(web_router)  # the web UI (docs/web.md): /, /ui/...

    @app.get("/healthz", response_model=S.HealthOut)
    def healthz(svc: Services = Depends(services)) -> S.HealthOut:
        with svc.store.engine.connect() as c:
            c.execute(text("SELECT 1"))
        return S.HealthOut(
            status="ok",
            database=svc.store.engine.dialect.name,
            schema_revision=current_revision(svc.store.engine),
            sandbox=svc.settings.sandbox,
        )

    @app.post(
        "/runs",
        response_model=S.RunOut,
        status_code=201,
        responses=ERRORS,
        dependencies=[Depends(require_token)],
    )
    async def post_run(spec: RunSpec, svc: Services = Depends(services)) -> S.RunOut:
        """Store a run (queued) and return at once; the scheduler starts it.

        Agents: the built-in, registered and installed ones (GET /agents); `agent_options` must
        fit the agent's declared options; endpoints and keys come from the operator's provider
        profiles, picked by `agent_options.profile` (docs/security.md). A run that cannot work
        (no key, endpoint down, unknown model, empty selection, backbone or judge down) is
        refused with 400 and not stored (harness/preflight.py)."""
        if svc.settings.agent_isolation == "none":  # in-process agents are for the CLI only
            raise HTTPException(403, "agent isolation 'none' is refused over REST")
        try:
            # loading a catalog and probing endpoints take a while: keep the event loop running
            await asyncio.to_thread(preflight, spec, svc.settings, svc.catalogs, policy=policy)
            run = await asyncio.to_thread(create_run, svc.store, spec, svc.catalogs, policy=policy)
        except RequestInvalid as e:
            raise RequestValidationError(e.errors) from e
        except (SelectionError, PreflightError) as e:
            raise HTTPException(400, str(e)) from e
        svc.scheduler.wake()
        return S.run_out(run)

    @app.get("/runs", response_model=list[S.RunListItem])
    def list_runs(
        status: str | None = None,
        limit: int = Query(100, ge=1, le=1000),
        offset: int = Query(0, ge=0, le=MAX_OFFSET),
        svc: Services = Depends(services),
    ) -> list[S.RunListItem]:
        """Newest first, one page (`limit`, `offset`); each item without the run's options and
        target ids (those are at GET /runs/{id})."""
        return [
            S.run_list_item(r)
            for r in svc.store.list_runs(status=status, limit=limit, offset=offset)
        ]

    @app.get("/runs/{run_id}", response_model=S.RunDetail, responses=NOT_FOUND)
    def get_run(run_id: str, svc: Services = Depends(services)) -> S.RunDetail:
        return S.run_detail(svc.store, get_run_or_404(svc, run_id))

    @app.get("/runs/{run_id}/episodes", response_model=list[S.EpisodeOut], responses=NOT_FOUND)
    def run_episodes(
        run_id: str, status: str | None = None, svc: Services = Depends(services)
    ) -> list[S.EpisodeOut]:
        get_run_or_404(svc, run_id)
        eps = svc.store.episodes(run_id, status=[status] if status else None, with_answer=False)
        return [S.episode_out(e) for e in eps]

    @app.get("/episodes/{episode_id}", response_model=S.EpisodeDetail, responses=NOT_FOUND)
    def get_episode(
        episode_id: str, svc: Services = Depends(services), show_truth: bool = Depends(authorised)
    ) -> S.EpisodeDetail:
        """The transcript: messages, target calls (inputs, outputs, errors) and scores. Messages
        and the final answer are cut to PREVIEW_CHARS characters; a cut one says so and links to
        its full text (`content_url`, `final_answer_url`). With API tokens configured, score
        details that carry ground truth (true intervals, expected outputs, the judge's tests)
        need a token."""
        ep = svc.store.get_episode(episode_id, with_answer=False)
        if ep is None:
            raise HTTPException(404, f"no episode with id {episode_id!r}")
        return S.episode_detail(svc.store, ep, show_truth=show_truth, preview=True)

    def full_text(
        svc: Services, episode_id: str, step: int | None, offset: int, limit: int | None
    ) -> StreamingResponse:
        chunks = svc.store.text_chunks(episode_id, step, start=offset, length=limit)
        if chunks is None:
            what = "final answer" if step is None else f"message at step {step}"
            raise HTTPException(404, f"episode {episode_id!r} has no {what}")
        return StreamingResponse(
            (part.encode() for part in chunks), media_type="text/plain; charset=utf-8"
        )

    text_responses = {
        **NOT_FOUND,
        200: {
            "description": "the text, streamed",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        },
    }
    offset_q = Query(0, ge=0, le=MAX_OFFSET, description="first character (0-based)")
    limit_q = Query(None, ge=1, le=MAX_OFFSET, description="characters (default: to the end)")

    @app.get("/episodes/{episode_id}/messages/{step}/content", responses=text_responses)
    def message_content(
        episode_id: str,
        step: int = Path(..., ge=0, le=MAX_OFFSET),
        offset: int = offset_q,
        limit: int | None = limit_q,
        svc: Services = Depends(services),
    ) -> StreamingResponse:
        """A message's full text (or the part from `offset`, `limit` characters long), streamed
        from the store a megabyte at a time."""
        return full_text(svc, episode_id, step, offset, limit)

    @app.get("/episodes/{episode_id}/final_answer", responses=text_responses)
    def final_answer(
        episode_id: str,
        offset: int = offset_q,
        limit: int | None = limit_q,
        svc: Services = Depends(services),
    ) -> StreamingResponse:
        """The episode's full final answer (or a part of it), streamed."""
        return full_text(svc, episode_id, None, offset, limit)

    @app.get(
        "/runs/{run_id}/events",
        response_model=list[S.EventOut],
        responses={
            **NOT_FOUND,
            429: {"model": S.ErrorOut, "description": "too many open event streams"},
            200: {
                "description": "server-sent events (text/event-stream; `data` is an EventOut) "
                "or, with stream=false, a JSON list of EventOut",
                "content": {"text/event-stream": {}},
            },
        },
    )
    async def run_events(
        run_id: str,
        request: Request,
        after: int = Query(0, ge=0, le=MAX_EVENT_ID, description="only events with a larger id"),
        stream: bool = Query(True, description="false: return the stored events as JSON"),
        last_event_id: str | None = Header(None),
        svc: Services = Depends(services),
    ):  # type: ignore[no-untyped-def]
        """Live progress: run status changes, episode starts and ends, and one event per step.
        The stream ends after the run reaches a final state."""
        get_run_or_404(svc, run_id)
        if last_event_id and last_event_id.isascii() and last_event_id.isdigit():
            after = max(after, min(int(last_event_id), MAX_EVENT_ID))
        if not stream:
            return [S.event_out(e) for e in svc.store.events(run_id, after=after)]
        client = request.client.host if request.client else "?"
        refused = streams.acquire(client)
        if refused:
            raise HTTPException(429, refused + "; close one, or use stream=false and poll")
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                streams.release(client)

        async def gen() -> AsyncIterator[str]:
            try:
                async for chunk in event_stream(after):
                    yield chunk
            finally:
                release()

        def frame(e: Event) -> str:
            return f"id: {e.id}\nevent: {e.kind}\ndata: {S.event_out(e).model_dump_json()}\n\n"

        async def event_stream(after: int) -> AsyncIterator[str]:
            last, idle = after, 0.0
            while True:
                events = await asyncio.to_thread(svc.store.events, run_id, after=last)
                for e in events:
                    last = e.id  # type: ignore[assignment]
                    yield frame(e)
                if not events:
                    run = await asyncio.to_thread(svc.store.get_run, run_id)
                    if run is None or run.status in RUN_TERMINAL:
                        # the final status event commits with the status itself, possibly
                        # between the read above and this one: send what came meanwhile
                        for e in await asyncio.to_thread(svc.store.events, run_id, after=last):
                            yield frame(e)
                        yield f"event: end\ndata: {json.dumps({'status': run and run.status})}\n\n"
                        return
                    if await request.is_disconnected():
                        return
                    await asyncio.sleep(0.25)
                    idle += 0.25
                    if idle >= 15:  # keep proxies from closing an idle stream
                        idle = 0.0
                        yield ": keep-alive\n\n"

        return StreamingResponse(
            gen(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache"},
            background=BackgroundTask(release),  # also when the stream never started
        )

    @app.post(
        "/runs/{run_id}/cancel",
        response_model=S.RunOut,
        responses={**ERRORS, **NOT_FOUND, 409: {"model": S.ErrorOut}},
        dependencies=[Depends(require_token)],
    )
    async def cancel_run(run_id: str, svc: Services = Depends(services)) -> S.RunOut:
        # async: the scheduler's tasks may only be cancelled from the event loop's thread
        run = get_run_or_404(svc, run_id)
        if not svc.scheduler.cancel_run(run_id):
            raise HTTPException(409, f"run {run_id} has already ended ({run.status})")
        return S.run_out(get_run_or_404(svc, run_id))

    @app.get(
        "/runs/{run_id}/report",
        response_model=S.ReportOut,
        responses={**NOT_FOUND, 501: {"model": S.ErrorOut}},
    )
    def run_report(run_id: str, svc: Services = Depends(services)) -> S.ReportOut:
        """The evaluator's report (success rates per category, with counts and errors)."""
        run = get_run_or_404(svc, run_id)
        try:
            return S.build_report(svc.store, run)
        except S.ReportUnavailable as e:
            raise HTTPException(501, str(e)) from e

    @app.get(
        "/targets",
        response_model=list[S.PublicTargetOut],
        responses={
            **ERRORS,
            503: {"model": S.ErrorOut, "description": "another new seed is being built"},
        },
    )
    def list_targets(
        dataset: str = Query(..., description="find-v1 | find-gen | find-import | ..."),
        family: str | None = None,
        variant: str | None = None,
        gen_seed: int = Query(
            0,
            ge=0,
            lt=2**32,
            description="find-gen generator seed; one the server has not loaded yet needs a "
            "token (when tokens are configured), and is built one at a time",
        ),
        limit: int = Query(100, ge=1, le=10_000),
        offset: int = Query(0, ge=0, le=MAX_OFFSET),
        svc: Services = Depends(services),
        ok: bool = Depends(authorised),
    ) -> list[S.PublicTargetOut]:
        """Public views only: never ground truth."""
        from function_store.catalog import UnknownDataset
        from function_store.datasets import DataUnavailable

        known = gen_seed == settings.gen_seed or gen_seed in svc.catalogs.seeds()
        if not known and not ok:
            raise HTTPException(
                401,
                f"gen_seed {gen_seed} is not loaded on this server; a new seed needs a bearer "
                f"token (loaded: {sorted({settings.gen_seed, *svc.catalogs.seeds()})})",
                headers={"WWW-Authenticate": "Bearer"},
            )
        if not known and not seed_builds.acquire(blocking=False):
            raise HTTPException(
                503, "another new gen_seed is being built; retry", headers={"Retry-After": "5"}
            )
        try:
            targets = svc.catalogs.get(gen_seed).list(
                dataset=dataset, family=family, variant=variant
            )
        except (UnknownDataset, DataUnavailable, ValueError) as e:
            raise HTTPException(400, str(e)) from e
        finally:
            if not known:
                seed_builds.release()
        return [t.public_view() for t in targets[offset : offset + limit]]

    @app.get("/agents", response_model=list[S.AgentOut])
    def list_agents() -> list[S.AgentOut]:
        try:
            from agents.registry import list_agents as registry_list
        except ImportError:
            return []
        return [S.AgentOut.model_validate(a.model_dump()) for a in registry_list()]

    return app
