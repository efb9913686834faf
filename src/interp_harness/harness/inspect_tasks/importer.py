"""An Inspect AI eval log of one of our tasks as a harness run (`harness import-inspect LOG`), so
that the web UI, `harness report` and `harness export` work on evals run through Inspect.

Reads what the tasks write (docs/inspect.md): the sample id is the target id, its metadata the
dataset, family and variant, the scorer "interp_harness" a `Score` whose metadata holds every
ScoreResult ("scores") and the episode's counters ("stats"); a scorer that raised is a sample
error recorded inside the scorers' span. A log that `harness export --format inspect` wrote reads
the same way (it carries that score too) and keeps its run's spec and agent.

The log is the operator's file but its text is a model's: it is stored as data only, each text
bounded as the agent host bounds an agent's (message size, error and traceback lengths).
"""

from __future__ import annotations

import json
import re
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from interp_harness.agents.host_protocol import (
    MAX_MODEL_CHARS,
    MAX_NOTE_CHARS,
    MAX_TOOL_CALLS,
    MAX_TRACEBACK_CHARS,
    valid_unicode,
)
from interp_harness.evaluator.api import ScoreResult
from interp_harness.evaluator.error_text import as_raised, bounded, without_cause_first
from interp_harness.harness.domain.spec import MAX_EPOCHS, Budgets, RunSpec, check_json_value
from interp_harness.harness.inspect_tasks import untrusted
from interp_harness.harness.inspect_tasks.bounded_log import (
    LogBounds,
    LogRefused,
    bounded_copy,
)
from interp_harness.harness.inspect_tasks.keys import BUDGET_REASONS, END_REASON, PREFIX
from interp_harness.harness.runs.views import public_details
from interp_harness.harness.settings import Settings
from interp_harness.harness.store.repo import Store

TASK_PREFIX = "interp_harness/"
SCORER = "interp_harness"  # the scorer's name in a log (the contract of harness/inspect_tasks)
CATEGORIES = ("agent", "target", "judge", "infrastructure", "budget", "sandbox")
_CATEGORY = re.compile(r"\[(" + "|".join(CATEGORIES) + r")\]\s*")
RUN_STATUS = {"success": "completed", "error": "failed", "cancelled": "cancelled"}
EPISODE_STATUS = ("completed", "budget_exhausted", "error", "cancelled")
# Inspect's epoch reducers by our names (interp_harness.harness.inspect_tasks.export.INSPECT_REDUCERS, reversed)
REDUCERS = {"mean": "mean", "max": "max", "at_least_1": "at_least_one"}
MAX_ARGUMENTS_CHARS = 64_000  # a tool call's arguments as JSON (as agent_options are bounded)


class ImportRefused(ValueError):
    """The file is not an Inspect log of one of our tasks (nothing was stored)."""


def read_log(path: str | Path, bounds: LogBounds | None = None) -> Any:
    """The Inspect log at `path` (`.eval` or `.json`), or ImportRefused. Inspect parses a copy
    that was inflated within `bounds` (default: the operator's settings), never the file itself:
    a `.eval` is a zip, which may be a decompression bomb (interp_harness.harness.inspect_tasks.bounded_log)."""
    from inspect_ai.log import read_eval_log  # also teaches zipfile zstandard, as Inspect writes

    p = Path(path)
    if not p.is_file():
        raise ImportRefused("no such file")
    bounds = bounds or LogBounds.from_settings(Settings())
    with tempfile.TemporaryDirectory(prefix="harness-import-") as folder:
        try:
            copy = bounded_copy(p, Path(folder), bounds)
        except LogRefused as e:
            raise ImportRefused(str(e)) from None
        except OSError as e:
            raise ImportRefused(f"cannot read the file ({e.strerror or e})") from None
        try:
            log = read_eval_log(str(copy))
        except Exception as e:  # Inspect raises many kinds for a file that is not a log
            raise ImportRefused(f"not an Inspect eval log ({type(e).__name__}: {e})"[:500]) from e
    log.location = str(p)  # where it was read from, not the copy
    return log


