import asyncio
import re

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from support.evaluator_helpers import local_ctx, string_target

from interp_harness.evaluator.api import EpisodeStats
from interp_harness.evaluator.entities_relations.scorer import ENTITIES_PROMPT, RELATIONS_PROMPT
from interp_harness.evaluator.judge import (
    AnthropicJudge,
    JudgeSettings,
    OpenAICompatibleJudge,
    OpenAIJudge,
)
from interp_harness.evaluator.scoring import score_episode
from interp_harness.evaluator.strings.scorer import PROMPT as STRINGS
from interp_harness.evaluator.unit_tests import (
    SYSTEM_PROMPT,
    fill,
    judge_description,
    load_template,
)
from interp_harness.function_store.datasets import data_path
from interp_harness.function_store.models import UnitTest

PAIRS = [(f"ab{k}", f"AB{k}") for k in range(10)]


def test_builtin_templates_equal_original_files():
    for prompt in (STRINGS, ENTITIES_PROMPT, RELATIONS_PROMPT):
        original = data_path(f"find/prompts/evaluator/{prompt.find_file}.txt").read_text()
        assert prompt.builtin == original
        assert load_template(prompt)[1] != "builtin"


def test_fill_is_plain_replace_in_order():
    t = UnitTest(inputs=["a", "b", "c"], outputs=["A", "B", "C"], correct=2)
    text = fill(STRINGS.builtin, "maps IN0 to upper", t)
    assert "maps a to upper" in text  # no escaping: DESC is replaced first, then IN0
    assert "Example 2: input = b, output = B" in text


def _oracle_app(log: list[dict], mode: str = "oracle") -> FastAPI:
    """An OpenAI-compatible judge that finds the example whose output is the upper-cased input."""
    app = FastAPI()
    state = {"n": 0}

    @app.post("/v1/chat/completions")
    async def chat(req: Request):
        body = await req.json()
        log.append(body)
        state["n"] += 1
        if mode == "500":
            return PlainTextResponse("overloaded", status_code=500)
        if mode == "flaky" and state["n"] == 1:
            return PlainTextResponse("try again", status_code=503)
        if mode == "malformed":
            return PlainTextResponse("{not json", status_code=200)
        if mode == "nochoices":
            return JSONResponse({"choices": []})
        if mode == "nullcontent":
            return JSONResponse({"choices": [{"message": {"role": "assistant", "content": None}}]})
        if mode == "wrongshape":
            return JSONResponse({"result": {"text": "[ANSWER]: 1"}})
        if mode == "slow":
            await asyncio.sleep(3)
        user = body["messages"][1]["content"]
        pairs = re.findall(r"Example (\d): input = (\S+), output = (\S+)", user)
        k = next((i for i, a, b in pairs if a.upper() == b), "9")
        content = f"Example 3 looks odd. [ANSWER]: {k}" if mode == "oracle" else f"I think {k}"
        return JSONResponse(
            {
                "model": "test-judge-1",
                "choices": [{"message": {"role": "assistant", "content": content}}],
            }
        )

    return app


async def test_openai_compatible_judge_scores_and_records(serve):
    log: list[dict] = []
    srv = serve(_oracle_app(log))
    judge = OpenAICompatibleJudge(srv.url + "/v1", "vicuna-13b-v1.1")
    t = string_target(PAIRS)
    res = await judge_description(judge, STRINGS, "upper-cases", t.unit_tests)
    await judge.aclose()
    by = {r.metric: r for r in res}
    # triplet correct indices cycle 1,2,3; the reply always mentions "3": find-compat counts those too
    assert by["unit_test_strict"].value == 1.0
    assert by["unit_test"].value == 1.0
    d = by["unit_test"].details
    assert d["judge_model"] == "test-judge-1" and len(d["prompt_hash"]) == 16
    assert len(d["verdicts"]) == 10 and "[ANSWER]" in d["verdicts"][0]["reply"]
    assert log[0]["temperature"] == 0 and log[0]["messages"][0]["content"] == SYSTEM_PROMPT


async def test_find_compat_vs_strict_parsing(serve):
    srv = serve(_oracle_app([], mode="loose"))
    judge = OpenAICompatibleJudge(srv.url + "/v1", "m")
    res = await judge_description(judge, STRINGS, "d", string_target(PAIRS).unit_tests)
    await judge.aclose()
    by = {r.metric: r for r in res}
    assert by["unit_test"].value == 1.0  # the index appears in "I think k"
    assert by["unit_test_strict"].value == 0.0  # no "[ANSWER]: k"


