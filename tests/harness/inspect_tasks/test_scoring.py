"""The Inspect scorer of our tasks (harness/inspect_tasks/scoring.py), through Inspect's own eval
loop on find-gen targets selected as `harness run` does, their target services in real bubblewrap
sandboxes, with scripted solvers: the ground-truth-equivalent answer scores 1.0, nonsense 0, a
judge that is down is a scorer error on the sample (never a score); the log's scores equal
`score_episode` on the same answers, its metrics the report's intervals on the per-sample values;
no ground truth in the log."""

from __future__ import annotations

import asyncio
import math
import shutil
import socket
import zipfile
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval_async
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import GenerateConfig, Model, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store

from interp_harness.evaluator.api import EpisodeStats, ScoreResult
from interp_harness.evaluator.report import t_interval, wilson
from interp_harness.evaluator.scoring import ScoringContext, score_episode
from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.models import Target
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.inspect_tasks.resources import resources
from interp_harness.harness.inspect_tasks.scoring import (
    InspectGraderJudge,
    interp_harness_scorer,
)
from interp_harness.harness.runs.selection import select_targets
from interp_harness.harness.sandbox.code_runner import run_in_sandbox

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (the target sandbox)"
)

SCORER = "interp_harness"  # the scores' name in the log
STATS = {"target_calls": 3, "inputs": 7, "rounds": 2}


def oracle_answer(t: Target) -> str:
    """FIND's answer format with the target's own code (read here, in the test, from its hidden
    part): its function without the command-line block, the canary comment left out."""
    code = (t.hidden.code or "").split("\nif __name__")[0]
    code = "\n".join(line for line in code.splitlines() if "CANARY" not in line)
    return f"[DESCRIPTION]: a function\n[DOMAIN]: none\n[CODE]: ```python\n{code}\n```"


NONSENSE = "[DESCRIPTION]: it hums\n[CODE]: ```python\ndef function(x):\n    return 'hum'\n```"


@solver
def scripted(kind: str) -> Solver:
    """Answers without a model: the oracle's answer or nonsense, with the contract's store keys."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        t = resources().target(str(state.sample_id))
        answer = oracle_answer(t) if kind == "oracle" else NONSENSE
        st = store()
        for k, v in STATS.items():
            st.set(f"interp_harness:{k}", v)
        st.set("interp_harness:answer", answer)
        state.output = ModelOutput.from_content("scripted", answer)
        return state

    return solve


def _task(name: str, targets: list[Target], kind: str, family: str, **kw: Any) -> Task:
    samples = [
        Sample(
            id=t.id,
            input="the task prompt",
            target="",
            metadata={"dataset": t.dataset, "family": t.family, "variant": t.variant},
        )
        for t in targets
    ]
    return Task(
        name=name,
        dataset=samples,
        solver=scripted(kind),
        scorer=interp_harness_scorer(families=[family]),
        **kw,
    )


MOCK_VERDICT = "[ANSWER]: 2"


def mock_grader() -> Model:
    """Inspect's mock provider as the grader, always naming example 2. Its replies carry usage
    (else mockllm counts tokens with tiktoken, which downloads its encoding: no network here)."""

    def reply(*_: Any) -> ModelOutput:
        out = ModelOutput.from_content("mockllm/model", MOCK_VERDICT)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return get_model("mockllm/model", custom_outputs=reply)


def _dead_url() -> str:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One eval of four small tasks (one event loop: the target services' clients belong to it),
    then `score_episode` on the same answers in the same loop."""
    cat = Catalog()

    def pick(family: str, **kw: Any) -> list[Target]:
        spec = RunSpec(agent="scripted-numeric", dataset="find-gen", family=family, **kw)
        return select_targets(spec, cat)

    numeric = pick("numeric", variant="clean", limit=2, seed=0)
    strings = pick("strings", limit=2, seed=0)
    resources().add_targets(numeric + strings)
    logs_dir = tmp_path_factory.mktemp("logs")
    dead = get_model(
        "openai-api/dead/judge",
        base_url=_dead_url(),
        api_key="unused",
        config=GenerateConfig(max_retries=0, timeout=5),
    )
    tasks = [
        _task("oracle", numeric, "oracle", "numeric"),
        _task("nonsense", numeric[:1], "nonsense", "numeric"),
        _task(
            "strings_mock", strings[:1], "oracle", "strings", model_roles={"grader": mock_grader()}
        ),
        _task(
            "judge_down",
            strings,
            "oracle",
            "strings",
            model_roles={"grader": dead},
            fail_on_error=False,  # a scorer error is recorded on its sample; the eval goes on
        ),
        # Inspect's default (`--fail-on-error`): the first sample error fails the eval
        _task("judge_down_default", strings[:1], "oracle", "strings", model_roles={"grader": dead}),
    ]

    async def main() -> tuple[list[EvalLog], dict[str, list[ScoreResult]]]:
        logs = await eval_async(
            tasks,
            model="mockllm/model",
            log_dir=str(logs_dir),
            max_tasks=2,
        )
        ctx = ScoringContext(call_target=resources().call, code_runner=run_in_sandbox)
        direct = {}
        for kind, targets in (("oracle", numeric), ("nonsense", numeric[:1])):
            for t in targets:
                answer = oracle_answer(t) if kind == "oracle" else NONSENSE
                stats = EpisodeStats(**STATS)
                direct[f"{kind}/{t.id}"] = await score_episode(t, answer, stats, ctx)
        # the strings sample with the same grader (our judge interface over it), outside Inspect
        graded = ScoringContext(
            call_target=resources().call,
            code_runner=run_in_sandbox,
            judge_factory=lambda js: InspectGraderJudge(mock_grader(), js),
        )
        t = strings[0]
        direct[f"strings/{t.id}"] = await score_episode(
            t, oracle_answer(t), EpisodeStats(**STATS), graded
        )
        await resources().aclose()
        return logs, direct

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("INSPECT_DISPLAY", "none")
        logs, direct = asyncio.run(main())
    by_name = {log.eval.task: read_eval_log(log.location) for log in logs}
    assert len(by_name) == len(tasks)
    return {"logs": by_name, "direct": direct, "numeric": numeric, "strings": strings}


