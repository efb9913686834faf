"""What a run and an episode look like from outside: the views the REST API serves (its OpenAPI
schemas), the CLI prints (`harness run`, `harness runs`, `harness export`) and the web pages show,
and the builders that read them from the store."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, model_validator

from interp_harness.agents.toolspec import ToolCall as ToolCallRef
from interp_harness.evaluator.api import ScoreResult
from interp_harness.evaluator.error_text import bounded, cause
from interp_harness.evaluator.errors import ErrorGroup, group_errors
from interp_harness.evaluator.report import EpochReducer, metric_interval, per_target
from interp_harness.function_store.models import CallOutput
from interp_harness.harness.domain.rendezvous import RENDEZVOUS, Endpoint
from interp_harness.harness.domain.spec import RunSpec, episode_epoch, episode_total
from interp_harness.harness.runs.report import episode_summaries
from interp_harness.harness.store.models import (
    EPISODE_TERMINAL,
    Episode,
    Event,
    LabCell,
    Message,
    Run,
    Score,
    TargetCall,
    ToolCall,
)
from interp_harness.harness.store.repo import Store
from interp_harness.harness.store.scores import missing_scores

IMPORTED = (
    "the run was imported from a file (`harness import-inspect`): its results are the file's "
    "claims, not measured by this server"
)


CAUSE = (
    "what `error` says first: the exception and its message, the provider's own error text "
    "(interp_harness.evaluator.error_text); `error` is the full text"
)


class _Cause(BaseModel):
    """Fills `error_cause` from `error` (a view with both fields)."""

    @model_validator(mode="after")
    def _fill_cause(self) -> Any:
        if getattr(self, "error_cause", None) is None and getattr(self, "error", None):
            self.error_cause = cause(self.error)  # type: ignore[attr-defined]
        return self


class _RunFields(BaseModel):
    id: str
    status: str
    agent: str
    dataset: str
    family: str | None
    n_targets: int
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    imported: bool = Field(False, description=IMPORTED)


class RunOut(_RunFields, _Cause):
    error_cause: str | None = Field(None, description=CAUSE)
    error: str | None
    spec: RunSpec
    # agent `external`: each unfinished episode's MCP endpoint and token, to the run's owner only
    mcp_endpoints: list[Endpoint] | None = None


class RunListItem(_RunFields, _Cause):
    """A run in GET /runs: small and bounded (no options, no target ids; GET /runs/{id} has them)."""

    variant: str | None
    floor_for: str | None
    error_cause: str | None = Field(None, description=CAUSE)
    error: str | None = Field(
        None, description="the run's error, cut to 500 characters (its middle: the cause is kept)"
    )


class Progress(BaseModel):
    total: int
    done: int
    by_status: dict[str, int]


class UsageOut(BaseModel):
    rounds: int = 0
    target_calls: int = 0
    inputs: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class MetricSummary(BaseModel):
    metric: str
    n: int = Field(
        description="targets with a value (with repeated samples, each target's epochs are "
        "reduced with the run's epoch_reducer first, as in the report)"
    )
    n_errors: int = Field(description="episodes whose scorer ended in error (not counted as 0)")
    mean: float | None = Field(description="the mean over those targets")


class RunDetail(RunOut):
    progress: Progress
    usage: UsageOut
    metrics: list[MetricSummary]
    errors_by_category: dict[str, int]
    errors: list[ErrorGroup] = Field(
        default_factory=list,
        description="every error with its message, grouped: episodes that ended in error, then "
        "scorer failures (never counted as scores)",
    )
    floor_run_id: str | None = Field(
        None,
        description="the run's floor run: its benchmark's floor agent on the same targets (its spec has "
        "floor_for=this id)",
    )
    waiting: list[str] = Field(
        default_factory=list,
        description="what the run's unstarted episodes wait for, as the process executing it "
        "knows it (agent external: its MCP client; empty elsewhere)",
    )


class EpisodeOut(_Cause):
    id: str
    run_id: str
    idx: int
    target_id: str
    dataset: str
    family: str
    variant: str
    status: str
    end_reason: str | None
    error_category: str | None
    error_cause: str | None = Field(None, description=CAUSE)
    error: str | None
    exemplar_init: bool
    rounds: int
    target_calls: int
    inputs: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    active_s: float
    scored: bool
    started_at: datetime | None
    finished_at: datetime | None
    epoch: int = Field(0, description="which repeated sample of its target (0 = the first)")


# Served messages and final answers are cut to this many characters (issue 27: an agent's 40 MB
# messages, read whole on every page view, took the server past a gigabyte); the full text is at
# the `*_url` route, streamed.
PREVIEW_CHARS = 20_000


class MessageOut(BaseModel):
    step: int
    role: str
    content: str = Field(description=f"the text, cut to {PREVIEW_CHARS} characters on the API")
    content_chars: int | None = Field(None, description="the full text's length in characters")
    truncated: bool = False
    content_url: str | None = Field(None, description="where the full text is, when truncated")
    resets_context: bool
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float | None
    model: str | None
    # protocol mode `tools` (the same visibility as the text: what the agent sent and read)
    tool_calls: list[ToolCallRef] = Field(
        default_factory=list, description="an assistant message's tool calls (protocol mode tools)"
    )
    tool_call_id: str | None = Field(None, description="on a `tool` message: the call it answers")
    is_error: bool = Field(False, description="on a `tool` message: the call failed")
    created_at: datetime


class ToolCallOut(_Cause):
    """One tool call (protocol mode `tools`) with what the agent got back. A call that reached
    the target has the target call of the same (step, idx) in `calls`."""

    step: int = Field(description="the assistant message that made it")
    idx: int = Field(description="its index among that message's tool calls")
    call_id: str
    name: str
    arguments: dict[str, Any]
    result: str = Field(
        description=f"the text the agent got back, cut to {PREVIEW_CHARS} characters"
    )
    result_chars: int | None = Field(None, description="the full result's length in characters")
    result_truncated: bool = False
    message_step: int | None = Field(
        None, description="the `tool` message carrying the result (none after submit_answer)"
    )
    error_cause: str | None = Field(None, description=CAUSE)
    error: str | None = Field(None, description="why the call failed (unknown tool, bad arguments)")
    latency_s: float | None
    created_at: datetime


class TargetCallOut(BaseModel):
    step: int
    idx: int
    inputs: list[str]
    outputs: list[CallOutput]  # function_store's contract, as the target service returned it
    n_errors: int
    latency_s: float | None
    created_at: datetime


class LabFigureRef(BaseModel):
    """A figure a cell made, as a reference: its PNG is served at `url`."""

    id: int
    index: int = Field(description="its order among the cell's figures (the reply's figure 1 is 0)")
    width: int
    height: int
    url: str = Field(description="GET: the PNG (image/png)")


class LabCellOut(BaseModel):
    """One cell run in the episode's lab (protocol modes `code` and `code-tools`): its code,
    what it printed and returned as the agent read it, and the target calls it made."""

    step: int = Field(description="the assistant message that holds it")
    idx: int = Field(
        description="its index among that message's cells (code-tools: its tool call's index)"
    )
    number: int = Field(description="its number in the episode's lab (the reply's 'cell N')")
    code: str
    status: str = Field(description="ok | error | restarted (a hard limit: the lab lost its state)")
    stdout: str
    stderr: str
    value: str | None = Field(description="the last expression's value, as printed")
    error: str | None
    traceback: str | None
    cut: dict[str, int] = Field(
        description="characters the lab left out of each part (stdout, stderr, value, error, "
        "traceback), as the agent's reply said"
    )
    shown_chars: dict[str, int] = Field(
        default_factory=dict,
        description=f"the parts cut for this view (each to {PREVIEW_CHARS} characters on the "
        "API; `harness export` has them whole): each one's full length in characters",
    )
    first_call: int = Field(description="its first target call's idx in its step")
    n_calls: int
    calls: list[TargetCallOut] = Field(
        description="its target calls: those of `step` with idx in [first_call, first_call + "
        "n_calls)"
    )
    figures: list[LabFigureRef] = Field(
        default_factory=list, description="the figures it made, in order (references)"
    )
    wall_s: float | None
    created_at: datetime


class ScoreOut(_Cause):
    metric: str
    value: float | None
    status: str
    error_category: str | None
    error_cause: str | None = Field(None, description=CAUSE)
    error: str | None
    details: dict[str, Any]


class EpisodeDetail(EpisodeOut):
    final_answer: str | None = Field(description=f"cut to {PREVIEW_CHARS} characters on the API")
    final_answer_chars: int | None = None
    final_answer_truncated: bool = False
    final_answer_url: str | None = Field(None, description="the full answer, when truncated")
    error_traceback: str | None = Field(
        None,
        description="where the agent raised, as its agent host reported it (agent text, at most "
        "16,000 characters: the tail)",
    )
    messages: list[MessageOut]
    calls: list[TargetCallOut]
    tool_calls: list[ToolCallOut] = Field(
        default_factory=list, description="protocol mode tools: every tool call, in order"
    )
    cells: list[LabCellOut] = Field(
        default_factory=list,
        description="protocol modes code and code-tools: every lab cell, in order, each with "
        "its target calls (which `calls` lists too)",
    )
    scores: list[ScoreOut]


class EventOut(BaseModel):
    id: int
    run_id: str
    episode_id: str | None
    kind: str
    data: dict[str, Any]
    created_at: datetime


# ---- builders -------------------------------------------------------------------------------
def _run_fields(run: Run, imported: bool = False) -> dict[str, Any]:
    return {
        "imported": imported,
        "id": run.id,
        "status": run.status,
        "agent": run.agent,
        "dataset": run.dataset,
        "family": run.family,
        "n_targets": len(run.target_ids),
        "created_at": run.created_at,
        "updated_at": run.updated_at,
        "finished_at": run.finished_at,
    }


def run_out(run: Run, imported: bool = False) -> RunOut:
    """`imported`: the run came from a file (store.events.imported_runs), which the view says."""
    return RunOut(
        **_run_fields(run, imported), error=run.error, spec=RunSpec.model_validate(run.spec)
    )


def run_list_item(run: Run, imported: bool = False) -> RunListItem:
    spec = run.spec or {}
    return RunListItem(
        **_run_fields(run, imported),
        variant=spec.get("variant"),
        floor_for=spec.get("floor_for"),
        error_cause=cause(run.error),
        error=bounded(run.error, 500) if run.error else None,
    )


def episode_out(ep: Episode, n_targets: int = 0) -> EpisodeOut:
    """`n_targets`: the run's number of targets, from which the episode's epoch follows."""
    out = EpisodeOut.model_validate(ep, from_attributes=True)
    out.epoch = episode_epoch(ep.idx, n_targets)
    return out


def score_out(s: Score) -> ScoreOut:
    return ScoreOut.model_validate(s, from_attributes=True)


def message_out(m: Message) -> MessageOut:
    return MessageOut.model_validate(m, from_attributes=True)


def call_out(c: TargetCall) -> TargetCallOut:
    return TargetCallOut.model_validate(c, from_attributes=True)


def tool_call_outs(
    rows: Sequence[ToolCall], messages: Sequence[MessageOut], preview: bool
) -> list[ToolCallOut]:
    """The episode's tool calls, each with the step of the `tool` message that answered it: the
    first after the call's own step with its id (agents may reuse ids across messages). With
    `preview`, results are cut to PREVIEW_CHARS (the message's `content_url` has the full text)."""
    answers: dict[str, list[int]] = {}
    for m in messages:
        if m.role == "tool" and m.tool_call_id is not None:
            answers.setdefault(m.tool_call_id, []).append(m.step)
    out = []
    for r in rows:
        after = [s for s in answers.get(r.call_id, []) if s > r.step]
        cut = preview and len(r.result) > PREVIEW_CHARS
        out.append(
            ToolCallOut.model_validate(r, from_attributes=True).model_copy(
                update={
                    "result": r.result[:PREVIEW_CHARS] if cut else r.result,
                    "result_chars": len(r.result),
                    "result_truncated": cut,
                    "message_step": min(after) if after else None,
                }
            )
        )
    return out


def figure_url(episode_id: str, figure_id: int) -> str:
    return f"/episodes/{episode_id}/figures/{figure_id}.png"


def lab_cell_outs(
    episode_id: str,
    rows: Sequence[tuple[LabCell, dict[str, int]]],
    calls: Sequence[TargetCallOut],
    figures: Sequence[dict[str, int]] = (),
) -> list[LabCellOut]:
    """Each cell with its target calls and its figures (store.lab.figure_refs); `rows` are
    (cell, full lengths of its cut texts)."""
    by_step: dict[int, dict[int, TargetCallOut]] = {}
    for c in calls:
        by_step.setdefault(c.step, {})[c.idx] = c
    drawn: dict[tuple[int, int], list[LabFigureRef]] = {}
    for f in figures:
        ref = LabFigureRef(**f, url=figure_url(episode_id, f["id"]))
        drawn.setdefault((f["step"], f["cell_idx"]), []).append(ref)
    out = []
    for cell, chars in rows:
        made = by_step.get(cell.step, {})
        span = range(cell.first_call, cell.first_call + cell.n_calls)
        mine = [made[i] for i in span if i in made]
        pictures = drawn.get((cell.step, cell.idx), [])
        out.append(LabCellOut(**cell.model_dump(), shown_chars=chars, calls=mine, figures=pictures))
    return out


def event_out(e: Event) -> EventOut:
    return EventOut.model_validate(e, from_attributes=True)


def metric_summaries(
    scores: Sequence[tuple[str, Score | ScoreResult]], reducer: EpochReducer = "mean"
) -> list[MetricSummary]:
    """Each metric's mean over targets of `(target_id, score)` pairs: a target's ok values (one per
    epoch) reduced with `reducer` first (interp_harness.evaluator.report.per_target, as the report does), so
    that n counts targets; errors count the scores in error."""
    by: dict[str, list[tuple[str, Score | ScoreResult]]] = {}
    for target, s in scores:
        by.setdefault(s.metric, []).append((target, s))
    out = []
    for metric, rows in sorted(by.items()):
        ok = [(t, r.value) for t, r in rows if r.status == "ok" and r.value is not None]
        vals, _ = per_target(ok, reducer, metric_interval(metric))
        out.append(
            MetricSummary(
                metric=metric,
                n=len(vals),
                n_errors=sum(r.status == "error" for _, r in rows),
                mean=sum(vals) / len(vals) if vals else None,
            )
        )
    return out


def run_detail(store: Store, run: Run) -> RunDetail:
    eps = store.episodes.of_run(run.id, with_answer=False)
    scores = store.scores.of_run(run.id)
    have = {s.episode_id for s in scores}
    target_of = {e.id: e.target_id for e in eps}
    # ended episodes without any score are an error state here, never silently missing
    unscored = [
        (e.target_id, ScoreResult.model_validate(m))
        for e in eps
        if (m := missing_scores(e, e.id in have, run.status)) is not None
    ]
    by_status: dict[str, int] = {}
    errors: dict[str, int] = {}
    usage = UsageOut()
    for e in eps:
        by_status[e.status] = by_status.get(e.status, 0) + 1
        if e.status == "error":
            cat = e.error_category or "unknown"
            errors[cat] = errors.get(cat, 0) + 1
        usage.rounds += e.rounds
        usage.target_calls += e.target_calls
        usage.inputs += e.inputs
        usage.prompt_tokens += e.prompt_tokens
        usage.completion_tokens += e.completion_tokens
        usage.cost_usd += e.cost_usd
    total = episode_total(run.spec, run.target_ids)
    done = sum(n for s, n in by_status.items() if s not in ("queued", "running"))
    return RunDetail(
        **run_out(run, imported=bool(store.events.imported_runs([run.id]))).model_dump(),
        progress=Progress(total=total, done=done, by_status=by_status),
        usage=usage,
        metrics=metric_summaries(
            [*((target_of[s.episode_id], s) for s in scores), *unscored],
            RunSpec.model_validate(run.spec).epoch_reducer,
        ),
        errors_by_category=errors | ({"unscored": len(unscored)} if unscored else {}),
        errors=group_errors(episode_summaries(store, run)),
        floor_run_id=floor.id if (floor := store.runs.floor(run.id)) is not None else None,
        waiting=waiting_for_clients(eps),
    )


MAX_WAITING_LINES = 10


def waiting_for_clients(eps: Sequence[Episode]) -> list[str]:
    """What the unfinished episodes of an external run wait for, as this process's rendezvous
    knows it (harness/domain/rendezvous.py): a client that has not come, or (client here) a free
    execution slot. At most MAX_WAITING_LINES lines, then how many more."""
    lines = []
    for e in eps:
        ch = RENDEZVOUS.get(e.id) if e.status not in EPISODE_TERMINAL else None
        if ch is None or ch.ended is not None:
            continue
        if not ch.connected:
            lines.append(f"waiting for an MCP client to connect to episode {e.idx} ({e.id})")
        elif e.status == "queued":
            lines.append(
                f"episode {e.idx} ({e.id}): its MCP client is connected; waiting for a free "
                "execution slot"
            )
    if len(lines) > MAX_WAITING_LINES:
        more = len(lines) - MAX_WAITING_LINES
        lines = [*lines[:MAX_WAITING_LINES], f"and {more} more episodes waiting"]
    return lines


# Score details that never carry ground truth. The others (true intervals, expected outputs, the
# judge's tests) go only to authorised readers when API tokens are configured.
SAFE_DETAILS = {
    "parser",
    "func_name",
    "code_chars",
    "threshold",
    "points",
    "gt_skipped",
    "guard",
    "printed_bytes",
    "nmse_raw",
    "failure",
    "predicted",
    "outcome",
    "target_calls",
    "inputs",
    "judge_model",
    "judge_mode",
    "judge_wall_s",
    "stopped_at",
    "partial_scores",
    "gt_energy_zero",
    "agent_grid",  # the agent code's outputs on the scoring grid (the plot's line)
}


def public_details(details: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in details.items() if k in SAFE_DETAILS}


def message_url(episode_id: str, step: int) -> str:
    return f"/episodes/{episode_id}/messages/{step}/content"


def answer_url(episode_id: str) -> str:
    return f"/episodes/{episode_id}/final_answer"


def episode_detail(
    store: Store, ep: Episode, *, show_truth: bool = True, preview: bool = False
) -> EpisodeDetail:
    """The transcript. With `preview` (the API and the pages), messages and the final answer are
    read from the store cut to PREVIEW_CHARS characters, with links to the full texts; without
    (the CLI's export), whole."""
    scores = [score_out(s) for s in store.scores.of_episodes([ep.id])]
    run = store.runs.get(ep.run_id)
    if run is not None and (missing := missing_scores(ep, len(scores), run.status)) is not None:
        scores.append(ScoreOut.model_validate(missing))
    if not show_truth:
        scores = [s.model_copy(update={"details": public_details(s.details)}) for s in scores]
    if preview:
        head = store.episodes.head(ep.id, PREVIEW_CHARS)
        chars = head[1] if head is not None else 0
        answer: dict[str, Any] = {
            "final_answer": head[0].final_answer if head is not None else None,
            "final_answer_chars": chars,
            "final_answer_truncated": chars > PREVIEW_CHARS,
            "final_answer_url": answer_url(ep.id) if chars > PREVIEW_CHARS else None,
        }
        messages = []
        for m, n in store.episodes.message_heads(ep.id, PREVIEW_CHARS):
            cut = n > PREVIEW_CHARS
            messages.append(
                message_out(m).model_copy(
                    update={
                        "content_chars": n,
                        "truncated": cut,
                        "content_url": message_url(ep.id, m.step) if cut else None,
                    }
                )
            )
    else:
        answer = {"final_answer": ep.final_answer}
        messages = [message_out(m) for m in store.episodes.messages(ep.id)]
    calls = [call_out(c) for c in store.episodes.target_calls(ep.id)]
    cells = (
        store.lab.cell_heads(ep.id, PREVIEW_CHARS)
        if preview
        else [(c, {}) for c in store.lab.cells(ep.id)]
    )
    return EpisodeDetail(
        **episode_out(ep, len(run.target_ids) if run is not None else 0).model_dump(),
        **answer,
        error_traceback=(
            store.events.episode_traceback(ep.id, ep.run_id) if ep.status == "error" else None
        ),
        messages=messages,
        calls=calls,
        tool_calls=tool_call_outs(store.episodes.tool_calls(ep.id), messages, preview),
        cells=lab_cell_outs(ep.id, cells, calls, store.lab.figure_refs(ep.id) if cells else ()),
        scores=scores,
    )
