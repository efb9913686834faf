"""A provider reply with nothing in it is an error, not a turn (issue 21).

The openai and anthropic agents against the loopback stand-in server answering 200 with no
choice / no content block, with null text, or with valid JSON of the wrong shape: each is retried,
then ends the episode of a real `harness run` as a categorised error that no metric counts. A
model's real empty answer stays a turn once; twice in a row it ends the episode."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from interp_harness.agents import AgentError, Message, get_agent
from interp_harness.harness.cli import app
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

FAST = {"backoff_base": 0.01, "backoff_max": 0.02}
CONV = [Message(role="system", content="S"), Message(role="user", content="go")]
ANSWER = (
    "[DESCRIPTION]: adds one\n[DOMAIN]: all reals\n"
    "[CODE]: ```python\ndef f(x):\n    return x + 1\n```"
)


def chat(content: Any, **message: Any) -> dict[str, Any]:
    """A Chat Completions body with one choice whose message content is `content`."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m1",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content, **message},
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }


def claude(content: list[Any]) -> dict[str, Any]:
    """A Messages API body with the given content blocks."""
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }


WRONG_SHAPE = {"result": {"text": "hello"}, "status": "ok"}  # valid JSON, not an API reply
OPENAI_BAD = {
    "no choices": ({**chat("x"), "choices": []}, "no choices"),
    "null content": (chat(None), "content is null"),
    "wrong shape": (WRONG_SHAPE, "not a chat completion"),
}
ANTHROPIC_BAD = {
    "no content": (claude([]), "no text content"),
    "null text": (claude([{"type": "text", "text": None}]), "not a Messages API reply"),
    "wrong shape": (WRONG_SHAPE, "not a Messages API reply"),
}


def _agent(kind: str, server, **kw):
    if kind == "openai":
        opts = {"base_url": server.url + "/v1", "api_key": "sk-test", "model": "m1"}
    else:
        opts = {"base_url": server.url, "api_key": "ak-test", "model": "claude-x"}
    return get_agent(kind, **{**opts, **FAST, **kw})


def harness_run(
    tmp_path, kind: str, server, *extra: str, exit_code: int = 0
) -> tuple[dict[str, Any], Store]:
    """`harness run --json` in this process (find-v1 numeric, one target, in-process targets).
    A run whose every episode ended in error is "failed" and exits 1."""
    url = f"sqlite:///{tmp_path / 'harness.db'}"
    base, model = (server.url + "/v1", "m1") if kind == "openai" else (server.url, "claude-x")
    args = ["run", "-a", kind, "-d", "find-v1", "-f", "numeric", "--limit", "1", "--no-floor"]
    args += ["--max-rounds", "6", "--json", "-o", f"base_url={base}", "-o", f"model={model}"]
    args += ["-o", "max_retries=1", "-o", "backoff_base=0.01", *extra]  # key: the ad-hoc profile's
    env = {"DATABASE_URL": url, "HARNESS_SANDBOX": "inprocess", "HARNESS_PLUGINS": ""}
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == exit_code, result.output
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    return summary, Store(make_engine(url))


@pytest.mark.parametrize(
    "kind,case",
    [("openai", c) for c in OPENAI_BAD] + [("anthropic", c) for c in ANTHROPIC_BAD],
)
def test_empty_or_malformed_reply_ends_the_run_episode_as_an_error(tmp_path, server, kind, case):
    body, needle = (OPENAI_BAD if kind == "openai" else ANTHROPIC_BAD)[case]
    server.script.default = ("reply", body)
    summary, store = harness_run(tmp_path, kind, server, exit_code=1)
    assert (summary["status"], summary["error"]) == ("failed", "every episode ended in error")
    assert summary["progress"]["by_status"] == {"error": 1}
    assert summary["errors_by_category"] == {"agent": 1}
    assert all(m["n"] == 0 for m in summary["metrics"])  # no score, in particular no 0
    assert summary["usage"]["rounds"] == 0
    (ep,) = store.episodes.of_run(summary["id"])
    assert (ep.status, ep.end_reason, ep.error_category) == ("error", "agent_error", "agent")
    assert needle in ep.error and "giving up after 2 attempts" in ep.error, ep.error
    assert len(server.script.requests) == 2  # retried once, as asked


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_one_real_empty_answer_is_a_turn(tmp_path, server, kind):
    if kind == "openai":
        server.script.actions += [("reply", chat("")), ("reply", chat(ANSWER))]
    else:
        server.script.actions += [
            ("reply", claude([{"type": "text", "text": ""}])),
            ("reply", claude([{"type": "text", "text": ANSWER}])),
        ]
    summary, store = harness_run(tmp_path, kind, server)
    assert summary["progress"]["by_status"] == {"completed": 1}
    assert summary["errors_by_category"] == {}
    (ep,) = store.episodes.of_run(summary["id"])
    msgs = store.episodes.messages(ep.id)
    assert [m.content for m in msgs if m.role == "assistant"] == ["", ANSWER]
    assert len(server.script.requests) == 2


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_two_real_empty_answers_in_a_row_end_the_episode(tmp_path, server, kind):
    empty = chat("") if kind == "openai" else claude([{"type": "text", "text": ""}])
    server.script.default = ("reply", empty)
    summary, store = harness_run(tmp_path, kind, server, exit_code=1)
    assert (summary["status"], summary["error"]) == ("failed", "every episode ended in error")
    assert summary["progress"]["by_status"] == {"error": 1}
    assert summary["errors_by_category"] == {"agent": 1}
    assert all(m["n"] == 0 for m in summary["metrics"])
    (ep,) = store.episodes.of_run(summary["id"])
    assert "empty message twice in a row" in ep.error, ep.error
    assert [m.content for m in store.episodes.messages(ep.id) if m.role == "assistant"] == [""]
    assert len(server.script.requests) == 2  # an empty answer is not retried


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_empty_answer_after_a_restart_still_counts_as_in_a_row(server, kind):
    """find-compat restarts the conversation after a message without a command, so the first
    empty answer is no longer in it: the agent remembers its own last answer."""
    empty = chat("") if kind == "openai" else claude([{"type": "text", "text": ""}])
    server.script.default = ("reply", empty)
    agent = _agent(kind, server)
    assert (await agent.step(CONV)).content == ""
    with pytest.raises(AgentError, match="twice in a row") as err:
        await agent.step(CONV)  # the same [system, prompt] again
    await agent.aclose()
    assert err.value.category == "agent"


async def test_openai_null_content_with_a_tool_call_is_still_an_error(server):
    """The text protocol has no use for tool calls: the reply names them in the error."""
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    server.script.default = ("reply", chat(None, tool_calls=[call]))
    agent = _agent("openai", server, max_retries=0)
    with pytest.raises(AgentError, match="content is null.*1 tool call") as err:
        await agent.step(CONV)
    await agent.aclose()
    assert err.value.category == "agent"


async def test_malformed_reply_then_a_good_one_is_retried_to_success(server):
    server.script.actions += [("reply", WRONG_SHAPE), ("reply", chat(None))]
    agent = _agent("openai", server, max_retries=2)
    reply = await agent.step(CONV)
    await agent.aclose()
    assert reply.content == "echo: go"
    assert len(server.script.requests) == 3


async def test_non_json_200_body_is_a_malformed_reply(server):
    server.script.default = ("text", "<html>maintenance</html>")
    agent = _agent("anthropic", server, max_retries=0)
    with pytest.raises(AgentError, match="not JSON") as err:
        await agent.step(CONV)
    await agent.aclose()
    assert err.value.category == "agent"
