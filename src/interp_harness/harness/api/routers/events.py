"""GET /runs/{id}/events: a run's live progress, as server-sent events or a JSON list."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from interp_harness.harness.api import schemas as S
from interp_harness.harness.api.routers import deps
from interp_harness.harness.api.routers.deps import (
    MAX_EVENT_ID,
    NOT_FOUND,
    ApiState,
    api_state,
    get_run_or_404,
    services,
)
from interp_harness.harness.services import Services
from interp_harness.harness.store import RUN_TERMINAL
from interp_harness.harness.store.models import Event

router = APIRouter()


@router.get(
    "/runs/{run_id}/events",
    response_model=list[S.EventOut],
    responses={
        **NOT_FOUND,
        **deps.error_reply(429, "too many open event streams"),
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
    api: ApiState = Depends(api_state),
):  # type: ignore[no-untyped-def]
    """Live progress: run status changes, episode starts and ends, and one event per step.
    The stream ends after the run reaches a final state."""
    get_run_or_404(svc, run_id)
    if last_event_id and last_event_id.isascii() and last_event_id.isdigit():
        after = max(after, min(int(last_event_id), MAX_EVENT_ID))
    if not stream:
        return [S.event_out(e) for e in svc.store.events.of_run(run_id, after=after)]
    client = request.client.host if request.client else "?"
    refused = api.streams.acquire(client)
    if refused:
        raise HTTPException(429, refused + "; close one, or use stream=false and poll")
    released = False

    def release() -> None:
        nonlocal released
        if not released:
            released = True
            api.streams.release(client)

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
            events = await asyncio.to_thread(svc.store.events.of_run, run_id, after=last)
            for e in events:
                last = e.id  # type: ignore[assignment]
                yield frame(e)
            if not events:
                run = await asyncio.to_thread(svc.store.runs.get, run_id)
                if run is None or run.status in RUN_TERMINAL:
                    # the final status event commits with the status itself, possibly
                    # between the read above and this one: send what came meanwhile
                    for e in await asyncio.to_thread(svc.store.events.of_run, run_id, after=last):
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