def _log(run: dict[str, Any], name: str) -> EvalLog:
    return run["logs"][name]


def _ok_values(results: list[ScoreResult]) -> dict[str, float]:
    return {r.metric: r.value for r in results if r.status == "ok" and r.value is not None}


def test_registry_names() -> None:
    """Called, the factory's instances are named `interp_harness` (the log's name for its
    scores); created by a registry name (`--scorer`, `inspect score`), Inspect keeps the name it
    was created by, so the log's own name re-creates a scorer of that name. Either way the
    instance carries the families' metrics."""
    from inspect_ai._util.registry import registry_create, registry_info

    metrics = ["string_exact", "unit_test", "string_exact_find", "unit_test_strict"]
    called = registry_info(interp_harness_scorer(families=["strings"]))
    assert called.name == "interp_harness/interp_harness"
    for name in ("interp_harness/interp_harness_scorer", "interp_harness/interp_harness"):
        info = registry_info(registry_create("scorer", name, families=["strings"]))
        assert info.name == name and sorted(info.metadata["metrics"]) == sorted(metrics)


@pytest.mark.slow
def test_oracle_scores_one_and_equals_score_episode(run: dict[str, Any]) -> None:
    log = _log(run, "oracle")
    assert log.status == "success" and len(log.samples or []) == 2
    (spec,) = log.eval.scorers or []
    assert spec.name == SCORER and spec.options == {"families": ["numeric"]}
    for s in log.samples or []:
        assert s.error is None
        score = s.scores[SCORER]
        direct = run["direct"][f"oracle/{s.id}"]
        assert score.value["code_success"] == 1.0
        got = {k: v for k, v in score.value.items() if not math.isnan(v)}
        assert got == _ok_values(direct)
        assert math.isnan(score.value["domain_iou"])  # a clean function: no IoU (unscored)
        assert score.answer == oracle_answer(resources().target(str(s.id)))
        meta = score.metadata or {}
        assert meta["stats"] == STATS
        assert [m["metric"] for m in meta["scores"]] == [r.metric for r in direct]
        assert all(m["status"] == "ok" for m in meta["scores"])


@pytest.mark.slow
def test_nonsense_scores_zero_not_an_error(run: dict[str, Any]) -> None:
    log = _log(run, "nonsense")
    (s,) = log.samples or []
    assert s.error is None
    assert s.scores[SCORER].value["code_success"] == 0.0
    got = {k: v for k, v in s.scores[SCORER].value.items() if not math.isnan(v)}
    assert got == _ok_values(run["direct"][f"nonsense/{s.id}"])