def import_eval_log(store: Store, log: Any, source: str | None = None) -> str:
    """Store `log` (an `inspect_ai.log.EvalLog` of one of our tasks) as a finished run; returns
    its id. ImportRefused for a log of another task or of an unexpected shape; DuplicateImport
    (interp_harness.harness.store.events) when its eval was imported before. `source`: where it
    was read from."""
    exported = _exported_run(log)
    samples = list(log.samples or [])
    # ours: a task of the package, a task file of one's own that uses our scorer, or an export
    scored = any(SCORER in (s.scores or {}) for s in samples)
    if not (log.eval.task.startswith(TASK_PREFIX) or scored or exported):
        raise ImportRefused(
            f"not a log of an interp_harness task (task {log.eval.task!r}, no "
            f"{SCORER!r} score): only logs of `inspect eval {TASK_PREFIX}...` (or a task "
            "scored by its scorer) or of `harness export --format inspect` import"
        )
    if not samples:
        raise ImportRefused("the log has no samples (was it written with --no-log-samples?)")
    target_ids = list(dict.fromkeys(str(s.id) for s in samples))
    keys = [(s.epoch, str(s.id)) for s in samples]
    if len(set(keys)) != len(keys):
        raise ImportRefused("the log has the same sample and epoch twice")
    spec, dropped = _spec(log, samples)
    cap = Settings().agent_max_message_chars
    position = {t: i for i, t in enumerate(target_ids)}
    episodes = []
    for s in samples:
        try:
            episodes.append(_episode(s, position, cap, spec.epochs))
        except untrusted.Untrusted as e:  # cause first: what is wrong, then where
            raise ImportRefused(f"{e} (sample {_show_id(s)}, epoch {s.epoch})") from None
    status = RUN_STATUS.get(log.status, "failed")
    error = None
    if log.error is not None:
        error = _error(log.error.message)
    elif log.status not in RUN_STATUS:
        error = f"the Inspect eval had not finished (log status {log.status!r})"
    run = {
        "status": status,
        "agent": spec.agent,
        "dataset": spec.dataset,
        "family": spec.family,
        "spec": spec.model_dump(mode="json"),
        "target_ids": target_ids,
        "error": error,
        "created_at": _time(log.eval.created) or datetime.now(UTC),
        "finished_at": _time(log.stats.completed_at) or datetime.now(UTC),
    }
    meta = {
        "eval_id": log.eval.eval_id,
        "run_id": log.eval.run_id,
        "task": _text(log.eval.task, 200),
        "model": _text(log.eval.model, MAX_MODEL_CHARS),
        "solver": _text("+".join(s.solver for s in log.plan.steps), 200) or None,
        "log": _text(str(source or log.location or ""), 1000) or None,
        "exported_from": exported,
        "dropped": dropped,  # from the exported spec: only the operator sets these
    }
    return store.events.import_run(run, episodes, meta)


def _exported_run(log: Any) -> str | None:
    """The harness run a log of `harness export --format inspect` came from, else None."""
    run = (log.eval.metadata or {}).get("interp_harness_run")
    return run if isinstance(run, str) else None


OWN_SOLVERS = ("tools_setup", "harness_react", "text_loop")  # the tasks' own (no agent name)


def _solver(log: Any) -> str | None:
    """The plan's solvers that are not the task's own, joined with "+"; None if none."""
    plan = getattr(log, "plan", None)
    steps = [s.solver for s in getattr(plan, "steps", None) or []]
    return "+".join(s for s in steps if s.rsplit("/", 1)[-1] not in OWN_SOLVERS) or None


