"""A run as an Inspect AI eval log (`harness export RUN --format inspect`), readable by Inspect's own
`inspect view` and `read_eval_log`.

One sample per episode: the conversation as chat messages, each target call as a tool event
(function `PYTHON`, its inputs, the outputs the agent read); in protocol mode `tools` the
assistant messages carry their tool calls, each result is a tool message (with its error when the
call failed) and each tool call is the tool event (its name, arguments, result). The final
answer as the sample's output, every score (an errored scorer is a score whose value is "error",
with the message as its explanation, never a number), the episode's own error, and token usage.
Every error message leads with its cause, then the full text (`interp_harness.evaluator.error_text.cause_first`;
`harness import-inspect` reads the full text back).
Nothing hidden is exported: score details go out only through the API's allow-list of keys that
never carry ground truth (`interp_harness.harness.runs.views.SAFE_DETAILS`; a scorer's true interval, expected
outputs or judge tests stay in the store).

`inspect-ai` is optional: `pip install inspect-ai` (it is in the `dev` and `inspect` extras).
"""

from __future__ import annotations

import math
import shutil
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

from interp_harness.evaluator.api import ScoreResult
from interp_harness.evaluator.error_text import cause_first
from interp_harness.evaluator.report import reduce_epochs
from interp_harness.harness.domain.spec import RunSpec, episode_epoch
from interp_harness.harness.runs.views import (
    ToolCallOut,
    message_out,
    public_details,
    tool_call_outs,
)
from interp_harness.harness.store.events import IMPORT_EVENT
from interp_harness.harness.store.models import Episode, Message, Run
from interp_harness.harness.store.repo import Store
from interp_harness.harness.store.scores import missing_scores

SCORER = "interp-harness"
# the scorer name of the Inspect tasks (harness/inspect_tasks): the score every sample also carries
TASK_SCORER = "interp_harness"


class InspectUnavailable(RuntimeError):
    """inspect-ai is not installed."""


def _inspect() -> Any:
    try:
        import inspect_ai.event as event
        import inspect_ai.log as log
        import inspect_ai.model as model
        import inspect_ai.scorer as scorer
        import inspect_ai.tool as tool
    except ImportError as e:
        raise InspectUnavailable(
            f"exporting an Inspect log needs inspect-ai ({e}): pip install inspect-ai"
        ) from e
    return log, model, scorer, event, tool


def run_to_eval_log(store: Store, run: Run) -> Any:
    """The run as an `inspect_ai.log.EvalLog`."""
    log, model, scorer, _, _ = _inspect()
    episodes = store.episodes.of_run(run.id)
    imported_model = _imported_model(store, run)
    samples = [_sample(store, run, ep, imported_model) for ep in episodes]
    usage: dict[str, Any] = {}  # the log's total per model, as Inspect's own logs have it
    for s in samples:
        for name, u in s.model_usage.items():
            _add_usage(usage.setdefault(name, model.ModelUsage()), u)
    # an imported run: the model its log named (with Inspect's provider prefix), else the
    # models that answered
    models = [imported_model] if imported_model else sorted(usage) or [run.agent]
    status = {"completed": "success", "failed": "error", "cancelled": "cancelled"}.get(
        run.status, "started"
    )
    spec = log.EvalSpec(
        created=run.created_at.isoformat(),
        task=f"{run.dataset}/{run.family or 'all'}",
        task_id=run.id,
        run_id=run.id,
        dataset=log.EvalDataset(name=run.dataset, samples=len(samples)),
        model=models[0],
        config=_eval_config(log, run),
        metadata={
            "agent": run.agent,
            "spec": run.spec,
            "interp_harness_run": run.id,
            # a run imported here from a file stays marked: its scores are a claim, not ours
            "interp_harness_imported": bool(store.events.imported_runs([run.id])),
        },
    )
    return log.EvalLog(
        eval=spec,
        status=status,
        results=log.EvalResults(
            total_samples=len(samples),
            completed_samples=sum(
                ep.status in ("completed", "budget_exhausted") for ep in episodes
            ),
            scores=_score_summaries(samples, log, RunSpec.model_validate(run.spec)),
        ),
        stats=log.EvalStats(
            started_at=run.created_at.isoformat(),
            completed_at=run.finished_at.isoformat() if run.finished_at else "",
            model_usage=usage,
        ),
        error=log.EvalError(message=cause_first(run.error), traceback="", traceback_ansi="")
        if run.error
        else None,
        samples=samples,
    )