@pytest.mark.parametrize(
    "mode", ["500", "malformed", "nochoices", "nullcontent", "wrongshape", "slow"]
)
async def test_misbehaving_judge_is_an_error_state(serve, mode):
    log: list[dict] = []
    srv = serve(_oracle_app(log, mode=mode))
    judge = OpenAICompatibleJudge(srv.url + "/v1", "m", timeout_s=1.0, max_retries=1)
    res = await judge_description(judge, STRINGS, "d", string_target(PAIRS[:2]).unit_tests)
    await judge.aclose()
    for r in res:
        assert r.status == "error" and r.error_category == "judge" and r.value is None
        assert "after 2 attempts" in r.error, r.error
    assert len(log) == 4  # two triplets, each tried twice


async def test_retry_then_success(serve):
    srv = serve(_oracle_app([], mode="flaky"))
    judge = OpenAICompatibleJudge(srv.url + "/v1", "m", max_retries=2)
    res = await judge_description(judge, STRINGS, "d", string_target(PAIRS[:1]).unit_tests)
    await judge.aclose()
    assert res[0].status == "ok" and res[0].value == 1.0


async def test_openai_sdk_client_against_loopback(serve):
    srv = serve(_oracle_app([]))
    judge = OpenAIJudge("gpt-x", api_key="sk-test", url=srv.url + "/v1", max_retries=0)
    reply = await judge.complete(SYSTEM_PROMPT, "Example 1: input = ab, output = AB")
    await judge.aclose()
    assert reply.text.endswith("[ANSWER]: 1") and reply.model == "test-judge-1"