def _spec(log: Any, samples: list[Any]) -> tuple[RunSpec, list[str]]:
    """The run's spec, and what was dropped from it: an exported run's own, less what only the
    operator sets (interp_harness.harness.inspect_tasks.untrusted.exported_spec); else built from the task's
    arguments (what fits a RunSpec), the agent named after the model (and the solver when it
    is not the default)."""
    meta = log.eval.metadata or {}
    if _exported_run(log) and isinstance(meta.get("spec"), dict):
        agent = meta["spec"].get("agent")
        label = f"inspect:{log.eval.model}"  # what a first import named it (below)
        # a run imported here and exported again: its agent is this label, with its solver
        own = agent if isinstance(agent, str) and agent.split(" (", 1)[0] == label else None
        try:
            return untrusted.exported_spec(meta["spec"], own_label=own)
        except ValueError as e:
            raise ImportRefused(f"the exported run's spec is not valid: {e}"[:1000]) from e
    args = log.eval.task_args or {}
    first = samples[0].metadata or {}
    dataset = args.get("dataset") or first.get("dataset")
    if not isinstance(dataset, str) or not dataset:
        raise ImportRefused("the log names no dataset (task_args or sample metadata)")
    family = args.get("family") if isinstance(args.get("family"), str) else None
    variant = args.get("variant") if isinstance(args.get("variant"), str) else None
    epochs = log.eval.config.epochs or 1
    reducers = log.eval.config.epochs_reducer or []
    budgets = {k: args[k] for k in Budgets.model_fields if args.get(k) is not None}
    if isinstance(args.get("budgets"), dict):
        budgets.update(args["budgets"])
    agent = f"inspect:{log.eval.model}"
    solver = _solver(log)
    if solver:  # a solver the user passed (`--solver`) names the agent too
        agent += f" ({solver})"
    # the task's parameters (harness/inspect_tasks/task.py): protocol "tools", "code" (the
    # tools and run_python: mode code-tools) or "text", the text protocol's harness mode
    protocol = args.get("protocol", "tools")
    protocol = protocol if isinstance(protocol, str) else ""  # the log's JSON: any value
    mode = {"tools": "tools", "code": "code-tools"}.get(protocol, args.get("text_mode"))
    try:
        spec = RunSpec(
            agent=_text(agent, 200),
            dataset=dataset,
            family=family,
            variant=variant,
            limit=args.get("limit") if isinstance(args.get("limit"), int) else None,
            seed=args.get("seed") if isinstance(args.get("seed"), int) else None,
            gen_seed=args.get("gen_seed") if isinstance(args.get("gen_seed"), int) else 0,
            protocol={
                "mode": mode if mode in ("tools", "code-tools", "default") else "find-compat"
            },
            budgets=Budgets.model_validate(budgets),
            epochs=min(max(epochs, 1), MAX_EPOCHS),
            epoch_reducer=REDUCERS.get(reducers[0], "mean") if reducers else "mean",
            floor=False,  # Inspect runs no floor agents
        )
    except ValueError as e:
        raise ImportRefused(f"the task's arguments do not make a run spec: {e}"[:1000]) from e
    return spec, []


def _time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def _text(value: Any, cap: int) -> str:
    """Model text as the store keeps it: valid Unicode, at most `cap` characters (cut with a
    note saying how long it was)."""
    text = valid_unicode(value if isinstance(value, str) else str(value))
    if len(text) <= cap:
        return text
    note = f"\n[cut by harness import-inspect: {len(text):,} characters]"
    return text[: max(cap - len(note), 0)] + note


def _error(value: Any) -> str:
    """An error message as the store keeps it (interp_harness.evaluator.error_text): an exception's repr
    (Inspect's message) written as raised, without the cause our export led it with, at most
    MAX_NOTE_CHARS characters with the middle cut, so that the cause at its end (after a
    request dump) is kept. A leading "[category] " stays for `_category`."""
    text = valid_unicode(value if isinstance(value, str) else str(value))
    tag = _CATEGORY.match(text)
    prefix = text[: tag.end()] if tag else ""
    text = as_raised(without_cause_first(text[len(prefix) :]))
    return prefix + bounded(text, MAX_NOTE_CHARS, "harness import-inspect")


def _tail(value: str, cap: int) -> str:
    text = valid_unicode(value)
    return text if len(text) <= cap else text[-cap:]


def _arguments(args: Any) -> dict[str, Any]:
    """A tool call's arguments, plain JSON the store accepts, bounded in size and nesting."""
    if not isinstance(args, dict):
        return {"value": _text(repr(args), MAX_ARGUMENTS_CHARS)}
    try:
        check_json_value(args)
        dumped = json.dumps(args, ensure_ascii=False)
    except (ValueError, TypeError) as e:
        return {"unreadable": _text(str(e), MAX_NOTE_CHARS)}
    if len(dumped) > MAX_ARGUMENTS_CHARS:
        return {"cut_json": _text(dumped, MAX_ARGUMENTS_CHARS)}
    return args


