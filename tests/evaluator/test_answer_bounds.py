"""Answers a metric cannot read are the agent's score (issue 49 item 2): the bounds at their
edges (bytes of UTF-8 for descriptions, characters for code), the judge's unit tests with a
loopback judge that records what it is sent, and code scoring, which refuses an over-long answer
without starting a sandbox. Expected values and reasons are written out by hand."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from support import LoopbackHTTP, QuietHandler, chat_completion
from support.evaluator_helpers import string_target

from interp_harness.evaluator import answer_bounds as B
from interp_harness.evaluator.api import EpisodeStats
from interp_harness.evaluator.judge import JudgeSettings
from interp_harness.evaluator.numeric import GroundTruth
from interp_harness.evaluator.numeric.scorer import score_numeric_batch
from interp_harness.evaluator.parsing import ParsedAnswer
from interp_harness.evaluator.scorer import Item, ScoringContext
from interp_harness.evaluator.scoring import score_episode
from interp_harness.evaluator.strings.scorer import score_strings_batch

PAIRS = [(f"ab{k}", f"AB{k}") for k in range(10)]
TRUTH = "upper-cases the input"


def test_description_bound_counts_utf8_bytes():
    assert B.description_refusal("a" * 4000, "unit_test") is None  # exactly the bound
    why = B.description_refusal("a" * 4001, "unit_test")
    assert why is not None and why.kind == "too_long"
    assert why.reason == (
        "the description is 4,001 characters (4,001 bytes of UTF-8); unit_test reads at most "
        "4,000 bytes"
    )
    # "€" is 3 bytes of UTF-8: 1,334 of them are 4,002 bytes, 1,333 are 3,999
    assert B.description_refusal("€" * 1333, "simulation") is None
    euro = B.description_refusal("€" * 1334, "simulation")
    assert euro is not None and euro.reason == (
        "the description is 1,334 characters (4,002 bytes of UTF-8); simulation reads at most "
        "4,000 bytes"
    )
    blank = B.description_refusal(" \n\t", "observational")
    assert blank == B.Refusal("no [DESCRIPTION] in the final answer", "no_description")


def test_refused_scores_are_ok_worst_values_with_the_reason():
    why = B.Refusal("the reason", "too_long")
    res = B.refused(["simulation_all", "unit_test", "nmse", "detection_auc"], why, extra=1)
    assert [(r.status, r.value) for r in res] == [("ok", -1.0), ("ok", 0.0), ("ok", None),
                                                  ("ok", 0.0)]  # fmt: skip
    assert all(r.details == {"extra": 1, "failure": "the reason", "agent_failure": "too_long"}
               for r in res)  # fmt: skip
    with pytest.raises(KeyError):  # a metric must say what its worst value is
        B.refused(["a_new_metric"], why)


class Judge:
    """A loopback OpenAI-compatible judge that names the example whose input is a unit test's
    right one (`string_target`: "abK" beside "d1".."d3"), so the true description's ceiling is
    1 under both FIND templates, and records every prompt it is sent."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __enter__(self) -> Judge:
        judge = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                user = body["messages"][1]["content"]
                judge.prompts.append(user)
                right = re.search(r"Example (\d): input = ab\d", user)
                k = right.group(1) if right else "9"
                self.send_json(200, chat_completion(f"[ANSWER]: {k}", model="loop-judge"))

        self.http = LoopbackHTTP()
        self.http.serve(Handler)
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.close()

    def settings(self, model: str) -> JudgeSettings:
        # a model name per test: the ceiling is cached per target and judge model
        return JudgeSettings(
            provider="openai-compatible", url=f"{self.http.url}/v1", model=model, mode="generate"
        )


@pytest.fixture
def judge() -> Iterator[Judge]:
    with Judge() as j:
        yield j


LONG = "maps every letter to its upper case; " * 200  # 7,400 characters


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            f"[DESCRIPTION]: {LONG.strip()}",
            "the description is 7,399 characters (7,399 bytes of UTF-8); unit_test reads at most "
            "4,000 bytes",
        ),
        (  # code only: the tolerant parser finds an empty description before [CODE]
            "[CODE]: ```python\ndef f(s):\n    return s.upper()\n```",
            "no [DESCRIPTION] in the final answer",
        ),
    ],
    ids=["too-long", "missing"],
)
@pytest.mark.parametrize("family", ["strings", "entities"])
async def test_unreadable_description_is_zero_and_never_sent_to_the_judge(
    judge: Judge, family: str, answer: str, reason: str
):
    t = string_target(PAIRS, description=TRUTH, family=family)
    ctx = ScoringContext(judge_settings=judge.settings(f"bounds-{family}-{len(answer)}"))
    by = {r.metric: r for r in await score_episode(t, answer, EpisodeStats(), ctx)}
    for m in ("unit_test", "unit_test_strict"):
        assert (by[m].status, by[m].value) == ("ok", 0.0), by[m]
        assert by[m].details["failure"] == reason
    # only the true description's 10 unit tests reached the judge, and it got them all right
    assert len(judge.prompts) == 10 and all(TRUTH in p for p in judge.prompts)
    assert "upper case;" not in "".join(judge.prompts)
    for m in ("unit_test_ceiling", "unit_test_ceiling_strict"):
        assert (by[m].status, by[m].value) == ("ok", 1.0), by[m]


async def test_a_description_at_the_bound_is_judged(judge: Judge):
    at = ("upper-cases " * 400)[:4000]  # 4,000 bytes: read
    t = string_target(PAIRS, description=TRUTH, family="entities")
    ctx = ScoringContext(judge_settings=judge.settings("bounds-at-the-bound"))
    by = {r.metric: r for r in await score_episode(t, f"[DESCRIPTION]: {at}", EpisodeStats(), ctx)}
    # the oracle judge ignores the description: every triplet right, agent and ceiling alike
    assert by["unit_test"].value == 1.0 and "failure" not in by["unit_test"].details
    assert sum(at.strip() in p for p in judge.prompts) == 10


def _never_run(*args: object, **kwargs: object):
    raise AssertionError("an over-long answer must not start a sandbox")


def test_over_long_code_fails_without_a_sandbox():
    code = "def f(x):\n    return x\n" + "#" * (100_001 - 23)
    assert len(code) == 100_001
    answer = ParsedAnswer(description="", code=code, func_name="f", domain="", parser="tolerant")
    reason = "the code is 100,001 characters; code reads at most 100,000 characters"
    gt = GroundTruth([0.5, 1.5], [0.5, 1.5], 0)
    t = string_target(PAIRS)
    [numeric] = score_numeric_batch([Item(t, answer)], runner=_never_run, ground_truths=[gt])
    by = {r.metric: r for r in numeric}
    assert (by["code_success"].status, by["code_success"].value) == ("ok", 0.0)
    assert by["nmse"].value is None and by["nmse"].details["failure"] == reason
    [strings] = score_strings_batch([Item(t, answer)], runner=_never_run)
    for r in strings:  # string_exact, string_exact_find: 0 with the reason
        assert (r.status, r.value, r.details["failure"]) == ("ok", 0.0, reason), r
