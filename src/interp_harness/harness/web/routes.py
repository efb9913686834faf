"""The web UI's routes: server-rendered pages over the same store and services as the REST API.

Pages: `/` (runs, with the run form), `/ui/runs/{id}`, `/ui/episodes/{id}` (transcript, and the
panels of the episode's benchmark: interp_harness.harness.web.panels), `/ui/episodes/{id}/panels/{panel}` (a
panel's asset alone, also at its file name: `/ui/episodes/{id}/plot.svg`), `/ui/compare`,
`/ui/login`. The run form is forwarded to `POST /runs` of this same app, so it
passes the API's own validation, policy and token check.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

import httpx
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from interp_harness.evaluator.panel import Panel, PanelView
from interp_harness.evaluator.report import run_line
from interp_harness.harness.domain.spec import (
    MAX_OPTIONS_CHARS,
    episode_epoch,
    episode_total,
    spec_epochs,
)
from interp_harness.harness.rate_limit import TooManyFailures, client_address
from interp_harness.harness.runs import views as V
from interp_harness.harness.runs.compare import build_comparison
from interp_harness.harness.store.models import RUN_TERMINAL
from interp_harness.harness.web import auth, panels, plots, queries, run_form, views
from interp_harness.harness.web.favicon import FAVICON

HERE = Path(__file__).resolve().parent
templates = Jinja2Templates(directory=str(HERE / "templates"))
templates.env.globals["run_line"] = run_line  # a report row's run and configuration
STATIC = {"web.css": "text/css", "live.js": "text/javascript"}
RUN_STATUSES = ("queued", "running", "completed", "failed", "cancelled")
MAX_FORM_BYTES = 16_384
# the run form may carry agent options as JSON (at most MAX_OPTIONS_CHARS), percent-encoded
MAX_RUN_FORM_BYTES = MAX_FORM_BYTES + 3 * MAX_OPTIONS_CHARS
MAX_COMPARE = 500  # common targets listed on the compare page

router = APIRouter(include_in_schema=False)
svg_cache = plots.SvgCache()
summaries = views.SummaryCache()


def _svc(request: Request) -> Any:
    return request.app.state.services


def _page(request: Request, name: str, status_code: int = 200, **ctx: Any) -> HTMLResponse:
    ctx |= {
        "authorised": auth.is_authorised(request),
        "tokens_configured": bool(auth.configured_tokens(request)),
        "csrf": auth.csrf_value(request),
    }
    response = templates.TemplateResponse(request, name, ctx, status_code=status_code)
    auth.set_cookies(response, request)
    return response


def _not_found(request: Request, what: str) -> HTMLResponse:
    return _page(request, "error.html", 404, title="Not found", message=what)


@router.get("/favicon.ico", include_in_schema=False)
def favicon() -> Response:
    return Response(
        FAVICON, media_type="image/x-icon", headers={"Cache-Control": "public, max-age=86400"}
    )


@router.get("/ui/static/{name}")
def static(name: str) -> Response:
    if name not in STATIC:
        raise HTTPException(404, "no such file")
    return Response((HERE / "static" / name).read_bytes(), media_type=STATIC[name])


@router.get("/", response_class=HTMLResponse)
@router.get("/ui/runs", response_class=HTMLResponse)
def runs_list(
    request: Request,
    status: str | None = None,
    agent: str | None = None,
    dataset: str | None = None,
    cursor: str | None = Query(None, max_length=200),
) -> HTMLResponse:
    store = _svc(request).store
    page = queries.runs_page(
        store, status=status or None, agent=agent or None, dataset=dataset or None, cursor=cursor
    )
    rows = []
    for r in page.runs:
        counts = page.counts.get(r.id, {})
        metric = views.primary_metric(r.family, page.metrics.get(r.id, []))
        rows.append(
            {
                "run": r,
                "total": episode_total(r.spec, r.target_ids),
                "done": sum(n for s, n in counts.items() if s not in ("queued", "running")),
                "running": counts.get("running", 0),
                "errors": page.errors.get(r.id, {}),
                "metric": metric,
                "last_event": page.last_event.get(r.id, 0),
                "live": r.status not in RUN_TERMINAL,
                "imported": r.id in page.imported,
                "config": views.run_config(r.spec),
            }
        )
    filters = {"status": status or "", "agent": agent or "", "dataset": dataset or ""}
    next_url = None
    if page.next_cursor:
        next_url = "/?" + urlencode(
            {**{k: v for k, v in filters.items() if v}, "cursor": page.next_cursor}
        )
    return _runs_page(
        request,
        rows=rows,
        filters=filters,
        next_url=next_url,
        first_url="/?" + urlencode({k: v for k, v in filters.items() if v}) if cursor else None,
    )


def _runs_page(
    request: Request,
    status_code: int = 200,
    *,
    rows: list[dict[str, Any]],
    filters: dict[str, str],
    next_url: str | None,
    first_url: str | None,
    form: dict[str, str] | None = None,
    form_errors: list[str] | None = None,
) -> HTMLResponse:
    """runs.html: the list (or, after a refused form, none of it) with the filter and run forms."""
    agents, datasets = queries.filter_options(_svc(request).store)
    choices = run_form.choices(request.app.state.api.policy.allow_dotted_agents)
    return _page(
        request,
        "runs.html",
        status_code,
        rows=rows,
        filters=filters,
        statuses=RUN_STATUSES,
        filter_agents=agents,
        filter_datasets=datasets,
        next_url=next_url,
        first_url=first_url,
        choices=choices,
        form=form or run_form.defaults(choices.agents),
        form_errors=form_errors or [],
    )


@router.post("/ui/runs", response_class=HTMLResponse)
async def start_run(request: Request) -> Response:
    raw = await request.body()
    if len(raw) > MAX_RUN_FORM_BYTES:
        raise HTTPException(413, "form too large")
    parsed = parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True)
    fields = {k: v[0].strip() for k, v in parsed.items() if v}
    fields |= {k: fields.get(k, "") for k in run_form.BUDGETS}
    if not auth.csrf_ok(request, fields.get("csrf")):
        return _form_expired(request)
    headers = {}
    if (token := auth.session_token(request)) is not None:
        headers["Authorization"] = f"Bearer {token}"
    transport = httpx.ASGITransport(app=request.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://harness-web") as client:
        r = await client.post(
            "/runs", json=run_form.form_body(fields), headers=headers, timeout=300
        )
    if r.status_code == 201:
        return RedirectResponse(f"/ui/runs/{r.json()['id']}", status_code=303)
    detail = (
        r.json().get("detail")
        if r.headers.get("content-type", "").startswith("application/json")
        else r.text
    )
    if isinstance(detail, list):
        errors = [
            f"{'.'.join(str(x) for x in e.get('loc', [])[1:])}: {e.get('msg')}" for e in detail
        ]
    else:
        errors = [str(detail)]
    if r.status_code == 401:
        errors = ["this server needs a token to start runs: log in first"]
    return _runs_page(
        request,
        r.status_code,
        rows=[],
        filters={"status": "", "agent": "", "dataset": ""},
        next_url=None,
        first_url="/",
        form=fields,
        form_errors=errors,
    )


@router.get("/ui/runs/{run_id}", response_class=HTMLResponse)
def run_page(
    request: Request,
    run_id: str,
    status: str | None = None,
    after: int | None = Query(None, ge=-1, le=10**9),
    before: int | None = Query(None, ge=0, le=10**9),
) -> HTMLResponse:
    svc = _svc(request)
    run = svc.store.runs.get(run_id)
    if run is None:
        return _not_found(request, f"no run with id {run_id}")
    detail, report_out = summaries.get(svc.store, run)
    report = report_error = None
    if isinstance(report_out, str):
        report_error = report_out
    else:
        from interp_harness.evaluator.report import Report

        report = Report.model_validate(report_out.report)
    queries_plot = None
    if report is not None and report.queries:
        key = (
            ("queries", run.id, run.updated_at.isoformat()) if run.status in RUN_TERMINAL else None
        )
        queries_plot = plots.cached(svg_cache, key, lambda: plots.queries_svg(report.queries))
    floor = svc.store.runs.get(detail.floor_run_id) if detail.floor_run_id else None
    floor_detail = summaries.get(svc.store, floor)[0] if floor else None
    page = queries.episodes_page(
        svc.store, run.id, status=status or None, after=after, before=before
    )
    scores = svc.store.scores.of_episodes([e.id for e in page.episodes])
    by_ep: dict[str, list[Any]] = {}
    for s in scores:
        by_ep.setdefault(s.episode_id, []).append(s)
    eps = []
    for e in page.episodes:
        primary = views.headline_metric(e.family)
        sc = next((s for s in by_ep.get(e.id, []) if s.metric == primary), None)
        epoch = episode_epoch(e.idx, len(run.target_ids))
        eps.append({"ep": e, "score": sc, "metric": primary, "epoch": epoch})
    base = {"status": status} if status else {}
    return _page(
        request,
        "run.html",
        run=run,
        config=views.run_config(run.spec),
        detail=detail,
        report=report,
        report_error=report_error,
        queries_plot=queries_plot,
        floor=floor_detail,
        episodes=eps,
        epochs=spec_epochs(run.spec),  # repeated samples: the episode list has an epoch column
        ep_status=status or "",
        prev_url=f"?{urlencode({**base, 'before': page.prev_before})}"
        if page.prev_before is not None
        else None,
        next_url=f"?{urlencode({**base, 'after': page.next_after})}"
        if page.next_after is not None
        else None,
        live=run.status not in RUN_TERMINAL,
        last_event=queries.last_event_id(svc.store, run.id),
        # rounds and target calls of running episodes (live.js keeps them current)
        running={} if run.status in RUN_TERMINAL else svc.store.episodes.running_counters(run.id),
    )


def _panel_view(
    detail: V.EpisodeDetail, show_truth: bool, panel: Panel, target: Callable[[], Any]
) -> Callable[[], PanelView]:
    """What `panel` reads, built on demand (a cached panel needs none of it); `target()` is the
    full target, called only when the viewer may see ground truth."""

    def view() -> PanelView:
        return PanelView(
            episode=detail,
            answer=views.split_answer(detail.final_answer, detail.scores),
            target=target() if show_truth else None,
            show_truth=show_truth,
            asset_url=panels.asset_url(detail.id, panel),
        )

    return view


@router.get("/ui/episodes/{episode_id}", response_class=HTMLResponse)
async def episode_page(request: Request, episode_id: str) -> HTMLResponse:
    svc = _svc(request)
    ep = svc.store.episodes.get(episode_id, with_answer=False)
    if ep is None:
        return _not_found(request, f"no episode with id {episode_id}")
    run = svc.store.runs.get(ep.run_id)
    detail = V.episode_detail(svc.store, ep, preview=True)  # long texts cut, with links
    show_truth = views.may_see_truth(ep.status, auth.is_authorised(request))
    target = views.load_target(svc.catalogs, run, ep.target_id) if show_truth else None
    answer = views.split_answer(detail.final_answer, detail.scores)
    sections = []
    for panel in panels.panels_of(ep.family):
        view = _panel_view(detail, show_truth, panel, lambda: target)
        # a panel may draw (matplotlib): off the event loop
        out = await asyncio.to_thread(panels.render, panel, detail, show_truth, view)
        if out is not None:
            sections.append(out.html)
    return _page(
        request,
        "episode.html",
        run=run,
        ep=detail,
        turns=views.turns(detail, (run.spec.get("protocol") or {}).get("mode", "default")),
        answer=answer,
        scores=views.score_rows(detail.scores, show_truth),
        show_truth=show_truth,
        truth_reason=(
            "the episode is still running"
            if ep.status in ("queued", "running")
            else "log in with a token to see it"
        ),
        target=target,
        panels=sections,
        show_output=panels.output_renderer(ep.family),
    )


async def _panel_asset(request: Request, episode_id: str, name: str) -> Response:
    """Built off the event loop (loading the episode and its detail took ~50 ms of it per request,
    cached or not), and for callers without a token within the operator's slots: an anonymous
    loop of requests for plots gets 503s, not the server's CPU."""
    authorised = auth.is_authorised(request)
    if authorised:
        return await asyncio.to_thread(_build_asset, request, episode_id, name, True)
    slots, client = request.app.state.api.anon_assets, client_address(request.client)
    if (why := slots.acquire(client)) is not None:
        raise HTTPException(503, f"busy: {why}", headers={"Retry-After": "1"})
    try:
        return await asyncio.to_thread(_build_asset, request, episode_id, name, False)
    finally:
        slots.release(client)