# our reducers by Inspect's names (its `at_least_1`: 1 when one epoch scores >= 1)
INSPECT_REDUCERS = {"mean": "mean", "max": "max", "at_least_one": "at_least_1"}


def _eval_config(log: Any, run: Run) -> Any:
    spec = RunSpec.model_validate(run.spec)
    if spec.epochs == 1:
        return log.EvalConfig()
    return log.EvalConfig(epochs=spec.epochs, epochs_reducer=[INSPECT_REDUCERS[spec.epoch_reducer]])


def _imported_model(store: Store, run: Run) -> str | None:
    """The model an imported run's Inspect log named (`openai-api/backbone/...`: the provider
    prefix included, which its messages' model names lack); None for a run executed here."""
    source = store.events.first_data(run.id, IMPORT_EVENT)
    model = (source or {}).get("model")
    return model if isinstance(model, str) and model else None


def _add_usage(total: Any, u: Any) -> None:
    total.input_tokens += u.input_tokens
    total.output_tokens += u.output_tokens
    total.total_tokens += u.total_tokens
    if u.total_cost:
        total.total_cost = (total.total_cost or 0.0) + u.total_cost


def _episode_usage(
    ep: Episode, by_message: dict[str, Any], model: Any, name: str
) -> dict[str, Any]:
    """The sample's usage by model: what its messages carry, and what the episode counted beyond
    them under `name` (an imported episode's messages carry none: its totals are the log's)."""
    usage = {k: u for k, u in by_message.items() if u.total_tokens or u.total_cost}
    prompt = ep.prompt_tokens - sum(u.input_tokens for u in usage.values())
    completion = ep.completion_tokens - sum(u.output_tokens for u in usage.values())
    cost = ep.cost_usd - sum(u.total_cost or 0.0 for u in usage.values())
    if prompt > 0 or completion > 0 or cost > 1e-12:
        rest = model.ModelUsage(
            input_tokens=max(prompt, 0),
            output_tokens=max(completion, 0),
            total_tokens=max(prompt, 0) + max(completion, 0),
            total_cost=cost if cost > 1e-12 else None,
        )
        _add_usage(usage.setdefault(name, model.ModelUsage()), rest)
    return usage


def _messages(
    rows: list[Message], run: Run, model: Any, tool: Any, tool_rows: list[ToolCallOut]
) -> tuple[list[Any], dict[str, Any]]:
    """The episode's messages, and its token usage by model: the model a provider reported, else
    the run's agent (a custom agent that reports none is still named). In protocol mode `tools`
    an assistant message carries its tool calls and each result is a tool message."""
    out: list[Any] = []
    usage: dict[str, Any] = {}
    answered = {r.message_step: r for r in tool_rows if r.message_step is not None}
    for m in rows:
        if m.role == "system":
            out.append(model.ChatMessageSystem(content=m.content))
        elif m.role == "user":
            out.append(model.ChatMessageUser(content=m.content))
        elif m.role == "tool":
            row = answered.get(m.step)
            error = (row.error if row is not None else None) or m.content
            out.append(
                model.ChatMessageTool(
                    content=m.content,
                    tool_call_id=m.tool_call_id,
                    function=row.name if row is not None else None,
                    error=tool.ToolCallError(type="unknown", message=cause_first(error))
                    if m.is_error
                    else None,
                )
            )
        else:
            calls = [
                tool.ToolCall(id=c["id"], function=c["name"], arguments=c.get("arguments", {}))
                for c in m.tool_calls
            ]
            out.append(
                model.ChatMessageAssistant(
                    content=m.content, model=m.model or run.agent, tool_calls=calls or None
                )
            )
            key = m.model or run.agent
            _add_usage(
                usage.setdefault(key, model.ModelUsage()),
                model.ModelUsage(
                    input_tokens=m.prompt_tokens,
                    output_tokens=m.completion_tokens,
                    total_tokens=m.prompt_tokens + m.completion_tokens,
                    total_cost=m.cost_usd or None,
                ),
            )
    return out, usage