def _metrics(log: EvalLog, key: str) -> dict[str, float]:
    (es,) = [e for e in log.results.scores if e.name == key]  # type: ignore[union-attr]
    return {name: m.value for name, m in es.metrics.items()}


def test_metrics_are_the_report_intervals(run: dict[str, Any]) -> None:
    oracle = _metrics(_log(run, "oracle"), "code_success")
    lo, hi = wilson(2, 2)  # type: ignore[misc]
    assert oracle == pytest.approx(
        {"interp_harness/mean": 1.0, "interp_harness/ci_low": lo, "interp_harness/ci_high": hi}
    )
    nonsense = _metrics(_log(run, "nonsense"), "code_success")
    lo, hi = wilson(0, 1)  # type: ignore[misc]
    assert nonsense == pytest.approx(
        {"interp_harness/mean": 0.0, "interp_harness/ci_low": lo, "interp_harness/ci_high": hi}
    )
    # a Student-t row: the string_exact values of the mock-graded task (one sample: no interval)
    strings = _metrics(_log(run, "strings_mock"), "string_exact")
    assert strings["interp_harness/mean"] == 1.0
    assert t_interval([1.0]) is None and math.isnan(strings["interp_harness/ci_low"])


def test_mock_grader_is_used_and_scores(run: dict[str, Any]) -> None:
    """The `grader` role judges the unit tests: a mock always naming example 2 scores the share of
    triplets whose right example is 2 (a verdict, not an error), under the grader's name."""
    (s,) = _log(run, "strings_mock").samples or []
    assert s.error is None
    score = s.scores[SCORER]
    tests = resources().target(str(s.id)).unit_tests
    expected = sum(t.correct == 2 for t in tests) / len(tests)
    assert 0 < expected < 1  # the check can tell the grader from any constant
    assert score.value["string_exact"] == 1.0
    got = {k: v for k, v in score.value.items() if not math.isnan(v)}
    assert got == _ok_values(run["direct"][f"strings/{s.id}"])
    assert score.value["unit_test"] == pytest.approx(expected)
    assert score.value["unit_test_strict"] == pytest.approx(expected)
    ut = next(m for m in score.metadata["scores"] if m["metric"] == "unit_test")
    assert ut["details"]["judge_model"] == "mockllm/model"
    assert "verdicts" not in ut["details"]  # the judge's tests stay out (allow-list)
    # the grader's calls (they read the unit tests and, for the ceiling, the true description)
    # are counted for the role but are not events of the sample's transcript
    assert s.role_usage["grader"].total_tokens > 0
    assert not [e for e in s.events if e.event == "model"]


def test_judge_down_is_a_scorer_error_on_the_sample(run: dict[str, Any]) -> None:
    """Inspect 0.3.285 records a scorer exception as the sample's `error`, with no scores for it;
    with fail_on_error=False the eval completes, by default the eval fails with that error."""
    log = _log(run, "judge_down")
    assert log.status == "success"
    assert len(log.samples or []) == 2
    for s in log.samples or []:
        assert s.error is not None and "ScoringFailed" in s.error.traceback
        assert "[judge] unit_test: judge:" in s.error.message
        assert "grader openai-api/dead/judge failed: APIConnectionError" in s.error.message
        assert not s.scores  # never a number
    assert log.results is None or not log.results.scores  # no metric from an unscored sample
    default = _log(run, "judge_down_default")
    assert default.status == "error" and default.error is not None
    assert "unit_test: judge:" in default.error.message
    (s,) = default.samples or []
    assert s.error is not None and not s.scores


def test_no_ground_truth_in_the_logs(run: dict[str, Any]) -> None:
    """The hidden truth of every target (its description, code, canary) is nowhere in the log
    files except where a scripted answer is the code itself (the oracle's own answer)."""
    for name, log in run["logs"].items():
        data = b""
        with zipfile.ZipFile(Path(log.location)) as z:
            for n in z.namelist():
                data += z.read(n)
        text = data.decode("utf-8", "replace")
        for t in run["numeric"] + run["strings"]:
            assert t.hidden.canary not in text, (name, t.id)
            assert t.hidden.description not in text, (name, t.id)
            if not name.endswith("oracle"):
                assert repr(t.hidden.spec) not in text
