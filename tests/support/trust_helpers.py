"""The real server (`harness serve` as a subprocess) and a loopback HTTP listener that records
every request it gets (an OpenAI-compatible stand-in, or an attacker's endpoint)."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from support import (
    ROOT,
    LoopbackHTTP,
    QuietHandler,
    chat_completion,
)
from support.orch_helpers import Server


class HarnessServer(Server):
    """`harness serve` with a private home (its SQLite store, cwd and server.log) and TMPDIR, in
    the sandbox `inprocess` without score hook unless `env` says otherwise; never another
    process's store."""

    def __init__(
        self, home: Path, env: dict[str, str] | None = None, tmpdir: Path | None = None
    ) -> None:
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        # short: sandboxed services listen on Unix sockets under it (107-byte paths)
        self.tmpdir = tmpdir or Path(tempfile.mkdtemp(prefix="trust-", dir="/tmp"))
        full = {
            **os.environ,
            "HARNESS_HOME": str(home),
            "HARNESS_SANDBOX": "inprocess",
            "HARNESS_SCORE_HOOK": "none",
            "HARNESS_POLL_INTERVAL_S": "0.1",
            "TMPDIR": str(self.tmpdir),
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            **(env or {}),
        }
        full.pop("DATABASE_URL", None)
        full.pop("HARNESS_DATABASE_URL", None)
        super().__init__(full, home / "server.log", cli=True, cwd=home)

    def post_run(self, body: dict[str, Any]) -> httpx.Response:
        return httpx.post(self.url + "/runs", json=body, timeout=60)

    def one_episode_run(self, spec: dict[str, Any], auth: dict[str, str]) -> dict[str, Any]:
        """POST a run of one target, wait until it completes; its episode as a token holder
        reads it (GET /episodes/{id})."""
        with httpx.Client(base_url=self.url, timeout=60) as api:
            r = api.post("/runs", json=spec, headers=auth)
            assert r.status_code == 201, r.text
            deadline = time.monotonic() + 300
            while api.get(f"/runs/{r.json()['id']}").json()["status"] != "completed":
                assert time.monotonic() < deadline, self.log()[-3000:]
                time.sleep(0.3)
            (ep,) = api.get(f"/runs/{r.json()['id']}/episodes").json()
            return api.get(f"/episodes/{ep['id']}", headers=auth).json()


class Listener(LoopbackHTTP):
    """A loopback HTTP server recording (method, path, headers, body) of every request. It answers
    like an OpenAI-compatible chat endpoint with `reply` as the assistant message, and lists
    `models` at GET .../models (what the run pre-flight asks)."""

    def __init__(self, reply: str = "Hello.", models: tuple[str, ...] = ("x", "stand-in")) -> None:
        self.requests: list[dict[str, Any]] = []
        self.reply = reply
        self.models = models
        outer = self

        class Handler(QuietHandler):
            def _record(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(n).decode("utf-8", "replace") if n else ""
                outer.requests.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": body,
                    }
                )

            def do_GET(self) -> None:  # noqa: N802
                if not self.path.rstrip("/").endswith("/models"):
                    return self.do_POST()
                self._record()
                models = [{"id": m, "object": "model"} for m in outer.models]
                self.send_json(200, {"object": "list", "data": models})

            def do_POST(self) -> None:  # noqa: N802
                self._record()
                self.send_json(200, chat_completion(outer.reply))

            do_PUT = do_DELETE = do_POST  # noqa: N815

        self.serve(Handler)
