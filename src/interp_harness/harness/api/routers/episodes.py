"""Episodes: the transcript, and the full texts of its messages and final answer."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Path, Query
from fastapi.responses import Response, StreamingResponse

from interp_harness.harness.api import schemas as S
from interp_harness.harness.api.routers.deps import MAX_OFFSET, NOT_FOUND, authorised, services
from interp_harness.harness.services import Services

router = APIRouter()


@router.get("/episodes/{episode_id}", response_model=S.EpisodeDetail, responses=NOT_FOUND)
def get_episode(
    episode_id: str, svc: Services = Depends(services), show_truth: bool = Depends(authorised)
) -> S.EpisodeDetail:
    """The transcript: messages, target calls (inputs, outputs, errors) and scores. Messages
    and the final answer are cut to PREVIEW_CHARS characters; a cut one says so and links to
    its full text (`content_url`, `final_answer_url`). With API tokens configured, score
    details that carry ground truth (true intervals, expected outputs, the judge's tests)
    need a token."""
    ep = svc.store.episodes.get(episode_id, with_answer=False)
    if ep is None:
        raise HTTPException(404, f"no episode with id {episode_id!r}")
    return S.episode_detail(svc.store, ep, show_truth=show_truth, preview=True)


def full_text(
    svc: Services, episode_id: str, step: int | None, offset: int, limit: int | None
) -> StreamingResponse:
    chunks = svc.store.episodes.text_chunks(episode_id, step, start=offset, length=limit)
    if chunks is None:
        what = "final answer" if step is None else f"message at step {step}"
        raise HTTPException(404, f"episode {episode_id!r} has no {what}")
    return StreamingResponse(
        (part.encode() for part in chunks), media_type="text/plain; charset=utf-8"
    )


TEXT_RESPONSES = {
    **NOT_FOUND,
    200: {
        "description": "the text, streamed",
        "content": {"text/plain": {"schema": {"type": "string"}}},
    },
}
OFFSET_Q = Query(0, ge=0, le=MAX_OFFSET, description="first character (0-based)")
LIMIT_Q = Query(None, ge=1, le=MAX_OFFSET, description="characters (default: to the end)")


@router.get("/episodes/{episode_id}/messages/{step}/content", responses=TEXT_RESPONSES)
def message_content(
    episode_id: str,
    step: int = Path(..., ge=0, le=MAX_OFFSET),
    offset: int = OFFSET_Q,
    limit: int | None = LIMIT_Q,
    svc: Services = Depends(services),
) -> StreamingResponse:
    """A message's full text (or the part from `offset`, `limit` characters long), streamed
    from the store a megabyte at a time."""
    return full_text(svc, episode_id, step, offset, limit)


PNG_RESPONSES = {
    **NOT_FOUND,
    200: {
        "description": "the figure's PNG",
        "content": {"image/png": {"schema": {"type": "string", "format": "binary"}}},
    },
}
# A figure's bytes come from the lab (checked as a PNG, harness/lab/figures.py): served as an
# image only, never sniffed as another type, and inert if opened as a document.
FIGURE_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
}


@router.get(
    "/episodes/{episode_id}/figures/{figure_id}.png",
    responses=PNG_RESPONSES,
    response_class=Response,
)
def figure(
    episode_id: str,
    figure_id: int = Path(..., ge=0, le=MAX_OFFSET),
    svc: Services = Depends(services),
) -> Response:
    """A figure one of the episode's lab cells made (protocol modes code and code-tools), the PNG
    the agent got; listed in the episode's `cells` (`figures[].url`)."""
    png = svc.store.lab.figure_png(episode_id, figure_id)
    if png is None:
        raise HTTPException(404, f"episode {episode_id!r} has no figure {figure_id}")
    return Response(png, media_type="image/png", headers=FIGURE_HEADERS)


@router.get("/episodes/{episode_id}/final_answer", responses=TEXT_RESPONSES)
def final_answer(
    episode_id: str,
    offset: int = OFFSET_Q,
    limit: int | None = LIMIT_Q,
    svc: Services = Depends(services),
) -> StreamingResponse:
    """The episode's full final answer (or a part of it), streamed."""
    return full_text(svc, episode_id, None, offset, limit)
