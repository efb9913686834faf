"""What the pages show, built from the API's own views (harness.api.schemas) and the evaluator's
functions (report, answer parser, what scoring stored): scores are never re-derived, and the
numeric plot never runs code (it draws the grids the scorer stored).

Ground truth (hidden description, code, parameters, corrupted interval, expected unit-test
outputs, judge verdicts) is only built when `show_truth` is true: the episode has finished and
the viewer is authorised (harness.web.auth).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

from harness.api import schemas as S
from harness.store.models import EPISODE_TERMINAL, RUN_TERMINAL, Run
from harness.store.repo import Store

# The score a page shows first for each family (the FIND Table 2 metric).
PRIMARY = {
    "numeric": "code_success",
    "strings": "string_exact",
    "entities": "unit_test",
    "relations": "unit_test",
}


def may_see_truth(status: str, authorised: bool) -> bool:
    return authorised and status in EPISODE_TERMINAL


def primary_metric(family: str | None, metrics: list[S.MetricSummary]) -> S.MetricSummary | None:
    names = [PRIMARY[family]] if family in PRIMARY else list(dict.fromkeys(PRIMARY.values()))
    for name in names:
        for m in metrics:
            if m.metric == name:
                return m
    return None


def score_rows(scores: list[S.ScoreOut], show_truth: bool) -> list[dict[str, Any]]:
    rows = []
    for s in scores:
        details = s.details if show_truth else S.public_details(s.details)
        rows.append({**s.model_dump(exclude={"details"}), "details": details})
    return rows


@dataclass
class Turn:
    message: S.MessageOut
    calls: list[S.TargetCallOut]


def turns(detail: S.EpisodeDetail) -> list[Turn]:
    """Messages in order, each assistant message with the target calls it asked for."""
    by_step: dict[int, list[S.TargetCallOut]] = {}
    for c in detail.calls:
        by_step.setdefault(c.step, []).append(c)
    return [Turn(m, by_step.get(m.step, [])) for m in detail.messages]


def split_answer(final_answer: str | None, scores: list[S.ScoreOut]) -> Any:
    """The final answer as the scorer parsed it (description / domain / code)."""
    if not final_answer:
        return None
    from evaluator.parsing import parse_answer

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


def numeric_plot_data(detail: S.EpisodeDetail, answer: Any, target: Any) -> dict[str, Any]:
    """What scoring computed on FIND's 256-point grid, read from the `nmse` score's details (the
    agent code's outputs and, with `target` (the viewer may see ground truth), the ground truth)
    and the corrupted interval; notes say what cannot be drawn and why. Never runs code: a page
    view must cost no sandbox run (issue 27)."""
    from evaluator.domain import true_interval

    out: dict[str, Any] = {"notes": []}
    nmse = next((s for s in detail.scores if s.metric == "nmse"), None)
    details = nmse.details if nmse is not None else {}
    grid = details.get("agent_grid")
    if answer is None:
        pass
    elif not (answer.code.strip() and answer.func_name):
        out["notes"].append("the final answer has no function to plot")
    elif isinstance(grid, dict) and grid.get("x"):
        out["agent"] = (list(grid["x"]), list(grid["y"]))
    elif nmse is None:
        out["notes"].append("the episode has no code score: nothing computed to plot")
    elif nmse.status == "error":
        out["notes"].append(f"agent's code: not scored ({nmse.error})")
    elif grid is None:
        out["notes"].append("agent's code: its outputs were not stored (scored before they were)")
    else:
        out["notes"].append(f"agent's code: {details.get('failure') or 'no numeric output'}")
    if target is not None:
        truth = details.get("truth_grid")
        if isinstance(truth, dict) and truth.get("x"):
            out["truth"] = (list(truth["x"]), list(truth["y"]))
        elif nmse is not None:
            failure = str(details.get("failure") or "")
            why = nmse.error or (failure if failure.startswith("ground truth") else "")
            out["notes"].append(f"ground truth: {why or 'not stored for this episode'}")
        out["corrupted"] = true_interval(target.hidden.corruption)
    return out


def unit_test_rows(detail: S.EpisodeDetail, answer: Any, target: Any) -> list[dict[str, Any]]:
    """Strings: input, expected, the agent code's output and match, as the `string_exact` score
    stored them (never by running the code again). Entities / relations: each triplet, the correct
    item and the judge's pick."""
    if target.family == "strings":
        from evaluator.strings import correct_pairs

        try:
            pairs = correct_pairs(target.unit_tests)
        except (ValueError, IndexError):
            return []
        exact = next((s for s in detail.scores if s.metric == "string_exact"), None)
        items = (exact.details.get("items") if exact else None) or []
        rows = []
        for k, (inp, exp) in enumerate(pairs):
            item = items[k] if k < len(items) else {}
            if "out" in item:
                output = item["out"]
            elif "err" in item:
                output = f"error: {item['err']}"
            elif answer is None or not (answer.code.strip() and answer.func_name):
                output = "(no code)"
            elif exact is not None and exact.status == "error":
                output = f"not scored: {exact.error}"
            else:
                output = "(not stored)"
            rows.append({"input": inp, "expected": exp, "output": output, "match": item.get("ok")})
        return rows
    verdicts = next(
        (s.details.get("verdicts") for s in detail.scores if s.metric == "unit_test"), None
    )
    rows = []
    for k, u in enumerate(target.unit_tests):
        v = (verdicts or [])[k] if verdicts and k < len(verdicts) else {}
        rows.append(
            {
                "input": " | ".join(u.inputs),
                "expected": f"item {u.correct}",
                "output": f"judge picked {v.get('strict_answer')}" if v else "-",
                "match": v.get("find_compat") if v else None,
            }
        )
    return rows


class SummaryCache:
    """RunDetail and report of finished runs (they no longer change; with 10,000 episodes
    building them takes a while). Running runs are rebuilt on every request."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._items: dict[tuple[str, str], tuple[S.RunDetail, Any]] = {}
        self._lock = threading.Lock()

    def get(self, store: Store, run: Run) -> tuple[S.RunDetail, S.ReportOut | str]:
        floor = store.floor_run(run.id)  # its episodes are in the report
        key = (run.id, run.updated_at.isoformat(), floor.updated_at.isoformat() if floor else "")
        with self._lock:
            hit = self._items.get(key)
        if hit is not None:
            return hit
        detail = S.run_detail(store, run)
        try:
            report: S.ReportOut | str = S.build_report(store, run)
        except S.ReportUnavailable as e:
            report = str(e)
        if run.status in RUN_TERMINAL and (floor is None or floor.status in RUN_TERMINAL):
            with self._lock:
                if len(self._items) >= self.size:
                    self._items.pop(next(iter(self._items)))
                self._items[key] = (detail, report)
        return detail, report


_ACT = re.compile(r"(.*?)\((-?\d+\.\d+)\)", re.S)
_ACT_MAX = re.compile(r" \[max (-?\d+\.\d+)\]\Z")


def activation_tokens(text: str) -> list[tuple[str, float, float]] | None:
    """A neuron target's output (`The(0.00) cat(2.31) [max 2.31]`, function_store.neurons.runner)
    as (token, activation, shade in [0, 1] relative to the text's max), or None if not that form."""
    m = _ACT_MAX.search(text or "")
    if m is None:
        return None
    body, top = text[: m.start()], float(m.group(1))
    toks = [(t, float(v)) for t, v in _ACT.findall(body)]
    if not toks or "".join(f"{t}({v})" for t, v in _ACT.findall(body)) != body:
        return None
    return [(t, v, round(max(v, 0.0) / top, 3) if top > 0 else 0.0) for t, v in toks]
