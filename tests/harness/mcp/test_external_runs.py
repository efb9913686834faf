"""External agents over MCP end to end: `harness mcp serve` (a subprocess, SQLite, target services
in-process) serves FIND episodes; the official `mcp` SDK client runs a scripted baseline's
strategy through it (tests/support/mcp_drive.py). What the run stores equals what a native
`tools` run of the same scripted agent stores for the same targets (the tool calls, their
results, the answer and its scores); a token opens only its own episode; a client that drops its
session and reconnects with the same token carries on."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError
from support.mcp_drive import drive, mcp_client, read_endpoints, what_it_reads

from interp_harness.agents.registry import get_agent
from interp_harness.function_store.models import make_canary
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

ROOT = Path(__file__).resolve().parents[3]
NUMERIC = ["find-v1/numeric/f00150", "find-v1/numeric/f00001"]
STRINGS = ["find-gen/strings/s0/f00003"]  # find-v1's string functions are not released
# secrets in the serving process's environment: no MCP reply may carry them
ENV_CANARIES = {
    "OPENAI_API_KEY": "sk-env-canary-mcp-5c1f09",
    "ANTHROPIC_API_KEY": "sk-ant-env-canary-mcp-77d2",
}


def env_for(db: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{db}",
        "HARNESS_SANDBOX": "inprocess",
        "HARNESS_PLUGINS": "",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        **ENV_CANARIES,
    }


def harness_args(family: str, ids: list[str]) -> list[str]:
    dataset = ids[0].split("/")[0]
    return ["-d", dataset, "-f", family, *(a for t in ids for a in ("--id", t)), "--no-floor"]


def native_run(tmp: Path, agent: str, family: str, ids: list[str]) -> Store:
    """The same targets with the scripted agent itself in protocol mode `tools`."""
    db = tmp / "native.db"
    argv = ["run", "--agent", agent, "--mode", "tools", *harness_args(family, ids), "--json"]
    r = subprocess.run(
        [sys.executable, "-m", "interp_harness.harness.cli", *argv],
        env=env_for(db),
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return Store(make_engine(f"sqlite:///{db}"))


def _ctrl_c_reaches_it() -> None:
    """The server gets SIGINT as from a terminal, whatever the suite's process inherited or set
    before (an ignored or blocked SIGINT survives exec): in the whole suite the Ctrl-C test
    timed out while it passed alone."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


class Served:
    """`harness mcp serve` on the given targets, until its run ends."""

    def __init__(
        self, tmp: Path, family: str, ids: list[str], *, resume: str | None = None
    ) -> None:
        self.db, self.endpoints_file = tmp / "mcp.db", tmp / "endpoints.json"
        self.log = open(tmp / "serve.log", "ab")  # noqa: SIM115 - closed in wait()
        argv = ["mcp", "resume", resume] if resume else ["mcp", "serve", *harness_args(family, ids)]
        argv += ["--mcp-endpoints", str(self.endpoints_file)]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "interp_harness.harness.cli", *argv],
            env=env_for(self.db),
            cwd=tmp,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            preexec_fn=_ctrl_c_reaches_it,
        )
        self.tmp = tmp

    def endpoints(self, timeout: float = 120) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while not (self.endpoints_file.exists() and self.endpoints_file.stat().st_size):
            assert self.proc.poll() is None, (self.tmp / "serve.log").read_text()
            assert time.monotonic() < deadline, "no endpoints file"
            time.sleep(0.2)
        assert self.endpoints_file.stat().st_mode & 0o077 == 0  # the tokens: the operator's only
        return read_endpoints(self.endpoints_file)

    def wait(self) -> Store:
        rc = self.proc.wait(timeout=600)
        self.log.close()
        assert rc == 0, (self.tmp / "serve.log").read_text()[-3000:]
        return Store(make_engine(f"sqlite:///{self.db}"))

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def stored(store: Store) -> dict[str, Any]:
    """Per target: its tool calls in order (name, arguments, result, error), its answer, scores,
    status; the call ids are left out (the native adapter's `call_<n>`, MCP's `mcp_<n>`)."""
    [run] = store.runs.latest()
    out = {}
    for ep in store.episodes.of_run(run.id):
        rows = store.episodes.tool_calls(ep.id)
        out[ep.target_id] = {
            "calls": [(r.name, r.arguments, r.result, r.error) for r in rows],
            "answer": ep.final_answer,
            "status": (ep.status, ep.end_reason),
            "scores": {s.metric: s.value for s in store.scores.of_episodes([ep.id])},
        }
    return out