def _category(message: str, default: str) -> tuple[str, str]:
    """(category, message): the "[category]" our errors start with (`keys.tagged`; in Inspect's
    message, the exception's repr), else `default`."""
    m = _CATEGORY.search(message)
    if m is None:
        return default, message
    # our own "[category] text" (as the export writes it) loses its prefix; a repr keeps it
    return m.group(1), message[m.end() :] if m.start() == 0 else message


def _scorer_failed(sample: Any) -> bool:
    """Whether the sample's error was raised by a scorer: Inspect runs scorers in a span named
    "scorers" (each in a span of type "scorer"); an error before it is the solver's."""
    return any(
        getattr(e, "event", None) == "span_begin"
        and (getattr(e, "type", None) == "scorer" or getattr(e, "name", None) == "scorers")
        for e in sample.events or []
    )


def _messages(sample: Any, cap: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The sample's messages as message rows (step 0, 1, ...), and its assistant messages' tool
    calls as tool call rows with the result of the tool message that answered each."""
    rows: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    open_calls: dict[str, dict[str, Any]] = {}  # call id -> its row, until a tool message answers
    for step, m in enumerate(sample.messages or []):
        row: dict[str, Any] = {"step": step, "role": m.role, "content": _text(m.text, cap)}
        if m.role == "assistant":
            row["model"] = _text(m.model, MAX_MODEL_CHARS) if m.model else None
            made = []
            for idx, c in enumerate((m.tool_calls or [])[:MAX_TOOL_CALLS]):
                call = {
                    "step": step,
                    "idx": idx,
                    "call_id": _text(c.id, 256),
                    "name": _text(c.function, 256),
                    "arguments": _arguments(c.arguments),
                    "result": "",
                    "error": None,
                }
                calls.append(call)
                open_calls[call["call_id"]] = call
                made.append(
                    {"id": call["call_id"], "name": call["name"], "arguments": call["arguments"]}
                )
            row["tool_calls"] = made
        elif m.role == "tool":
            row["tool_call_id"] = _text(m.tool_call_id, 256) if m.tool_call_id else None
            row["is_error"] = m.error is not None
            answered = open_calls.pop(row["tool_call_id"], None) if row["tool_call_id"] else None
            if answered is not None:
                answered["result"] = row["content"]
                if m.error is not None:
                    answered["error"] = _error(m.error.message)
        rows.append(row)
    return rows, calls


def _stats(sample: Any) -> dict[str, int]:
    """rounds, target_calls, inputs: the scorer's "stats"; else (an unscored sample) the task's
    per-sample store ("interp_harness:rounds" ...), else the metadata (an older export)."""
    score = (sample.scores or {}).get(SCORER)
    stats = (score.metadata or {}).get("stats") if score is not None else None
    if not isinstance(stats, dict):
        kept = sample.store or {}
        stats = {k: kept.get(f"{PREFIX}{k}") for k in ("rounds", "target_calls", "inputs")}
        stats = stats if any(v is not None for v in stats.values()) else sample.metadata or {}
    out = {}
    for k, bound in untrusted.STAT_BOUNDS.items():
        v = stats.get(k)
        out[k] = 0 if v is None else untrusted.count(v, k, bound)
    if stats.get("rounds") is None:  # a round is an assistant message
        rounds = sum(m.role == "assistant" for m in sample.messages or [])
        out["rounds"] = untrusted.count(rounds, "assistant messages", untrusted.MAX_ROUNDS)
    return out


def _score_rows(sample: Any) -> list[dict[str, Any]]:
    """Every ScoreResult the scorer recorded, as score rows (details through the API's allow-list
    of keys that never carry ground truth)."""
    score = (sample.scores or {}).get(SCORER)
    if score is None:
        return []
    results = (score.metadata or {}).get("scores")
    if not isinstance(results, list):
        raise ImportRefused(
            f"sample {sample.id!r}: the {SCORER} score has no ScoreResult list in its metadata"
        )
    rows: dict[str, dict[str, Any]] = {}
    for r in results:
        try:
            s = ScoreResult.model_validate(r)
            check_json_value(s.details)
        except ValueError as e:
            raise ImportRefused(f"sample {sample.id!r}: a score is not a ScoreResult: {e}") from e
        untrusted.score_value(s.value, f"score {s.metric[:64]!r}")
        untrusted.grid(s.details, f"score {s.metric[:64]!r}")
        rows[s.metric] = {  # one row per metric (the store's unique key): the last one wins
            "metric": _text(s.metric, 64),
            "value": s.value,
            "status": s.status,
            "error_category": s.error_category,
            "error": _error(s.error) if s.error is not None else None,
            "details": public_details(s.details),
        }
    return list(rows.values())


def _show_id(sample: Any) -> str:
    text = repr(str(sample.id))
    return text if len(text) <= 80 else text[:77] + "..."


def _episode(sample: Any, position: dict[str, int], cap: int, epochs: int) -> dict[str, Any]:
    """The sample as an episode row, with its messages, tool calls and scores; Untrusted for a
    value no live episode could have."""
    meta = sample.metadata or {}
    names = {k: meta.get(k) for k in ("dataset", "family", "variant")}
    bad = [k for k, v in names.items() if not isinstance(v, str) or not v]
    if bad:
        raise ImportRefused(f"sample {sample.id!r}: no {', '.join(bad)} in its metadata")
    n = len(position)
    epoch = untrusted.count(sample.epoch or 1, "epoch", epochs)
    if epoch < 1:
        raise untrusted.Untrusted(f"epoch is {epoch}; Inspect counts epochs from 1")
    messages, tool_calls = _messages(sample, cap)
    scores = _score_rows(sample)
    limit = getattr(sample, "limit", None)
    status, end_reason = ("budget_exhausted", limit.type) if limit else ("completed", "answered")
    reason = (getattr(sample, "store", None) or {}).get(END_REASON)
    if limit is None and isinstance(reason, str):  # our solvers' own budgets and ends
        status = "budget_exhausted" if reason in BUDGET_REASONS else "completed"
        end_reason = reason
    error_category = error = None
    if sample.error is not None:
        message = _error(sample.error.message)
        if _scorer_failed(sample):  # the episode ended; its scoring failed: an error row, never 0
            category, text = _category(message, "infrastructure")
            scores = [s for s in scores if s["metric"] != "scoring"] + [
                {
                    "metric": "scoring",
                    "value": None,
                    "status": "error",
                    "error_category": category,
                    "error": text,
                    "details": {},
                }
            ]
        else:
            status, end_reason = "error", "error"
            error_category, error = _category(message, "agent")
    if isinstance(meta.get("status"), str) and meta["status"] in EPISODE_STATUS:
        status = meta["status"]  # an exported run's episode keeps its own status and end
        if isinstance(meta.get("end_reason"), str):
            end_reason = _text(meta["end_reason"], 64)
    prompt_tokens, completion_tokens, cost = untrusted.usage(sample.model_usage or {})
    active_s = untrusted.amount(sample.working_time or 0.0, "working_time", float("inf"))
    answer = sample.output.completion if sample.output is not None else ""
    return {
        "idx": (epoch - 1) * n + position[str(sample.id)],  # Inspect counts epochs from 1
        "target_id": _text(str(sample.id), 256),
        "dataset": _text(names["dataset"], 64),
        "family": _text(names["family"], 32),
        "variant": _text(names["variant"], 32),
        "status": status,
        "end_reason": _text(end_reason, 64) if end_reason else None,
        "error_category": error_category,
        "error": error,
        "final_answer": _text(answer, cap) if answer else None,
        "exemplar_init": meta.get("exemplar_init") is True,
        **_stats(sample),
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "cost_usd": cost,
        "active_s": active_s,
        "scored": bool(scores),
        "started_at": _time(sample.started_at),
        "finished_at": _time(sample.completed_at),
        "traceback": _traceback(sample),
        "messages": messages,
        "tool_calls": tool_calls,
        "scores": scores,
    }


def _traceback(sample: Any) -> str | None:
    """The sample's error traceback, bounded (its tail: where it raised)."""
    if sample.error is None or not sample.error.traceback:
        return None
    return _tail(sample.error.traceback, MAX_TRACEBACK_CHARS)
