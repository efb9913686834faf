"""The forced-choice judge against the project's own server (real SmolLM2 on loopback)."""

from __future__ import annotations

import httpx
import pytest

from interp_harness.evaluator.api import EpisodeStats
from interp_harness.evaluator.judge import JudgeSettings, OpenAICompatibleJudge
from interp_harness.evaluator.scorer import ScoringContext
from interp_harness.evaluator.scoring import score_episode
from interp_harness.evaluator.strings.scorer import PROMPT as STRINGS
from interp_harness.evaluator.unit_tests import (
    OPTIONS,
    PREFILL,
    SYSTEM_PROMPT,
    Job,
    fill,
    judge_jobs,
    load_template,
)
from interp_harness.function_store.catalog import Catalog

pytestmark = pytest.mark.slow


def _targets(n: int):
    return Catalog().list(dataset="find-gen", family="strings")[:n]


def _model(url: str) -> str:
    return httpx.get(url + "/v1/models", timeout=10).json()["data"][0]["id"]


class _Counting(httpx.AsyncHTTPTransport):
    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[str, str, bytes]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append((request.method, request.url.path, request.content))
        return await super().handle_async_request(request)


async def test_auto_mode_detects_our_server_and_batches_description_with_ceiling(backbone_url):
    t = _targets(1)[0]
    transport = _Counting()
    judge = OpenAICompatibleJudge(
        backbone_url + "/v1", _model(backbone_url), transport=transport, timeout_s=600
    )
    try:
        assert await judge.mode() == "forced-choice"
        jobs = [Job("reverses the string", t.unit_tests), Job(t.hidden.description, t.unit_tests)]
        agent, ceiling = await judge_jobs(judge, STRINGS, jobs)
    finally:
        await judge.aclose()
    posts = [(m, p) for m, p, _ in transport.requests if m == "POST"]
    assert posts == [("POST", "/v1/batch/chat/completions")]  # 20 unit tests, one request
    body = httpx.Response(200, content=transport.requests[-1][2]).json()
    assert len(body["messages_list"]) == 20 and body["max_tokens"] == 1
    assert body["forced_choice"] == ["1", "2", "3"]
    assert body["messages_list"][0][-1] == {"role": "assistant", "content": "[ANSWER]: "}
    for res in (agent, ceiling):
        d = res[0].details
        assert d["judge_mode"] == "forced-choice" and len(d["verdicts"]) == 10
        for v in d["verdicts"]:
            assert v["error"] is None and set(v["logprobs"]) == {"1", "2", "3"}
            # the verdict is the argmax of the logprobs the server reported
            assert v["strict_answer"] == int(max(v["logprobs"], key=v["logprobs"].get))
            assert v["reply"] == f"[ANSWER]: {v['strict_answer']}"
        assert res[0].value == res[1].value == sum(v["strict"] for v in d["verdicts"]) / 10


async def test_forced_choice_verdicts_match_the_servers_own_logprobs(backbone_url):
    """Independently of the judge client: the plain endpoint's logprobs for each prompt, asked
    one at a time, pick the same index as the batched verdict (and agree in value)."""
    targets = _targets(2)
    template, _ = load_template(STRINGS)
    judge = OpenAICompatibleJudge(
        backbone_url + "/v1", _model(backbone_url), mode="forced-choice", timeout_s=600
    )
    try:
        prompts = [
            fill(template, t.hidden.description, u) for t in targets for u in t.unit_tests[:3]
        ]
        replies = await judge.choose(SYSTEM_PROMPT, prompts, OPTIONS, PREFILL)
    finally:
        await judge.aclose()
    async with httpx.AsyncClient(timeout=600) as c:
        for p, r in zip(prompts, replies, strict=True):
            body = {
                "model": _model(backbone_url),
                "messages": [
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": p},
                    {"role": "assistant", "content": PREFILL},
                ],
                "max_tokens": 1,
                "forced_choice": OPTIONS,
            }
            data = (await c.post(backbone_url + "/v1/chat/completions", json=body)).json()
            tok = data["choices"][0]["logprobs"]["content"][0]
            lps = [x["logprob"] for x in tok["top_logprobs"]]
            assert [x["token"] for x in tok["top_logprobs"]] == OPTIONS
            assert r.choice == max(range(3), key=lambda i: lps[i])
            assert tok["token"] == OPTIONS[r.choice] == data["choices"][0]["message"]["content"]
            assert r.logprobs == pytest.approx(lps, abs=1e-3)


async def test_score_episode_with_our_server_as_judge(backbone_url):
    t = _targets(1)[0]
    js = JudgeSettings(url=backbone_url + "/v1", model=_model(backbone_url), timeout_s=600)
    scores = await score_episode(
        t, "[DESCRIPTION]: reverses the string", EpisodeStats(), ScoringContext(judge_settings=js)
    )
    by = {s.metric: s for s in scores}
    for m in ("unit_test", "unit_test_strict", "unit_test_ceiling", "unit_test_ceiling_strict"):
        assert by[m].status == "ok" and 0.0 <= by[m].value <= 1.0, by[m]
        assert by[m].details["judge_mode"] == "forced-choice"
    assert by["unit_test"].details["judge_wall_s"] > 0
