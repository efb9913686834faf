"""Fixtures: the real server (`harness serve` subprocess, SQLite) and loopback listeners."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.trust_helpers import HarnessServer, Listener


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., HarnessServer]]:
    servers: list[HarnessServer] = []

    def start(
        env: dict[str, str] | None = None, after: HarnessServer | None = None
    ) -> HarnessServer:
        """A server; `after`: a restart of that one (same home, database and TMPDIR)."""
        if after is not None:
            s = HarnessServer(after.home, env, tmpdir=after.tmpdir)
        else:
            s = HarnessServer(tmp_path / f"home{len(servers)}", env)
        servers.append(s)
        return s.start()

    yield start
    for s in servers:
        s.stop()
    for s in servers:
        shutil.rmtree(s.tmpdir, ignore_errors=True)


@pytest.fixture
def listener() -> Iterator[Callable[..., Listener]]:
    made: list[Listener] = []

    def make(reply: str = "Hello.") -> Listener:
        made.append(Listener(reply))
        return made[-1]

    yield make
    for x in made:
        x.close()