def _build_asset(request: Request, episode_id: str, name: str, authorised: bool) -> Response:
    svc = _svc(request)
    ep = svc.store.episodes.get(episode_id, with_answer=False)
    panel = panels.panel_named(ep.family, name) if ep is not None else None
    if ep is None or panel is None:
        raise HTTPException(404, f"no episode with that id and a panel {name!r}")
    detail = V.episode_detail(svc.store, ep, preview=True)
    show_truth = views.may_see_truth(ep.status, authorised)
    run = svc.store.runs.get(ep.run_id)
    view = _panel_view(
        detail, show_truth, panel, lambda: views.load_target(svc.catalogs, run, ep.target_id)
    )
    out = panels.render(panel, detail, show_truth, view)
    if out is None or out.asset is None:
        raise HTTPException(404, f"panel {name!r} has nothing to serve for this episode")
    return Response(out.asset, media_type=panel.media_type)


@router.get("/ui/episodes/{episode_id}/panels/{panel}")
async def episode_panel(request: Request, episode_id: str, panel: str) -> Response:
    """A benchmark panel's asset alone (e.g. a plot's SVG)."""
    return await _panel_asset(request, episode_id, panel)


@router.get("/ui/episodes/{episode_id}/{file}")
async def episode_panel_file(request: Request, episode_id: str, file: str) -> Response:
    """The same under the asset's file name (`/ui/episodes/{id}/plot.svg`, linked from pages)."""
    return await _panel_asset(request, episode_id, file)