async def refused(url: str, token: str) -> None:
    with pytest.raises(BaseException) as e:  # the SDK raises in its task group
        async with asyncio.timeout(10), mcp_client(url, token) as c:
            await c.call_tool("call_function", {"inputs": ["1"]})
    assert e.group_contains(MCPError)


@pytest.mark.slow
def test_numeric_over_mcp_equals_a_native_tools_run(tmp_path: Path) -> None:
    served = Served(tmp_path, "numeric", NUMERIC)
    try:
        a, b = served.endpoints()
        assert [a["target_id"], b["target_id"]] == NUMERIC and a["token"] != b["token"]

        async def clients() -> None:
            await refused(b["url"], a["token"])  # A's token on B's endpoint
            await refused(a["url"], b["token"])
            await refused(a["url"], a["token"][:-2])
            agent = get_agent("scripted-numeric")
            # A drops its MCP session after its first step and reconnects with the same token
            seen = await drive(a["url"], a["token"], agent, "numeric", reconnect_after=1)
            assert seen[-1]["text"] == "answer submitted; the episode has ended"
            await asyncio.sleep(1)  # the episode's end is recorded after its answer is taken
            async with mcp_client(a["url"], a["token"]) as c:  # expired with its episode
                assert (await c.list_tools()).tools == []
                r = await c.call_tool("call_function", {"inputs": ["1"]})
                assert r.is_error and r.content[0].text.startswith("episode ended")  # type: ignore[union-attr]
            # B, still running, is untouched by all of the above (the server stops after it)
            read = await what_it_reads(b["url"], b["token"])
            seen = await drive(b["url"], b["token"], get_agent("scripted-numeric"), "numeric")
            read += [s["text"] for s in seen]
            # nothing the client reads names its target or carries its canary (ground truth)
            tid = b["target_id"]
            secrets = (tid, tid.rsplit("/", 1)[1], make_canary(tid), *ENV_CANARIES.values())
            for secret in secrets:
                assert not any(secret in text for text in read), secret

        asyncio.run(clients())
        mcp = stored(served.wait())
    finally:
        served.kill()
    native = stored(native_run(tmp_path, "scripted-numeric", "numeric", NUMERIC))
    assert all(len(x["calls"]) >= 3 for x in mcp.values())
    assert all(x["status"] == ("completed", "submit_answer") for x in mcp.values())
    assert mcp == native


@pytest.mark.slow
def test_strings_over_mcp_equals_a_native_tools_run(tmp_path: Path) -> None:
    served = Served(tmp_path, "strings", STRINGS)
    try:
        [a] = served.endpoints()
        asyncio.run(drive(a["url"], a["token"], get_agent("scripted-strings"), "strings"))
        mcp = stored(served.wait())
    finally:
        served.kill()
    native = stored(native_run(tmp_path, "scripted-strings", "strings", STRINGS))
    assert mcp[STRINGS[0]]["calls"] and mcp[STRINGS[0]]["scores"]
    assert mcp == native


def test_an_external_run_needs_tools_mode(tmp_path: Path) -> None:
    argv = ["run", "--agent", "external", *harness_args("numeric", NUMERIC[:1])]
    r = subprocess.run(
        [sys.executable, "-m", "interp_harness.harness.cli", *argv],
        env=env_for(tmp_path / "h.db"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2
    assert "use protocol mode 'tools'" in r.stderr
    assert "MCP server" not in r.stderr  # refused before anything is served or stored


@pytest.mark.slow
def test_a_stopped_external_run_resumes_with_new_tokens(tmp_path: Path) -> None:
    """Ctrl-C after the client's first step; `harness mcp resume` serves the rest with a new
    token (the old one died with its process); the client carries on from its own memory, and
    the run stores what an uninterrupted native run stores."""
    target = NUMERIC[1]
    served = Served(tmp_path, "numeric", [target])
    try:
        [a] = served.endpoints()
        agent = get_agent("scripted-numeric")
        seen = asyncio.run(drive(a["url"], a["token"], agent, "numeric", stop_after=1))
        served.proc.send_signal(signal.SIGINT)
        assert served.proc.wait(timeout=120) != 0
    finally:
        served.kill()
    [run] = Store(make_engine(f"sqlite:///{served.db}")).runs.latest()
    served.endpoints_file.unlink()
    resumed = Served(tmp_path, "numeric", [], resume=run.id)
    try:
        [b] = resumed.endpoints()
        assert b["episode_id"] == a["episode_id"] and b["token"] != a["token"]
        asyncio.run(drive(b["url"], b["token"], agent, "numeric", seen=seen))
        mcp = stored(resumed.wait())
    finally:
        resumed.kill()
    assert mcp == stored(native_run(tmp_path, "scripted-numeric", "numeric", [target]))
