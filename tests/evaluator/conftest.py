"""Fixtures: a real HTTP judge server on loopback (uvicorn in a thread) and a FIND-like runner."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest
import uvicorn
from fastapi import FastAPI
from support import free_port


class LoopbackServer:
    def __init__(self, app: FastAPI) -> None:
        self.port = free_port()
        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="error")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LoopbackServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("loopback server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(5)


@pytest.fixture
def serve() -> Iterator[Callable[[FastAPI], LoopbackServer]]:
    servers: list[LoopbackServer] = []

    def start(app: FastAPI) -> LoopbackServer:
        s = LoopbackServer(app).__enter__()
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.__exit__(None, None, None)
