"""The Inspect export (`harness export --format inspect`) carries no ground truth (issue 27, item
13): targets with canary ground truth (description, code, corrupted interval, expected unit-test
outputs) are scored by the real evaluator (agent code in the scoring sandbox), the scores stored,
the run exported as `.json` and `.eval`, and no canary may appear in either file."""

from __future__ import annotations

import asyncio
import json
import zipfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from interp_harness.evaluator.api import EpisodeStats
from interp_harness.evaluator.scorer import ScoringContext
from interp_harness.evaluator.scoring import score_episode
from interp_harness.function_store.models import (
    CallOutput,
    HiddenTruth,
    PublicMeta,
    Target,
    UnitTest,
)
from interp_harness.function_store.runtime import build_runner, register_runner
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.sandbox.code_runner import run_in_sandbox
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

pytest.importorskip("inspect_ai.log", reason="inspect-ai is in the dev extra")

# Values that occur nowhere but in the targets' hidden truth.
LO, HI = -97.3125, -41.6875
CANARIES = [
    "CANARY-DESCRIPTION-5d1e",
    "CANARY_CODE_8b2f",
    "CANARY-EXPECTED-OUT-93ac",
    "CANARY-HIDDEN-SPEC-77aa",
    "-97.3125",
    "-41.6875",
]


class _Runner:
    """The ground truth: 3x + 1 (outside the corrupted interval, which the scorer reads from
    the target's hidden corruption)."""

    def call(self, inputs: Sequence[str]) -> list[CallOutput]:
        return [CallOutput(input=x, output=str(3 * float(x) + 1)) for x in inputs]


@register_runner("export-truth-test")
def _factory(target: Target, ctx: object) -> _Runner:
    return _Runner()


def numeric_target() -> Target:
    return Target(
        id="canary/numeric/f0",
        dataset="canary",
        family="numeric",
        variant="corrupted",
        public=PublicMeta(input_kind="number", prompt_family="numeric", value_range=(-128, 128)),
        hidden=HiddenTruth(
            runner="export-truth-test",
            spec={"note": "CANARY-HIDDEN-SPEC-77aa"},
            description="CANARY-DESCRIPTION-5d1e",
            code="def CANARY_CODE_8b2f(x): return 3 * x + 1",
            corruption={"type": "interval_inside", "interval": [LO, HI]},
        ),
    )


def strings_target() -> Target:
    return Target(
        id="canary/strings/f0",
        dataset="canary",
        family="strings",
        variant="atomic",
        public=PublicMeta(input_kind="string", prompt_family="strings"),
        hidden=HiddenTruth(
            runner="export-truth-test",
            spec={"note": "CANARY-HIDDEN-SPEC-77aa"},
            description="CANARY-DESCRIPTION-5d1e",
            code="def CANARY_CODE_8b2f(s): return s",
        ),
        unit_tests=[
            UnitTest(
                inputs=[f"in{k}a", f"in{k}b", f"in{k}c"],
                outputs=[f"CANARY-EXPECTED-OUT-93ac-{k}", "zz", "yy"],
                correct=1,
            )
            for k in range(3)
        ],
    )


NUMERIC_ANSWER = """[DESCRIPTION]: linear.
[DOMAIN]: the interval [-60, -20] behaves differently.
[CODE]:
```python
def f(x):
    return 3 * x + 1
```"""

STRINGS_ANSWER = """[DESCRIPTION]: reverses.
[CODE]:
```python
def f(s):
    return s[::-1]
```"""


def _store_scored_run(store: Store, target: Target, answer: str, scores: list) -> str:
    run = store.runs.create(
        RunSpec(agent="scripted-numeric", dataset="canary", family=target.family), [target.id]
    )
    store.episodes.ensure(
        run.id,
        [
            {
                "idx": 0,
                "target_id": target.id,
                "dataset": "canary",
                "family": target.family,
                "variant": target.variant,
            }
        ],
    )
    (ep,) = store.episodes.of_run(run.id)
    store.episodes.add_messages(ep.id, [{"step": 0, "role": "assistant", "content": answer}])
    store.episodes.finish(
        ep.id, run.id, status="completed", end_reason="description", final_answer=answer
    )
    store.scores.save(ep.id, [s.model_dump() for s in scores])
    store.runs.set_status(run.id, "completed")
    return run.id


def _context(target: Target) -> ScoringContext:
    """As the orchestrator scores: agent code in the sandbox; the target run here (its stand-in
    for the sandboxed target client)."""

    async def call(target_id: str, inputs: Sequence[str]) -> list:
        return build_runner(target).call(list(inputs))

    return ScoringContext(call_target=call, code_runner=run_in_sandbox)


@pytest.mark.parametrize(
    ("target", "answer"),
    [(numeric_target(), NUMERIC_ANSWER), (strings_target(), STRINGS_ANSWER)],
    ids=["numeric", "strings"],
)
def test_inspect_export_has_no_ground_truth(tmp_path: Path, target: Target, answer: str) -> None:
    from interp_harness.harness.inspect_tasks.export import write_inspect_log

    # in a thread with its own event loop: a test run that also drove playwright's sync API
    # leaves a loop running in this one
    with ThreadPoolExecutor(1) as pool:
        scores = pool.submit(
            asyncio.run, score_episode(target, answer, EpisodeStats(), _context(target))
        ).result()
    code = [s for s in scores if s.metric in ("nmse", "code_success", "domain_iou", "string_exact")]
    assert code and all(s.status == "ok" for s in code), scores  # (no judge here: its error)
    stored = json.dumps([s.details for s in scores])
    if target.family == "numeric":
        # the store keeps what the scorer saw (the authorised API shows it): the canary is there
        assert "-97.3125" in stored
    store = Store(make_engine(f"sqlite:///{tmp_path}/h.db"))
    run_id = _store_scored_run(store, target, answer, scores)
    run = store.runs.get(run_id)
    assert run is not None

    as_json = write_inspect_log(store, run, tmp_path / "run.json").read_text()
    with zipfile.ZipFile(write_inspect_log(store, run, tmp_path / "run.eval")) as z:
        as_eval = "\n".join(z.read(n).decode("utf-8", "replace") for n in z.namelist())
    for text in (as_json, as_eval):
        for canary in CANARIES:
            assert canary not in text, f"ground truth {canary!r} is in the Inspect export"
    # the export still has the scores and their harmless details (not an empty shell)
    log = json.loads(as_json)
    (sample,) = log["samples"]
    metrics = set(sample["scores"]) - {"interp_harness"}  # (all of them, as the tasks' scorer)
    assert {s.metric for s in scores} == metrics
    assert {
        r["metric"] for r in sample["scores"]["interp_harness"]["metadata"]["scores"]
    } == metrics
    if target.family == "numeric":
        assert sample["scores"]["domain_iou"]["metadata"]["predicted"] == [[-60.0, -20.0]]