@router.get("/ui/compare", response_class=HTMLResponse)
def compare(
    request: Request,
    a: str | None = Query(None, max_length=64),
    b: str | None = Query(None, max_length=64),
) -> HTMLResponse:
    store = _svc(request).store
    runs = queries.runs_page(store, limit=100).runs
    ra, rb = (store.runs.get(a) if a else None), (store.runs.get(b) if b else None)
    rows: list[dict[str, Any]] = []
    wins = {"a": 0, "b": 0, "tie": 0}
    paired = None
    if ra is not None and rb is not None:
        # a target's episodes, one per epoch (a run with repeated samples has several)
        ta: dict[str, list[Any]] = {}
        tb: dict[str, list[Any]] = {}
        for run, by in ((ra, ta), (rb, tb)):
            for e in store.episodes.of_run(run.id, with_answer=False):
                by.setdefault(e.target_id, []).append(e)
        common = [t for t in ta if t in tb][:MAX_COMPARE]
        ids = [e.id for t in common for e in ta[t] + tb[t]]
        scores: dict[tuple[str, str], Any] = {
            (s.episode_id, s.metric): s for s in store.scores.of_episodes(ids)
        }
        ea = {t: ta[t][0] for t in common}  # each side's link: the target's first epoch
        eb = {t: tb[t][0] for t in common}
        # every other score of an episode (NMSE beside code_success), references left out
        others: dict[str, list[Any]] = {}
        for (eid, m), sc in scores.items():
            if not m.endswith(("_ceiling", "_ceiling_strict", "_vacuous")):
                others.setdefault(eid, []).append(sc)
        for t in common:
            metric = views.headline_metric(ea[t].family) or ""
            sa = views.target_score(ta[t], metric, scores, ra.spec)
            sb = views.target_score(tb[t], metric, scores, rb.spec)
            va = sa.value if sa is not None and sa.status == "ok" else None
            vb = sb.value if sb is not None and sb.status == "ok" else None
            won = None
            if va is not None and vb is not None:
                won = "a" if va > vb else "b" if vb > va else "tie"
                wins[won] += 1
            rows.append(
                {
                    "target": t,
                    "metric": metric,
                    "a": ea[t],
                    "b": eb[t],
                    "sa": sa,
                    "sb": sb,
                    "won": won,
                    "ia": sum(e.inputs for e in ta[t]) / len(ta[t]),
                    "ib": sum(e.inputs for e in tb[t]) / len(tb[t]),
                    "oa": [x for x in others.get(ea[t].id, []) if x.metric != metric],
                    "ob": [x for x in others.get(eb[t].id, []) if x.metric != metric],
                }
            )
        paired = build_comparison(store, [ra, rb])
    return _page(
        request,
        "compare.html",
        runs=runs,
        ra=ra,
        rb=rb,
        a=a or "",
        b=b or "",
        rows=rows,
        wins=wins,
        max_rows=MAX_COMPARE,
        paired=paired,
        config_a=views.run_config(ra.spec) if ra is not None else "",
        config_b=views.run_config(rb.spec) if rb is not None else "",
    )