async def test_anthropic_client_against_loopback(serve):
    app = FastAPI()
    seen = {}

    @app.post("/v1/messages")
    async def messages(req: Request):
        body = await req.json()
        seen.update(body)
        return JSONResponse(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-test",
                "content": [{"type": "text", "text": "[ANSWER]: 2"}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
        )

    srv = serve(app)
    judge = AnthropicJudge("claude-test", api_key="k", url=srv.url, max_retries=0)
    reply = await judge.complete(SYSTEM_PROMPT, "q")
    await judge.aclose()
    assert (
        reply.text == "[ANSWER]: 2" and seen["temperature"] == 0 and seen["system"] == SYSTEM_PROMPT
    )


async def test_score_episode_strings_with_judge_and_ceiling(serve, monkeypatch):
    srv = serve(_oracle_app([]))
    t = string_target(PAIRS, description="upper-cases the input")
    js = JudgeSettings(provider="openai-compatible", url=srv.url + "/v1", model="m")
    msg = "[DESCRIPTION]: upper-cases\n[CODE]: ```python\ndef f(s):\n    return s.upper()\n```"
    res = await score_episode(
        t, msg, EpisodeStats(target_calls=3, inputs=12), local_ctx(t, judge_settings=js)
    )
    by = {r.metric: r for r in res}
    assert by["string_exact"].value == 1.0 and by["unit_test"].value == 1.0
    assert by["unit_test_ceiling"].value == 1.0 and by["unit_test"].details["inputs"] == 12


async def test_ceiling_on_the_first_k_unit_tests_only(serve):
    # HARNESS_JUDGE_CEILING_TESTS=3: the agent's description is judged on all 10 unit tests, the
    # ground truth's (the ceiling) on the first 3; the report pools the verdicts it finds
    srv = serve(_oracle_app([]))
    t = string_target(PAIRS, description="upper-cases the input")
    js = JudgeSettings(
        provider="openai-compatible", url=srv.url + "/v1", model="m-ceiling-k", ceiling_tests=3
    )
    msg = "[DESCRIPTION]: upper-cases\n[CODE]: ```python\ndef f(s):\n    return s.upper()\n```"
    res = await score_episode(t, msg, EpisodeStats(), local_ctx(t, judge_settings=js))
    by = {r.metric: r for r in res}
    assert len(by["unit_test"].details["verdicts"]) == 10
    ceiling = by["unit_test_ceiling"]
    assert ceiling.value == 1.0 and [v["triplet"] for v in ceiling.details["verdicts"]] == [0, 1, 2]


async def test_score_episode_without_judge_is_error_state():
    t = string_target(PAIRS, family="entities")
    res = await score_episode(
        t,
        "[DESCRIPTION]: x",
        EpisodeStats(),
        local_ctx(judge_settings=JudgeSettings(provider="none")),
    )
    assert {r.metric for r in res} == {"unit_test", "unit_test_strict"}
    assert all(r.status == "error" and r.error_category == "judge" for r in res)


# ---- empty and wrongly shaped 200 replies (issue 21): an error state, never a wrong verdict ---
def _claude(content: list) -> dict:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _chat(content) -> dict:
    message = {"role": "assistant", "content": content}
    return {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-x",
        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
    }


WRONG_SHAPE = {"result": {"text": "[ANSWER]: 1"}}
SDK_BAD = [
    ("openai", {**_chat("x"), "choices": []}, "no choices"),
    ("openai", _chat(None), "no text content"),
    ("openai", WRONG_SHAPE, "malformed judge reply"),
    ("anthropic", _claude([]), "no text content"),
    ("anthropic", _claude([{"type": "text", "text": None}]), "no text content"),
    ("anthropic", WRONG_SHAPE, "malformed judge reply"),
]


def _fixed_reply_app(body: dict, log: list) -> FastAPI:
    """A judge endpoint (both APIs) answering every request 200 with `body`."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    @app.post("/v1/messages")
    async def reply(req: Request):
        log.append(await req.json())
        return JSONResponse(body)

    return app


def _sdk_judge(kind: str, url: str, **kw):
    if kind == "openai":
        return OpenAIJudge("gpt-x", api_key="sk-test", url=url + "/v1", **kw)
    return AnthropicJudge("claude-test", api_key="k", url=url, **kw)


@pytest.mark.parametrize("kind,body,needle", SDK_BAD)
async def test_sdk_judge_empty_or_malformed_reply_is_a_judge_error(serve, kind, body, needle):
    log: list = []
    srv = serve(_fixed_reply_app(body, log))
    judge = _sdk_judge(kind, srv.url, max_retries=1)
    res = await judge_description(judge, STRINGS, "d", string_target(PAIRS[:1]).unit_tests)
    await judge.aclose()
    for r in res:
        assert r.status == "error" and r.error_category == "judge" and r.value is None
        assert needle in r.error and "after 2 attempts" in r.error, r.error
    assert len(log) == 2  # retried once


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_sdk_judge_real_empty_answer_is_a_verdict(serve, kind):
    """A valid reply whose text is "" is the judge's answer (no index in it), as in FIND."""
    body = _chat("") if kind == "openai" else _claude([{"type": "text", "text": ""}])
    srv = serve(_fixed_reply_app(body, []))
    judge = _sdk_judge(kind, srv.url, max_retries=0)
    reply = await judge.complete(SYSTEM_PROMPT, "q")
    await judge.aclose()
    assert reply.text == ""


@pytest.mark.parametrize("kind,body,needle", [SDK_BAD[0], SDK_BAD[3], SDK_BAD[5]])
def test_harness_run_with_a_misbehaving_judge_counts_no_score(serve, tmp_path, kind, body, needle):
    """`harness run` (in process) of the offline strings agent, judged by a misbehaving
    endpoint: the run's unit_test metrics have n=0 and count the error; nothing scores 0."""
    import json

    from typer.testing import CliRunner

    from interp_harness.harness.cli import app
    from interp_harness.harness.store import make_engine
    from interp_harness.harness.store.repo import Store

    srv = serve(_fixed_reply_app(body, []))
    url = f"sqlite:///{tmp_path / 'harness.db'}"
    env = {
        "DATABASE_URL": url,
        "HARNESS_SANDBOX": "inprocess",
        "HARNESS_PLUGINS": "",
        "HARNESS_JUDGE_PROVIDER": kind,
        "HARNESS_JUDGE_URL": srv.url + ("/v1" if kind == "openai" else ""),
        "HARNESS_JUDGE_API_KEY": "k",
        "HARNESS_JUDGE_MAX_RETRIES": "1",
        "HARNESS_JUDGE_CEILING": "false",
    }
    args = ["run", "-a", "scripted-strings", "-d", "find-gen", "-f", "strings", "--limit", "1"]
    result = CliRunner().invoke(app, [*args, "--json"], env=env)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    assert summary["progress"]["by_status"] == {"completed": 1}
    metrics = {m["metric"]: m for m in summary["metrics"]}
    for m in ("unit_test", "unit_test_strict"):
        assert (metrics[m]["n"], metrics[m]["n_errors"], metrics[m]["mean"]) == (0, 1, None)
    (ep,) = Store(make_engine(url)).episodes.of_run(summary["id"])
    scores = {s.metric: s for s in Store(make_engine(url)).scores.of_episodes([ep.id])}
    assert scores["unit_test"].error_category == "judge"
    assert needle in scores["unit_test"].error, scores["unit_test"].error
