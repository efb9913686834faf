"""The real server (`harness serve` as a subprocess) and a loopback HTTP listener that records
every request it gets (an OpenAI-compatible stand-in, or an attacker's endpoint)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HarnessServer:
    """`python -m harness.cli serve` on a loopback port, with a private home and TMPDIR."""

    def __init__(
        self, home: Path, env: dict[str, str] | None = None, tmpdir: Path | None = None
    ) -> None:
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        # short: sandboxed services listen on Unix sockets under it (107-byte paths)
        self.tmpdir = tmpdir or Path(tempfile.mkdtemp(prefix="trust-", dir="/tmp"))
        self.log_path = home / "server.log"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "HARNESS_HOME": str(home),
            "HARNESS_SANDBOX": "inprocess",
            "HARNESS_SCORE_HOOK": "none",
            "HARNESS_POLL_INTERVAL_S": "0.1",
            "TMPDIR": str(self.tmpdir),
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            **(env or {}),
        }
        self.env.pop("DATABASE_URL", None)
        self.env.pop("HARNESS_DATABASE_URL", None)
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60) -> HarnessServer:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        log = open(self.log_path, "ab")  # noqa: SIM115 - closed with the process
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness.cli", "serve", "--port", str(self.port)]
            + ["--log-level", "warning"],
            env=self.env,
            cwd=str(self.home),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log()[-3000:]}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"server did not start: {self.log()[-3000:]}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def post_run(self, body: dict[str, Any]) -> httpx.Response:
        return httpx.post(self.url + "/runs", json=body, timeout=60)

    def kill9(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Listener:
    """A loopback HTTP server recording (method, path, headers, body) of every request. It answers
    like an OpenAI-compatible chat endpoint with `reply` as the assistant message, and lists
    `models` at GET .../models (what the run pre-flight asks)."""

    def __init__(self, reply: str = "Hello.", models: tuple[str, ...] = ("x", "stand-in")) -> None:
        self.requests: list[dict[str, Any]] = []
        self.reply = reply
        self.models = models
        outer = self

        class Handler(BaseHTTPRequestHandler):
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
                data = json.dumps({"object": "list", "data": models}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802
                self._record()
                data = json.dumps(
                    {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "stand-in",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": outer.reply},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_PUT = do_DELETE = do_POST  # noqa: N815

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def wait_for(predicate, timeout: float = 60, interval: float = 0.1):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not met in time")