@router.get("/ui/login", response_class=HTMLResponse)
def login_form(request: Request) -> HTMLResponse:
    return _page(request, "login.html", error=None)


@router.post("/ui/login", response_class=HTMLResponse)
async def login(request: Request) -> Response:
    raw = await request.body()
    if len(raw) > MAX_FORM_BYTES:
        raise HTTPException(413, "form too large")
    form = parse_qs(raw.decode("utf-8", "replace"))
    if not auth.csrf_ok(request, (form.get("csrf") or [""])[0]):
        return _form_expired(request)
    token = (form.get("token") or [""])[0].strip()
    if token:  # an empty form is no guess
        try:  # before the comparison: a refused address learns nothing of its token
            auth.check_login_budget(request)
        except TooManyFailures as e:
            resp = _page(request, "login.html", 429, error=e.message)
            resp.headers["Retry-After"] = str(e.retry_after)
            return resp
    if not auth.valid_token(request, token):
        if token:
            auth.login_failed(request)
        return _page(
            request, "login.html", 401, error="that token is not one of this server's tokens"
        )
    resp = RedirectResponse("/", status_code=303)
    auth.log_in(resp, request, token)
    return resp


@router.post("/ui/logout")
async def logout(request: Request) -> Response:
    raw = await request.body()
    if len(raw) > MAX_FORM_BYTES:
        raise HTTPException(413, "form too large")
    if not auth.csrf_ok(request, (parse_qs(raw.decode("utf-8", "replace")).get("csrf") or [""])[0]):
        return _form_expired(request)
    resp = RedirectResponse("/", status_code=303)
    auth.log_out(resp, request)
    return resp


def _form_expired(request: Request) -> HTMLResponse:
    return _page(
        request,
        "error.html",
        403,
        title="Form expired",
        message="reload the page and submit the form again",
    )
