"""Lab cells and tool calls feeding the server their largest refusable input (issue 49, item 1).

A cell calling `target.f(["1"] * 4_000_000)` (a 20 MB frame, under the channel's 40 MiB cap)
made `/healthz` of `harness serve` take 34.6 s: the call's schema check walked every item on the
event loop before the target service refused the count. Now counts and lengths are checked
first, the schema walk and the parse of a long frame run off the loop, and a `call` frame longer
than the largest legal call ends the lab. Each path is fed its largest refusable input while
`/healthz` is polled: every answer within a second.

Its own server (SQLite, bubblewrap labs): the suite's shared one runs the battery beside it, and
a stalled loop there would be blamed on whichever test ran at the time."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from support.trust_helpers import HarnessServer

from interp_harness.agents.host_protocol import reply_chars
from interp_harness.agents.toolspec import ToolCall
from interp_harness.function_store.benchmark import benchmark
from interp_harness.harness.domain.tool_checks import checked_arguments

# each cell sends one of the largest inputs a cell can: through `target`, forged through the
# channel module (4M and 1M inputs, 1M argument names, 8M inputs: a 40 MB frame), and a global
# of 1.5M items that `lab:f` exports as a 7.5 MB literal
CELLS = [
    """
import target
try:
    target.call_function(["1"] * 4_000_000)
except target.TargetError as e:
    print("refused:", str(e)[:120])
""",
    """
import labchannel
for args in ({"inputs": ["1"] * 4_000_000}, {"inputs": ["1"] * 1_000_000},
             {f"k{i}": 1 for i in range(1_000_000)}):
    try:
        labchannel.call("call_function", args)
    except labchannel.TargetError as e:
        print("refused:", str(e)[:120])
""",
    """
BIG = ["1"] * 1_500_000
def f(x):
    return x if BIG else None
""",
    """
import labchannel
try:
    labchannel.call("call_function", {"inputs": ["1"] * 8_000_000})
except Exception as e:
    print("refused:", str(e)[:120])
""",
]
MESSAGES = [
    "\n".join(f"```python\n{c.strip()}\n```" for c in CELLS[:3]),
    f"```python\n{CELLS[3].strip()}\n```",
    "[DESCRIPTION]: x\n[DOMAIN]: x\n[CODE]: lab:f",
]


class Poller:
    """`/healthz` asked again and again on a thread; the slowest answer's seconds."""

    def __init__(self, url: str) -> None:
        self.url, self.worst, self.n = url, 0.0, 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=120) as c:
            while not self._stop.is_set():
                t = time.monotonic()
                assert c.get("/healthz").status_code == 200
                self.worst = max(self.worst, time.monotonic() - t)
                self.n += 1
                time.sleep(0.05)

    def stop(self) -> float:
        self._stop.set()
        self._t.join(150)
        return self.worst


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HarnessServer]:
    srv = HarnessServer(
        tmp_path_factory.mktemp("lab-stall"),
        env={"HARNESS_LAB_SANDBOX": "bwrap", "HARNESS_LAB_CELL_WALL_S": "60"},
    )
    srv.start(timeout=90)
    try:
        yield srv
    finally:
        srv.stop()


def test_largest_cell_calls_leave_healthz_answering(server: HarnessServer) -> None:
    api = httpx.Client(base_url=server.url, timeout=60)
    spec = {"agent": "replay", "agent_options": {"messages": MESSAGES}, "dataset": "find-gen",
            "family": "numeric", "limit": 1, "seed": 0, "floor": False,
            "protocol": {"mode": "code"}}  # fmt: skip
    poller = Poller(server.url)
    try:
        r = api.post("/runs", json=spec)
        assert r.status_code == 201, r.text
        deadline = time.monotonic() + 400
        while api.get(f"/runs/{r.json()['id']}").json()["status"] not in ("completed", "failed"):
            assert time.monotonic() < deadline, server.log()[-3000:]
            time.sleep(0.3)
    finally:
        worst = poller.stop()
    (ep,) = api.get(f"/runs/{r.json()['id']}/episodes").json()
    detail = api.get(f"/episodes/{ep['id']}").json()
    out = "\n".join(c["stdout"] + (c["error"] or "") for c in detail["cells"])
    # every oversized call was refused by count, before any per-item work
    assert out.count("too many inputs") == 5, out[:3000]
    assert detail["target_calls"] == 0
    print(f"slowest /healthz: {worst:.3f} s of {poller.n}")
    assert worst < 1.0, f"/healthz took {worst:.2f} s ({poller.n} answers)"


def test_largest_tool_call_is_checked_off_the_loop() -> None:
    """A tool call (agent host, MCP) of the largest arguments the message cap lets through: its
    check never holds the event loop (measured as the longest gap of a ticker beside it)."""
    spec = next(c for c in benchmark("numeric").commands if c.name == "call_function")
    n = (256 * 1024 - 16) // 5  # `"1", ` per input: the default HARNESS_AGENT_MAX_MESSAGE_CHARS
    args = {"inputs": ["1"] * n}
    assert reply_chars("", [ToolCall(id="c", name=spec.name, arguments=args)]) <= 256 * 1024

    async def main() -> tuple[str, float]:
        worst, done = 0.0, False

        async def tick() -> None:
            nonlocal worst
            last = time.monotonic()
            while not done:
                await asyncio.sleep(0.005)
                worst = max(worst, time.monotonic() - last)
                last = time.monotonic()

        ticker = asyncio.create_task(tick())
        await asyncio.sleep(0.02)
        problems = await checked_arguments(spec, args)
        assert not await checked_arguments(spec, {"inputs": ["1"] * 1000})  # the schema walk
        done = True
        await ticker
        return problems, worst

    problems, worst = asyncio.run(main())
    print(f"longest loop gap: {worst:.3f} s")
    assert problems.startswith(f"too many inputs: {n} in one call"), problems
    assert worst < 0.2, f"the loop was held {worst:.2f} s"