def _tool_events(
    store: Store, ep: Episode, event: Any, tool: Any, tool_rows: list[ToolCallOut]
) -> list[Any]:
    """Each tool call (protocol mode `tools`) as a tool event; each target call that no tool call
    made (the text protocol's commands) as a `PYTHON` tool event."""
    events = [
        event.ToolEvent(
            id=r.call_id,
            function=r.name,
            arguments=r.arguments,
            result=r.result,
            error=tool.ToolCallError(type="unknown", message=cause_first(r.error))
            if r.error
            else None,
            working_time=r.latency_s,
        )
        for r in tool_rows
    ]
    made = {(r.step, r.idx) for r in tool_rows}
    for c in store.episodes.target_calls(ep.id):
        if (c.step, c.idx) in made:
            continue
        shown = " ".join(
            f"({o['input']}, {o['output'] if o.get('error') is None else 'error: ' + o['error']})"
            for o in c.outputs
        )
        errors = [o["error"] for o in c.outputs if o.get("error")]
        events.append(
            event.ToolEvent(
                id=f"call-{c.step}-{c.idx}",
                function="PYTHON",
                arguments={"inputs": list(c.inputs)},
                result=shown,
                error=tool.ToolCallError(type="unknown", message="; ".join(errors[:5]))
                if errors and len(errors) == len(c.outputs)
                else None,
                working_time=c.latency_s,
            )
        )
    return events


def _scores(store: Store, run: Run, ep: Episode, scorer: Any) -> dict[str, Any]:
    """Each metric as a score of its own, and all of them as the score the Inspect tasks'
    scorer records (`TASK_SCORER`: its value the ok metrics, its metadata every ScoreResult and
    the counters), which `harness import-inspect` reads back."""
    out = {}
    rows: list[Any] = store.scores.of_episodes([ep.id])
    if (missing := missing_scores(ep, len(rows), run.status)) is not None:
        rows.append(ScoreResult.model_validate(missing))  # an error, never a silent gap
    if rows:
        out[TASK_SCORER] = scorer.Score(
            value={
                s.metric: s.value
                for s in rows
                if s.status == "ok" and s.value is not None and math.isfinite(s.value)
            },
            answer=ep.final_answer,
            metadata={
                "scores": [
                    {
                        "metric": s.metric,
                        "value": s.value if s.value is None or math.isfinite(s.value) else None,
                        "status": s.status,
                        "error_category": s.error_category,
                        "error": s.error,
                        "details": public_details(s.details),
                    }
                    for s in rows
                ],
                "stats": {k: getattr(ep, k) for k in ("target_calls", "inputs", "rounds")},
            },
        )
    for s in rows:
        if s.status == "error":
            out[s.metric] = scorer.Score(
                value="error",
                explanation=f"[{s.error_category}] {cause_first(s.error or '')}",
                metadata={
                    "status": "error",
                    "error_category": s.error_category,
                    **public_details(s.details),
                },
            )
        else:
            failure = s.details.get("failure") if isinstance(s.details, dict) else None
            value = s.value if s.value is not None and math.isfinite(s.value) else "n/a"
            out[s.metric] = scorer.Score(
                value=value,
                explanation=failure,
                metadata={"status": "ok", **public_details(s.details)},
            )
    return out


def _error(store: Store, ep: Episode, log: Any) -> Any:
    # the agent host's traceback has no control characters (interp_harness.agents.host_protocol), so the plain
    # text is also valid as the "ANSI" form `inspect view` renders
    tb = store.events.episode_traceback(ep.id, ep.run_id) or ""
    return log.EvalError(
        message=f"[{ep.error_category}] {cause_first(ep.error or '')}",
        traceback=tb,
        traceback_ansi=tb,
    )


