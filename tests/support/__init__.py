"""The test suite's helpers, one package (`support`, importable because pytest's `pythonpath`
holds tests/): here a free loopback port, a loopback HTTP server, waiting for a server subprocess
and stopping it, and the rule for a tool scripts/install.sh installs but a test cannot find; in
its modules the servers tests start, stand-ins, store and CLI helpers, the adversarial battery and
the architecture checks. Code the harness itself loads by name in other processes (agents,
plugins, Inspect scripts) is in tests/hosted/ (`HOSTED`), also on `pythonpath`."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
import uvicorn

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent  # the checkout
HOSTED = TESTS / "hosted"  # give it to a subprocess's PYTHONPATH that loads a test agent or plugin

# `harness` as a fresh interpreter of this environment runs it (the console script's module)
HARNESS_CLI = (sys.executable, "-m", "interp_harness.harness.cli")


def foreign_checkout() -> str | None:
    """Why this checkout's tests would not test this checkout's code (None: they would): the
    `interp_harness` an import finds is not src/interp_harness of this checkout (found, not
    imported, so that the answer costs nothing and runs no other checkout's code)."""
    import importlib.util

    spec = importlib.util.find_spec("interp_harness")
    found = Path(spec.origin).resolve().parent if spec and spec.origin else None
    if found == ROOT / "src" / "interp_harness":
        return None
    return (
        f"interp_harness is imported from {found or 'nowhere'}, not from this checkout's "
        f"{ROOT / 'src' / 'interp_harness'}: run `pip install -e .` in {ROOT} (another checkout "
        "is installed in this environment, or none is)"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(
    proc: subprocess.Popen[bytes], url: str, log: Callable[[], str], timeout: float, poll: float
) -> None:
    """Wait until `url` answers 200; RuntimeError (with the log's tail) when the process exits
    first or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {log()[-3000:]}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(poll)
    proc.kill()
    raise RuntimeError(f"server did not start in {timeout}s: {log()[-3000:]}")


def wait_for(predicate, timeout: float = 60, interval: float = 0.1):  # type: ignore[no-untyped-def]
    """`predicate()`'s first truthy value, polled every `interval` seconds; AssertionError after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not met in time")


def start_model_server(
    argv: Sequence[str], log: Path, threads: str = "1", timeout: float = 600
) -> tuple[subprocess.Popen[bytes], str]:
    """A model server subprocess (`argv --port P`, P a free loopback port), once its /health
    answers: (process, URL). Its output goes to `log`; `timeout` allows a cold cache's GGUF
    conversion on a busy CPU."""
    port = free_port()
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", threads)}
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            [*argv, "--port", str(port)], env=env, stdout=fh, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    wait_until_up(proc, url + "/health", log.read_text, timeout, poll=0.5)
    return proc, url


def docker_engine_or_skip():  # type: ignore[no-untyped-def]
    """A connected Docker client (`ensure_engine` starts our own dockerd when none answers), or a
    skip saying why none can be started: dockerd needs privileges scripts/install.sh cannot grant
    (the docker CLI and Compose themselves are required, not skipped)."""
    from interp_harness.harness.sandbox.docker_engine import EngineUnavailable, ensure_engine

    try:
        return ensure_engine()
    except EngineUnavailable as e:
        pytest.skip(f"no Docker engine can be started here: {e}")


def wait_mid_episode(url: str, run_id: str, first: int, last: int, timeout: float = 60) -> None:
    """Wait until one of the run's episodes is running with `first`..`last` rounds done: a crash
    test kills the server then, sure to interrupt an episode however busy the machine is (a
    run-wide count could be reached by one episode finishing before the other started)."""

    def mid_way() -> bool:
        eps = httpx.get(f"{url}/runs/{run_id}/episodes", timeout=10).json()
        return any(e["status"] == "running" and first <= e["rounds"] <= last for e in eps)

    wait_for(mid_way, timeout, 0.02)


def stop_process(proc: subprocess.Popen[bytes] | None, grace: float = 10) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing and answers JSON with `send_json`."""

    def send_json(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def chat_completion(
    content: str, model: str | None = "stand-in", usage: dict[str, int] | None = None
) -> dict[str, object]:
    """An OpenAI chat completion body with one assistant message."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": usage or {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class LoopbackHTTP:
    """A threaded HTTP server on a free loopback port, serving `handler` until `close()`."""

    def serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def fuzz_settings(max_examples: int):  # type: ignore[no-untyped-def]
    """Hypothesis settings shared by the schema fuzzers: `max_examples` per operation, the same
    examples on every run, no deadline, no health checks."""
    from hypothesis import HealthCheck, settings

    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )


def require(ok: bool, why: str, opt_out: str) -> None:
    """Fail when a tool scripts/install.sh installs is missing: in CI a skip would hide a broken
    install. An operator on a machine without it sets `opt_out`=1; the tests then skip, saying
    why."""
    if ok:
        return
    if os.environ.get(opt_out) == "1":
        pytest.skip(f"{why} ({opt_out}=1)")
    pytest.fail(f"{why}; run scripts/install.sh, or set {opt_out}=1 to skip these tests")


@contextmanager
def serve_in_process(app: object) -> Iterator[str]:
    """An ASGI app served by uvicorn on a free loopback port in a thread; yields its base URL."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="error")  # type: ignore[arg-type]
    )
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    try:
        deadline = time.monotonic() + 60
        while not server.started:
            if time.monotonic() > deadline or not t.is_alive():
                raise RuntimeError("the app did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        t.join(10)


def run_cli(
    argv: list[str], env: dict[str, str], cwd: str | os.PathLike[str]
) -> subprocess.CompletedProcess[str]:
    """`harness ARGV` run by this process as `env` (the whole environment it sees) in `cwd`: for
    tests that check only what a command prints and stores (no interpreter start per command).
    A store that cannot be opened exits 2 with its message, as the console script does."""
    from typer.testing import CliRunner

    from interp_harness.harness.cli import app
    from interp_harness.harness.store.engine import StoreUnavailable

    changes: dict[str, str | None] = {k: None for k in os.environ if k not in env}
    changes.update(env)
    # logging as a fresh process has it: a handler another test's library left on the root
    # logger (Inspect's rich handler) would write log lines into the command's stdout
    root = logging.getLogger()
    kept = [h for h in root.handlers if type(h).__module__.startswith("_pytest")]
    others = [h for h in root.handlers if h not in kept]
    here = os.getcwd()
    os.chdir(cwd)
    for h in others:
        root.removeHandler(h)
    try:
        r = CliRunner().invoke(app, argv, env=changes)
    finally:
        os.chdir(here)
        for h in others:
            root.addHandler(h)
    if isinstance(r.exception, StoreUnavailable):
        return subprocess.CompletedProcess(argv, 2, r.stdout, f"harness: {r.exception}\n")
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return subprocess.CompletedProcess(argv, r.exit_code, r.stdout, r.stderr)
