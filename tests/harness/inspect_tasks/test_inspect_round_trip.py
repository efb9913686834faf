"""`harness import-inspect` then `harness export --format inspect` then `harness import-inspect`
again: usage (tokens and cost per episode), the model with Inspect's provider prefix, every score
(errors included) and the epochs are what the first log said, at every step. The log is written
with Inspect's own Log File API in the shape `inspect eval --model openai-api/backbone/...`
writes: the usage keyed by the full model name, the assistant messages named by the server's
model name only (no provider prefix)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from interp_harness.harness.cli import app
from interp_harness.harness.store.repo import open_store

inspect_log = pytest.importorskip("inspect_ai.log", reason="inspect-ai is in the dev extra")
from inspect_ai.model import (  # noqa: E402
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.scorer import Score  # noqa: E402

SERVED = "SmolLM2-135M-Instruct"
MODEL = f"openai-api/backbone/{SERVED}"
TARGETS = [f"find-gen/numeric/s0/f0000{i}" for i in range(3)]
EPOCHS = 3
PROMPT, COMPLETION, COST = 1840, 512, 0.0025  # each episode's usage


def _results(target: int, epoch: int) -> list[dict]:
    """The ScoreResults the scorer recorded: known values per (target, epoch); the last target's
    second epoch has a judge error instead of its unit-test score (an error, never a 0)."""
    ok = {"code_success": float((target + epoch) % 2), "nmse": 0.1 * (target + 1) * epoch}
    out = [
        {"metric": m, "value": v, "status": "ok", "error_category": None, "error": None,
         "details": {"parser": "tolerant"}}
        for m, v in ok.items()
    ]  # fmt: skip
    if (target, epoch) == (2, 2):
        out.append({"metric": "unit_test", "value": None, "status": "error",
                    "error_category": "judge", "error": "the judge is unreachable",
                    "details": {}})  # fmt: skip
    return out


def _sample(target: int, epoch: int) -> inspect_log.EvalSample:
    results = _results(target, epoch)
    answer = f"[DESCRIPTION]: f{target} epoch {epoch}"
    return inspect_log.EvalSample(
        id=TARGETS[target],
        epoch=epoch,
        input="Describe f.",
        target="",
        metadata={"dataset": "find-gen", "family": "numeric", "variant": "clean"},
        messages=[
            ChatMessageSystem(content="You are an interpreter."),
            ChatMessageUser(content="Describe f."),
            ChatMessageAssistant(content=answer, model=SERVED),  # as openai-api names it
        ],
        output=ModelOutput.from_content(model=SERVED, content=answer),
        scores={
            "interp_harness": Score(
                value={r["metric"]: r["value"] for r in results if r["status"] == "ok"},
                answer=answer,
                metadata={
                    "scores": results,
                    "stats": {"rounds": 1, "target_calls": 2, "inputs": 10 * (target + 1)},
                },
            )
        },
        model_usage={
            MODEL: ModelUsage(
                input_tokens=PROMPT,
                output_tokens=COMPLETION,
                total_tokens=PROMPT + COMPLETION,
                total_cost=COST,
            )
        },
    )


def _write_log(path: Path) -> None:
    samples = [_sample(t, e) for e in range(1, EPOCHS + 1) for t in range(len(TARGETS))]
    total = len(samples)
    log = inspect_log.EvalLog(
        eval=inspect_log.EvalSpec(
            created="2026-11-25T10:00:00+00:00",
            task="interp_harness/find",
            task_args={"dataset": "find-gen", "family": "numeric", "protocol": "text"},
            dataset=inspect_log.EvalDataset(name="find-gen", samples=len(TARGETS)),
            model=MODEL,
            config=inspect_log.EvalConfig(epochs=EPOCHS, epochs_reducer=["max"]),
        ),
        status="success",
        stats=inspect_log.EvalStats(
            started_at="2026-11-25T10:00:00+00:00",
            completed_at="2026-11-25T10:05:00+00:00",
            model_usage={
                MODEL: ModelUsage(
                    input_tokens=PROMPT * total,
                    output_tokens=COMPLETION * total,
                    total_tokens=(PROMPT + COMPLETION) * total,
                    total_cost=COST * total,
                )
            },
        ),
        samples=samples,
    )
    inspect_log.write_eval_log(log, str(path))


def cli(db: Path, *args: str) -> Result:
    env = {"DATABASE_URL": f"sqlite:///{db}"}
    result = CliRunner().invoke(app, list(args), env=env)
    assert result.exit_code == 0, result.output
    return result


def _stored(db: Path, run_id: str) -> dict:
    """What the store holds of an imported run, by (target, epoch)."""
    store = open_store(f"sqlite:///{db}")
    run = store.runs.get(run_id)
    assert run is not None
    n = len(run.target_ids)
    episodes = {}
    for e in store.episodes.of_run(run_id):
        scores = {
            (s.metric, s.value, s.status, s.error_category, s.error)
            for s in store.scores.of_episodes([e.id])
        }
        episodes[(e.target_id, e.idx // n + 1)] = (
            e.prompt_tokens, e.completion_tokens, round(e.cost_usd, 9), e.final_answer,
            (e.rounds, e.target_calls, e.inputs), frozenset(scores),
        )  # fmt: skip
    source = store.events.first_data(run_id, "inspect_import") or {}
    return {
        "agent": run.agent,
        "epochs": (run.spec["epochs"], run.spec["epoch_reducer"]),
        "model": source.get("model"),
        "dropped": source.get("dropped"),
        "episodes": episodes,
    }


def _expected_episodes() -> dict:
    out = {}
    for e in range(1, EPOCHS + 1):
        for t, tid in enumerate(TARGETS):
            scores = {
                (r["metric"], r["value"], r["status"], r["error_category"], r["error"])
                for r in _results(t, e)
            }
            out[(tid, e)] = (
                PROMPT, COMPLETION, COST, f"[DESCRIPTION]: f{t} epoch {e}",
                (1, 2, 10 * (t + 1)), frozenset(scores),
            )  # fmt: skip
    return out


def test_import_export_import_keeps_usage_model_scores_and_epochs(tmp_path: Path) -> None:
    first = tmp_path / "inspect.eval"
    _write_log(first)
    a, b = tmp_path / "a.db", tmp_path / "b.db"

    run_a = json.loads(cli(a, "import-inspect", str(first), "--json").stdout)["id"]
    stored_a = _stored(a, run_a)
    assert stored_a["episodes"] == _expected_episodes()
    assert stored_a["agent"] == f"inspect:{MODEL}" and stored_a["model"] == MODEL
    assert stored_a["epochs"] == (EPOCHS, "max")

    exported = tmp_path / "exported.eval"
    cli(a, "export", run_a, "--format", "inspect", "-o", str(exported))
    log = inspect_log.read_eval_log(str(exported))
    # the model as the first log named it, provider prefix included, and the usage it counted
    assert log.eval.model == MODEL
    assert (log.eval.config.epochs, log.eval.config.epochs_reducer) == (EPOCHS, ["max"])
    n = len(TARGETS) * EPOCHS
    (total,) = log.stats.model_usage.items()
    assert total[0] == MODEL
    assert (total[1].input_tokens, total[1].output_tokens, total[1].total_tokens) == (
        PROMPT * n, COMPLETION * n, (PROMPT + COMPLETION) * n)  # fmt: skip
    assert total[1].total_cost == pytest.approx(COST * n)
    assert sorted((s.id, s.epoch) for s in log.samples or []) == sorted(
        (t, e) for t in TARGETS for e in range(1, EPOCHS + 1)
    )
    for s in log.samples or []:
        ((name, usage),) = s.model_usage.items()
        assert name == MODEL
        assert (usage.input_tokens, usage.output_tokens) == (PROMPT, COMPLETION)
        assert usage.total_cost == pytest.approx(COST)
        t = TARGETS.index(str(s.id))
        assert s.scores is not None
        assert s.scores["interp_harness"].metadata["scores"] == _results(t, s.epoch)

    run_b = json.loads(cli(b, "import-inspect", str(exported), "--json").stdout)["id"]
    stored_b = _stored(b, run_b)
    assert stored_b["episodes"] == stored_a["episodes"]
    assert stored_b["epochs"] == stored_a["epochs"]
    # the same agent and model, nothing dropped from the spec: the name is the importer's own
    assert (stored_b["agent"], stored_b["model"]) == (f"inspect:{MODEL}", MODEL)
    assert stored_b["dropped"] == []
    # and the reports of both imports agree
    # (but for each row's run id: each import is a run of its own)
    reports = [[{k: v for k, v in row.items() if k != "run_id"}
                for row in json.loads(cli(db, "report", r, "--json").stdout)["report"]["rows"]]
               for db, r in ((a, run_a), (b, run_b))]  # fmt: skip
    assert reports[0] and reports[0] == reports[1]
