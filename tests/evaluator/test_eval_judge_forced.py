"""Forced-choice judge mode: detection and malformed replies (a loopback stand-in, since the real
server never sends these; its correct replies are tested in tests/entities_relations/test_neural_judge.py)."""

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from support.evaluator_helpers import string_target

from interp_harness.evaluator.judge import JudgeSettings, OpenAICompatibleJudge, make_judge
from interp_harness.evaluator.strings.scorer import PROMPT as STRINGS
from interp_harness.evaluator.unit_tests import judge_description

PAIRS = [(f"ab{k}", f"AB{k}") for k in range(10)]


def _app(owner: str, completion: dict, log: list) -> FastAPI:
    app = FastAPI()

    @app.get("/v1/models")
    async def models():
        return {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": owner}]}

    @app.post("/v1/batch/chat/completions")
    async def batch(req: Request):
        body = await req.json()
        log.append(body)
        return JSONResponse({"completions": [completion] * len(body["messages_list"])})

    @app.post("/v1/chat/completions")
    async def chat(req: Request):
        log.append(await req.json())
        return JSONResponse({"choices": [{"message": {"content": "[ANSWER]: 1"}}]})

    return app


def _fc(tokens: list[str], lps: list[float]) -> dict:
    top = [{"token": t, "logprob": x} for t, x in zip(tokens, lps, strict=True)]
    return {"choices": [{"message": {"content": "2"}, "logprobs": {"content": [{"token": "2", "logprob": -0.1, "top_logprobs": top}]}}]}  # fmt: skip


async def test_detection_by_owner(serve):
    for owner, mode in (("interp-harness", "forced-choice"), ("vllm", "generate")):
        srv = serve(_app(owner, _fc(["1", "2", "3"], [-2, -0.1, -3]), []))
        judge = OpenAICompatibleJudge(srv.url + "/v1", "m")
        assert await judge.mode() == mode
        await judge.aclose()


async def test_verdict_is_argmax_and_generate_path_unused(serve):
    log: list = []
    srv = serve(_app("interp-harness", _fc(["1", "2", "3"], [-2.0, -0.1, -3.0]), log))
    judge = OpenAICompatibleJudge(srv.url + "/v1", "m")
    res = await judge_description(judge, STRINGS, "d", string_target(PAIRS).unit_tests)
    await judge.aclose()
    assert len(log) == 1 and "messages_list" in log[0]  # one batch request, no generate call
    v = res[0].details["verdicts"][0]
    assert v["strict_answer"] == 2 and v["logprobs"] == {"1": -2.0, "2": -0.1, "3": -3.0}
    # correct indices of string_target cycle 1, 2, 3: "2" is right on 3 of 10 (k = 1, 4, 7)
    assert res[0].value == res[1].value == pytest.approx(0.3)


@pytest.mark.parametrize(
    "completion",
    [
        {"choices": [{"message": {"content": "2"}}]},  # no logprobs
        _fc(["1", "2"], [-1.0, -2.0]),  # one option missing
        _fc(["a", "b", "c"], [-1.0, -2.0, -3.0]),  # not the options
    ],
)
async def test_malformed_forced_choice_reply_is_a_judge_error(serve, completion):
    log: list = []
    srv = serve(_app("interp-harness", completion, log))
    judge = OpenAICompatibleJudge(srv.url + "/v1", "m", max_retries=1)
    res = await judge_description(judge, STRINGS, "d", string_target(PAIRS[:3]).unit_tests)
    await judge.aclose()
    for r in res:
        assert r.status == "error" and r.error_category == "judge" and r.value is None
        assert "after 2 attempts" in r.error
    assert len(log) == 2


def test_forced_choice_refused_for_sdk_providers():
    with pytest.raises(Exception, match="forced-choice needs provider openai-compatible"):
        make_judge(JudgeSettings(provider="openai", mode="forced-choice", api_key="x"))