def _sample(store: Store, run: Run, ep: Episode, imported_model: str | None = None) -> Any:
    log, model, scorer, event, tool = _inspect()
    rows = store.episodes.messages(ep.id)
    calls = store.episodes.tool_calls(ep.id)
    tool_rows = tool_call_outs(calls, [message_out(m) for m in rows], False)
    messages, by_message = _messages(rows, run, model, tool, tool_rows)
    prompt = next((m.content for m in messages if m.role == "user"), "")
    answer = ep.final_answer or ""
    last_model = next((m.model for m in reversed(messages) if m.role == "assistant"), None)
    usage = _episode_usage(ep, by_message, model, imported_model or last_model or run.agent)
    return log.EvalSample(
        id=ep.target_id,
        epoch=episode_epoch(ep.idx, len(run.target_ids)) + 1,  # Inspect counts from 1
        input=prompt,
        target="",  # the ground truth stays with the target service
        messages=messages,
        output=model.ModelOutput.from_content(model=last_model or run.agent, content=answer),
        scores=_scores(store, run, ep, scorer),
        events=_tool_events(store, ep, event, tool, tool_rows),
        model_usage=usage,
        error=_error(store, ep, log) if ep.status == "error" else None,
        metadata={
            "episode_id": ep.id,
            "status": ep.status,
            "end_reason": ep.end_reason,
            "dataset": ep.dataset,
            "family": ep.family,
            "variant": ep.variant,
            "exemplar_init": ep.exemplar_init,
            "rounds": ep.rounds,
            "target_calls": ep.target_calls,
            "inputs": ep.inputs,
        },
    )


def _score_summaries(samples: list[Any], log: Any, spec: RunSpec) -> list[Any]:
    """Each metric's mean over samples; with epochs, over targets, each target's epochs reduced
    first with the run's reducer (as Inspect and our report do)."""
    by_metric: dict[str, dict[Any, list[float]]] = {}
    for s in samples:
        for name, sc in (s.scores or {}).items():
            if name == TASK_SCORER:  # the same metrics again, as one score
                continue
            per_id = by_metric.setdefault(name, {})
            if isinstance(sc.value, int | float) and not isinstance(sc.value, bool):
                # one epoch: every sample counts on its own (a fresh key)
                key = s.id if spec.epochs > 1 else len(per_id)
                per_id.setdefault(key, []).append(float(sc.value))
    by_metric_vals = {
        name: [
            # "t": reduce as for any metric (at_least_one = max: the same on 0/1 successes)
            reduce_epochs(v, spec.epoch_reducer, "t") if spec.epochs > 1 else v[0]
            for v in per_id.values()
        ]
        for name, per_id in by_metric.items()
    }
    return [
        log.EvalScore(
            name=name,
            scorer=SCORER,
            scored_samples=len(vals),
            metrics={"mean": log.EvalMetric(name="mean", value=sum(vals) / len(vals))}
            if vals
            else {},
        )
        for name, vals in sorted(by_metric_vals.items())
    ]


def write_inspect_log(store: Store, run: Run, path: str | Path) -> Path:
    """Write `.eval` (Inspect's default: zip of zstd-compressed JSON, messages deduplicated) or
    `.json`, chosen by the file's extension; a path with neither gets `.eval` appended (Inspect
    reads a log by its extension)."""
    log = _inspect()[0]
    path = Path(path)
    if path.suffix not in (".eval", ".json"):
        path = path.with_name(path.name + ".eval")
    fmt = "json" if path.suffix == ".json" else "eval"
    log.write_eval_log(run_to_eval_log(store, run), str(path), format=fmt)
    return path


def write_inspect_json(store: Store, run: Run, out: BinaryIO) -> None:
    """The log as Inspect's JSON format on `out` (standard output: a pipe takes text)."""
    with tempfile.TemporaryDirectory() as d:  # Inspect writes logs to paths only
        path = write_inspect_log(store, run, Path(d) / f"{run.id}.json")
        with path.open("rb") as f:
            shutil.copyfileobj(f, out)
