"""What the pages show, built from the API's own views (interp_harness.harness.runs.views and .report) and the evaluator's
functions (report, answer parser, what scoring stored): scores are never re-derived, and no
benchmark panel runs code (interp_harness.harness.web.panels: they draw what the scorer stored).

Ground truth (hidden description, code, parameters, corrupted interval, expected unit-test
outputs, judge verdicts) is only built when `show_truth` is true: the episode has finished and
the viewer is authorised (interp_harness.harness.web.auth).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from interp_harness.evaluator.report import metric_interval, per_target
from interp_harness.function_store.benchmark import benchmarks
from interp_harness.harness.domain.run_config import config_label
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.runs import report as R
from interp_harness.harness.runs import views as V
from interp_harness.harness.store.models import EPISODE_TERMINAL, RUN_TERMINAL, Run
from interp_harness.harness.store.repo import Store


def headline_metrics() -> dict[str, str]:
    """The score a page shows first for each family that names one (its record's
    `headline_metric`: the FIND Table 2 metric), in registry order."""
    return {b.family: b.headline_metric for b in benchmarks() if b.headline_metric}


def headline_metric(family: str | None) -> str | None:
    return headline_metrics().get(family or "")


@dataclass
class TargetScore:
    """A target's score in one run over its repeated samples (the compare page's cell)."""

    value: float
    epochs: int
    status: str = "ok"


def target_score(
    eps: list[Any], metric: str, scores: dict[tuple[str, str], Any], spec: dict[str, Any]
) -> Any:
    """A target's score on `metric` in one run: its episode's, or with repeated samples its
    scored epochs reduced with the run's reducer as the report reduces them
    (interp_harness.evaluator.report.per_target); an error when none was scored."""
    own = [scores.get((e.id, metric)) for e in eps]
    if len(eps) == 1:
        return own[0]
    ok = [(e.target_id, s.value) for e, s in zip(eps, own, strict=True)
          if s is not None and s.status == "ok" and s.value is not None]  # fmt: skip
    if not ok:
        return next((s for s in own if s is not None), None)
    reducer = RunSpec.model_validate(spec).epoch_reducer
    (value,), _ = per_target(ok, reducer, metric_interval(metric))
    return TargetScore(value=value, epochs=len(eps))


def run_config(spec: dict[str, Any]) -> str:
    """A stored run's mode and options in one line (interp_harness.harness.domain.run_config);
    empty for a spec this version cannot read."""
    try:
        return config_label(spec)
    except ValueError:
        return ""


def may_see_truth(status: str, authorised: bool) -> bool:
    return authorised and status in EPISODE_TERMINAL


def primary_metric(family: str | None, metrics: list[V.MetricSummary]) -> V.MetricSummary | None:
    headline = headline_metrics()
    names = [headline[family]] if family in headline else list(dict.fromkeys(headline.values()))
    for name in names:
        for m in metrics:
            if m.metric == name:
                return m
    return None


def score_rows(scores: list[V.ScoreOut], show_truth: bool) -> list[dict[str, Any]]:
    rows = []
    for s in scores:
        details = s.details if show_truth else V.public_details(s.details)
        rows.append({**s.model_dump(exclude={"details"}), "details": details})
    return rows


@dataclass
class ToolEvent:
    """One tool call of an assistant message (protocol mode `tools`), as the page shows it."""

    call: V.ToolCallRef
    arguments: str  # indented JSON, cut to PREVIEW_CHARS; the template escapes it (agent text)
    arguments_chars: int  # the whole JSON's length (the API serves the arguments whole)
    row: V.ToolCallOut | None  # its stored row: result, error, latency
    target: V.TargetCallOut | None  # the target call it made


@dataclass
class Turn:
    message: V.MessageOut
    calls: list[V.TargetCallOut]  # the text protocol's commands of an assistant message
    tools: list[ToolEvent] = field(default_factory=list)
    answers: V.ToolCallOut | None = None  # on a `tool` message: the call it answers
    commands: list[str] = field(default_factory=list)  # each call's command, as the agent wrote it
    cells: list[V.LabCellOut] = field(default_factory=list)  # the lab cells it ran (the notebook)


def command_labels(content: str, calls: list[V.TargetCallOut], mode: str) -> list[str]:
    """`PYTHON(<script> …)` for each of an assistant message's target calls, with the script
    the agent named (`./temp/neuron.py`, `./temp/function.py`): its message read again as the
    episode loop read it (a call's idx is its command's index); `PYTHON(…)` where the message
    names none or was cut for the page."""
    from interp_harness.agents.protocol import parse_message
    from interp_harness.agents.protocol.cells import split_cells

    if mode == "code":  # its commands are in the text around its cells
        content, mode = split_cells(content)[0], "default"
    text = mode in ("default", "find-compat")  # the modes whose commands are in the text
    commands = parse_message(content, mode).commands if text else []  # type: ignore[arg-type]
    out = []
    for c in calls:
        path = commands[c.idx].path if c.idx < len(commands) else None
        out.append(f"PYTHON({path} …)" if path else "PYTHON(…)")
    return out


def turns(detail: V.EpisodeDetail, mode: str = "default") -> list[Turn]:
    """Messages in order, each assistant message with the target calls it asked for (and the
    command of each, read from the message in the run's protocol `mode`); in protocol mode
    `tools`, with its tool calls (each with the target call it made), and each `tool` message
    with the call it answers; in protocol modes `code` and `code-tools`, with the lab cells it
    ran (their target calls are shown under each cell in the notebook, not as commands)."""
    by_step: dict[int, list[V.TargetCallOut]] = {}
    targets = {(c.step, c.idx): c for c in detail.calls}
    rows = {(r.step, r.idx): r for r in detail.tool_calls}
    answered = {r.message_step: r for r in detail.tool_calls if r.message_step is not None}
    cells: dict[int, list[V.LabCellOut]] = {}
    in_cells: set[tuple[int, int]] = set()
    for cell in detail.cells:
        cells.setdefault(cell.step, []).append(cell)
        in_cells |= {(cell.step, c.idx) for c in cell.calls}
    for c in detail.calls:
        if (c.step, c.idx) not in rows and (c.step, c.idx) not in in_cells:
            by_step.setdefault(c.step, []).append(c)
    out = []
    for m in detail.messages:
        tools = []
        for i, c in enumerate(m.tool_calls):
            args = json.dumps(c.arguments, indent=2, ensure_ascii=False)
            tools.append(
                ToolEvent(
                    call=c,
                    arguments=args[: V.PREVIEW_CHARS],
                    arguments_chars=len(args),
                    row=rows.get((m.step, i)),
                    target=targets.get((m.step, i)),
                )
            )
        calls = by_step.get(m.step, [])
        labels = command_labels(m.content, calls, mode) if calls else []
        out.append(Turn(m, calls, tools, answered.get(m.step), labels, cells.get(m.step, [])))
    return out


def split_answer(final_answer: str | None, scores: list[V.ScoreOut]) -> Any:
    """The final answer as the scorer parsed it (description / domain / code)."""
    if not final_answer:
        return None
    from interp_harness.evaluator.parsing import parse_answer

    parser = next((s.details["parser"] for s in scores if "parser" in s.details), "tolerant")
    try:
        return parse_answer(final_answer, parser)
    except ValueError:
        return parse_answer(final_answer)


def load_target(catalogs: Any, run: Run, target_id: str) -> Any:
    """The full target (with ground truth): call only when ground truth may be shown."""
    try:
        return catalogs.get(int(run.spec.get("gen_seed") or 0)).get(target_id)
    except Exception:  # unknown dataset or data missing: the page says ground truth is unavailable
        return None


class SummaryCache:
    """RunDetail and report of finished runs (they no longer change; with 10,000 episodes
    building them takes a while). Running runs are rebuilt on every request."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._items: dict[tuple[str, str], tuple[V.RunDetail, Any]] = {}
        self._lock = threading.Lock()

    def get(self, store: Store, run: Run) -> tuple[V.RunDetail, R.ReportOut | str]:
        floor = store.runs.floor(run.id)  # its episodes are in the report
        key = (run.id, run.updated_at.isoformat(), floor.updated_at.isoformat() if floor else "")
        with self._lock:
            hit = self._items.get(key)
        if hit is not None:
            return hit
        detail = V.run_detail(store, run)
        try:
            report: R.ReportOut | str = R.build_report(store, run)
        except R.ReportUnavailable as e:
            report = str(e)
        if run.status in RUN_TERMINAL and (floor is None or floor.status in RUN_TERMINAL):
            with self._lock:
                if len(self._items) >= self.size:
                    self._items.pop(next(iter(self._items)))
                self._items[key] = (detail, report)
        return detail, report
