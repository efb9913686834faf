"""Hostile answer code (answers.ANSWERS): in the canary server's episodes (single scoring) and in
one batch with correct siblings (batch scoring, the real bwrap worker). What it found never comes
back, and a forging answer scores exactly like the same answer without the forgery while its
correct siblings stay correct."""

from __future__ import annotations

import json
from typing import Any

import pytest
from answers import ANSWERS
from support.battery import Battery
from support.canary import Canaries, assert_clean
from support.evaluator_helpers import numeric_target

from interp_harness.evaluator.numeric.scorer import score_numeric_batch
from interp_harness.evaluator.parsing import parse_answer
from interp_harness.evaluator.sandbox_exec import ExecSettings
from interp_harness.evaluator.scorer import EvalSettings, Item
from interp_harness.harness.sandbox.code_runner import run_in_sandbox

FORGERS = [n for n, a in ANSWERS.items() if a.like]
CORRECT = "correct-lin2x"


def _code_score(scores: list[dict[str, Any]]) -> tuple[Any, ...]:
    """What a forgery could change: code_success's status, value and error category."""
    (s,) = [s for s in scores if s["metric"] == "code_success"]
    return s["status"], s["value"], s["error_category"]


@pytest.mark.parametrize("name", list(ANSWERS))
def test_answer_in_a_served_episode(name: str, battery: Battery, canaries: Canaries) -> None:
    entry = f"answer:{name}"
    assert battery.runs[entry] in battery.done, f"the run of answer {name} did not end"
    detail = battery.episode(entry)
    assert detail["scored"], detail
    like = ANSWERS[name].like
    if like is not None:
        honest = battery.episode(f"answer:{like}")
        assert _code_score(detail["scores"]) == _code_score(honest["scores"]), (
            f"answer {name} scored unlike {like} (issue 27 item {ANSWERS[name].issue_item}): "
            f"{_code_score(detail['scores'])} vs {_code_score(honest['scores'])}"
        )
    assert_clean(canaries, f"GET /episodes/{detail['id']} of answer {name}", json.dumps(detail))


def _batch(codes: list[str]) -> tuple[list[tuple[Any, ...]], str]:
    """code_success of each answer, and every score of the batch as JSON."""
    lin = numeric_target("adv-lin2x", lambda x: 2.0 * x)
    items = [Item(lin, parse_answer(f"[CODE]: ```python\n{c}```")) for c in codes]
    out = score_numeric_batch(
        items,
        settings=EvalSettings(cpu_s=2, wall_s=10),
        exec_settings=ExecSettings(sandbox="bwrap", chunk_size=100),
        runner=run_in_sandbox,
    )
    dumped = [[s.model_dump() for s in scores] for scores in out]
    return [_code_score(scores) for scores in dumped], json.dumps(dumped)


@pytest.mark.parametrize("name", FORGERS)
def test_forgery_in_a_batch_changes_no_score(
    name: str, canaries: Canaries, monkeypatch: pytest.MonkeyPatch
) -> None:
    for k, v in canaries.env().items():  # this process starts the batch's sandbox
        monkeypatch.setenv(k, v)
    a = ANSWERS[name]
    assert a.like is not None
    correct = ANSWERS[CORRECT].code
    (honest,), _ = _batch([ANSWERS[a.like].code])
    got, dumped = _batch([correct, a.code, correct, a.code, correct])
    assert got[0] == got[2] == got[4] == ("ok", 1.0, None), (
        f"correct siblings of {name} changed (issue 27 item {a.issue_item}): {got}"
    )
    assert got[1] == got[3] == honest, (
        f"{name} scored unlike {a.like} (issue 27 item {a.issue_item}): {got} vs {honest}"
    )
    assert_clean(canaries, f"batch scores with answer {name} (every field)", dumped)
