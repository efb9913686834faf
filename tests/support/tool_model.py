"""A loopback stand-in for a tool-calling model, speaking the OpenAI Chat Completions and the
Anthropic Messages wire formats (POST /v1/chat/completions, POST /v1/messages; GET /v1/models for
the run pre-flight). It plays one FIND session from the conversation it is sent, written here
independently of the agents and of the harness:

- turn 1: four parallel calls: `call_function` on ["1", "2"] and on ["3"], a call to an unknown
  tool (`call_functon`), and a `call_function` with bad arguments (OpenAI: arguments that are no
  JSON; Anthropic: `inputs` not an array);
- turn 2: if both of those came back as errors (OpenAI: a tool message starting "Error:";
  Anthropic: a tool_result with is_error), the corrected calls on ["4"] and ["5"]; else text;
- turn 3 on: `submit_answer` with every required argument of the tool it was offered.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from interp_harness.function_store.catalog import Catalog
from interp_harness.harness.store.repo import Store
from support import LoopbackHTTP, QuietHandler

GOOD = [("call_function", {"inputs": ["1", "2"]}), ("call_function", {"inputs": ["3"]})]
UNKNOWN = ("call_functon", {"inputs": ["4"]})
CORRECTED = [("call_function", {"inputs": ["4"]}), ("call_function", {"inputs": ["5"]})]
ANSWER = "f(x) is roughly linear"
TARGET = "find-v1/numeric/f00150"  # the target the runs of these tests explore


class ToolModel(LoopbackHTTP):
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []  # {"path", "headers", "body"}
        self.lock = threading.Lock()
        outer = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                self.send_json(200, {"object": "list", "data": [{"id": "m1"}, {"id": "claude-x"}]})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                with outer.lock:
                    outer.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "body": body}
                    )
                if self.path.endswith("/chat/completions"):
                    self.send_json(200, openai_turn(body))
                elif self.path.endswith("/messages"):
                    self.send_json(200, anthropic_turn(body))
                else:
                    self.send_json(404, {"error": {"message": f"no route {self.path}"}})

        self.serve(Handler)

    def bodies(self) -> list[dict[str, Any]]:
        with self.lock:
            return [r["body"] for r in self.requests]


def _answer_arguments(required: list[str]) -> dict[str, str]:
    return {name: ANSWER if name == "description" else "all real numbers" for name in required}


def _submit_required(tools: list[dict[str, Any]], schema_of: Any) -> list[str]:
    (submit,) = [t for t in tools if schema_of(t)[0] == "submit_answer"]
    return list(schema_of(submit)[1].get("required", []))


# ---- OpenAI -----------------------------------------------------------------------------------


def openai_turn(body: dict[str, Any]) -> dict[str, Any]:
    messages = body["messages"]
    k = sum(m["role"] == "assistant" for m in messages)
    calls: list[tuple[str, str]] = []  # (name, arguments as JSON text)
    content: str | None = None
    if k == 0:
        calls = [(n, json.dumps(a)) for n, a in GOOD]
        calls += [(UNKNOWN[0], json.dumps(UNKNOWN[1])), ("call_function", '{"inputs": [5')]
    elif k == 1:
        results = [m for m in messages if m["role"] == "tool"]
        if [r["content"].startswith("Error:") for r in results] == [False, False, True, True]:
            calls = [(n, json.dumps(a)) for n, a in CORRECTED]
        else:
            content = "the tool errors did not come back as expected"
    else:

        def schema_of(t: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            return t["function"]["name"], t["function"]["parameters"]

        args = _answer_arguments(_submit_required(body["tools"], schema_of))
        calls = [("submit_answer", json.dumps(args))]
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{k}_{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(calls)
        ]
    return {
        "id": f"chatcmpl-{k}",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


# ---- Anthropic --------------------------------------------------------------------------------


def anthropic_turn(body: dict[str, Any]) -> dict[str, Any]:
    messages = body["messages"]
    k = sum(m["role"] == "assistant" for m in messages)
    blocks: list[dict[str, Any]] = []
    calls: list[tuple[str, Any]] = []
    if k == 0:
        blocks.append({"type": "text", "text": "Four experiments at once."})
        calls = [*GOOD, UNKNOWN, ("call_function", {"inputs": 5})]
    elif k == 1:
        last = messages[-1]["content"]
        flags = [b.get("is_error") for b in last if b.get("type") == "tool_result"]
        if flags == [False, False, True, True]:
            calls = list(CORRECTED)
        else:
            blocks.append({"type": "text", "text": f"unexpected results {flags}"})
    else:

        def schema_of(t: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            return t["name"], t["input_schema"]

        calls = [("submit_answer", _answer_arguments(_submit_required(body["tools"], schema_of)))]
    blocks += [
        {"type": "tool_use", "id": f"toolu_{k}_{i}", "name": n, "input": a}
        for i, (n, a) in enumerate(calls)
    ]
    return {
        "id": f"msg_{k}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": blocks,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


# ---- what a run against this model must have stored -------------------------------------------


def forbidden(target_id: str) -> list[str]:
    """What of the target's hidden truth must never reach the agent: its canary, its ground-truth
    description and the return expression of its code."""
    hidden = Catalog().get(target_id).hidden
    code = [line.strip() for line in (hidden.code or "").splitlines() if "return" in line]
    out = [hidden.canary, hidden.description, *code]
    assert hidden.canary.startswith("CANARY-") and len(out) == 3 and all(out)
    return out


def audit(store: Store, ep: Any, model: ToolModel) -> None:
    """No ground truth in the stored messages, tool calls (arguments, results, errors), nor in
    the request bodies the model got."""
    texts = [json.dumps(b) for b in model.bodies()]
    for m in store.episodes.messages(ep.id):
        texts += [m.content, json.dumps(m.tool_calls)]
    for c in store.episodes.tool_calls(ep.id):
        texts += [json.dumps(c.arguments), c.result, c.error or ""]
    bad = forbidden(TARGET)
    assert len(texts) > 20
    for text in texts:
        for f in bad:
            assert f not in text, f"ground truth {f[:40]!r} reached the agent"


def check_session(store: Store, ep: Any) -> None:
    assert (ep.status, ep.end_reason) == ("completed", "submit_answer"), ep.error
    msgs = store.episodes.messages(ep.id)
    roles = [m.role for m in msgs]
    assert roles == ["system", "user", "assistant", *["tool"] * 4, "assistant", "tool", "tool"] + [
        "assistant"
    ]
    first = msgs[2]
    assert [c["name"] for c in first.tool_calls] == ["call_function"] * 2 + [
        "call_functon",
        "call_function",
    ]
    # each result answers its call; the good ones are the text protocol's reply for them
    results = msgs[3:7]
    assert [r.tool_call_id for r in results] == [c["id"] for c in first.tool_calls]
    assert results[0].content.startswith("Response: Function input - output pairs: (1, ")
    assert "(2, " in results[0].content and results[1].content.startswith(
        "Response: Function input - output pairs: (3, "
    )
    assert [r.is_error for r in results] == [False, False, True, True]
    assert "unknown tool 'call_functon'" in results[2].content
    assert "call_function" in results[3].content  # what the arguments broke, for the model
    # the correction ran
    assert [c["arguments"] for c in msgs[7].tool_calls] == [{"inputs": ["4"]}, {"inputs": ["5"]}]
    assert [r.is_error for r in msgs[8:10]] == [False, False]
    calls = store.episodes.target_calls(ep.id)
    assert [c.inputs for c in calls] == [["1", "2"], ["3"], ["4"], ["5"]]
    rows = store.episodes.tool_calls(ep.id)
    assert [(r.step, r.idx, r.name, r.error is not None) for r in rows] == [
        (2, 0, "call_function", False),
        (2, 1, "call_function", False),
        (2, 2, "call_functon", True),
        (2, 3, "call_function", True),
        (7, 0, "call_function", False),
        (7, 1, "call_function", False),
        (10, 0, "submit_answer", False),
    ]
    assert ANSWER in (store.episodes.get(ep.id).final_answer or "")
