"""Real HTTP servers on loopback standing in for the paid APIs (OpenAI Chat Completions and
Anthropic Messages): the fixtures `provider_server` (one per session) and `server` (its script
reset), for the agents' and the agent hosts' tests."""

from __future__ import annotations

import asyncio
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
