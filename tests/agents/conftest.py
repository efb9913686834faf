"""Fixtures for the agents tests: real HTTP servers on loopback standing in for the paid APIs
(OpenAI Chat Completions and Anthropic Messages), and a small FIND episode loop."""

from __future__ import annotations

import asyncio
import re
import shlex
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from interp_harness.agents.base import Agent, Message
from interp_harness.function_store.formatting import find_line


@dataclass
class Script:
    """What the stand-in server does next: a queue of actions, then `default`."""

    actions: list[tuple[str, Any]] = field(default_factory=list)
    default: tuple[str, Any] = ("ok", None)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def next(self) -> tuple[str, Any]:
        return self.actions.pop(0) if self.actions else self.default

    def reset(self) -> None:
        self.actions.clear()
        self.requests.clear()
        self.default = ("ok", None)


def make_app(script: Script) -> FastAPI:
    app = FastAPI()

    async def take(request: Request, path: str) -> tuple[dict[str, Any], Response | None]:
        """Record the request and play the script's next action: the request body, and the
        response to send instead of a normal answer, if any ("status": an HTTP error; "reply": a
        200 whose JSON body is given, e.g. a misbehaving server's empty or wrongly shaped one;
        "text": a 200 HTML page)."""
        body = await request.json()
        script.requests.append({"path": path, "headers": dict(request.headers), "body": body})
        action, arg = script.next()
        if action == "sleep":
            await asyncio.sleep(arg)
        elif action == "status":
            status, error = arg
            return body, JSONResponse(error, status_code=status)
        elif action == "reply":
            return body, JSONResponse(arg, status_code=200)
        elif action == "text":
            return body, HTMLResponse(arg, status_code=200)
        return body, None

    @app.get("/v1/models")  # OpenAI and Anthropic both list models here (the run pre-flight)
    async def models() -> Any:
        return {"object": "list", "data": [{"id": m} for m in ("m1", "claude-x")]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        body, error = await take(request, "chat")
        if error is not None:
            return error
        last = body["messages"][-1]["content"]
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"] + "-served",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": f"echo: {last}"},
                }
            ],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        }

    @app.post("/v1/messages")
    async def messages(request: Request) -> Any:
        body, error = await take(request, "messages")
        if error is not None:
            return error
        last = body["messages"][-1]["content"]
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [
                {"type": "text", "text": "part one, "},
                {"type": "text", "text": f"echo: {last}"},
            ],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 23, "output_tokens": 5},
        }

    return app


@dataclass
class LiveServer:
    url: str
    script: Script


@pytest.fixture(scope="session")
def provider_server() -> Iterator[LiveServer]:
    """A real uvicorn server on 127.0.0.1 speaking both APIs, shared by the provider tests."""
    script = Script()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(make_app(script), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not server.started:
        if time.time() > deadline:
            raise RuntimeError("stand-in server did not start")
        time.sleep(0.02)
    yield LiveServer(url=f"http://127.0.0.1:{port}", script=script)
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def server(provider_server: LiveServer) -> LiveServer:
    provider_server.script.reset()
    return provider_server


# ------------------------------------------------------------------ a FIND episode, in-process

SYSTEM = "You now have access to some commands to help complete the user's request."
_COMMAND = re.compile(r"PYTHON\(([^\n]*)\)")


async def run_episode(
    agent: Agent, client: Any, target_id: str, prompt: str, max_rounds: int = 21
) -> tuple[str, list[Message], list[list[str]]]:
    """A bare version of FIND's loop, written here independently of the agents' own parser: returns
    the final message, the conversation and the inputs of every call."""
    conv = [Message(role="system", content=SYSTEM), Message(role="user", content=prompt)]
    calls: list[list[str]] = []
    for _ in range(max_rounds):
        reply = (await agent.step(conv)).content
        conv.append(Message(role="assistant", content=reply))
        if "[DESCRIPTION]" in reply:
            return reply, conv, calls
        found = _COMMAND.search(reply)
        assert found, f"agent sent neither a command nor an answer: {reply!r}"
        words = shlex.split(found.group(1))
        assert words[0] == "./temp/function.py"
        inputs = words[1:]
        calls.append(inputs)
        outputs = await client.call(target_id, inputs)
        conv.append(Message(role="user", content="Response: " + find_line(outputs) + "\n"))
    raise AssertionError("no [DESCRIPTION] within the round cap")


def find_prompt(family: str) -> str:
    from interp_harness.function_store.datasets import data_path

    template = data_path(f"find/prompts/interpreter/{family}.txt").read_text()
    return template.replace("{DIR2FUNC}", "./temp/function.py")


def final_parts(message: str) -> tuple[str, str, str]:
    """description, domain, code as FIND's parser reads them, reimplemented here."""
    description = (
        message.rsplit("[DESCRIPTION]: ")[-1].rsplit("[DOMAIN]: ")[0].rsplit("[CODE]: ")[0]
    )
    domain = message.rsplit("[DOMAIN]: ")[-1].rsplit("[CODE]: ")[0]
    c = message.rsplit("[CODE]:")[-1]
    code = c.rsplit("```python")[-1].split("```")[0] if "```python" in c else ""
    return description, domain, code


def run_code(code: str, calls: str) -> str:
    """Run agent-written code in a separate python3 process (never in the test process)."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", code + "\n" + calls], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout
