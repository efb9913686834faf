"""Protocol mode `code`: what a lab cell costs, and a target call made from a cell against the
same call made as a tool call (protocol mode `tools`).

1. The lab alone (harness/lab, real bubblewrap): the time to start a lab (to its `ready`), and a
   cell's round trip (`Lab.run` of `pass`, and of a cell that makes one target call answered at
   once), p50 and p95.
2. Target calls through the episode loop (the in-memory targets and SQLite of
   benchmarks/orchestrator.py, in-process zero-latency agents): each step makes `--calls` target
   calls of one input, as `--calls` tool calls of `call_function` (mode `tools`) or as one cell
   looping over `f(x)` (mode `code`; a lab per episode, its start included). Per target call:
   wall ms (the run's elapsed time over its calls, lab starts included), steady wall ms (the
   p50 time between an episode's steps over the calls of a step: no lab start) and this
   process's CPU ms (the lab's own CPU is not counted), medians over the repetitions, modes
   alternating, and the ratios code/tools.

    python benchmarks/code_mode.py [--cells 50] [--starts 3] [--episodes 2] [--rounds 10]
        [--calls 10] [--reps 3]

The test suite's smoke form (tests/benchmarks): `--cells 2 --starts 1 --episodes 1 --rounds 3
--calls 2 --reps 1`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Sequence

from orchestrator import timed_run

from interp_harness.agents.base import Agent, AgentReply, Message, Usage
from interp_harness.agents.protocol.cells import cell_block
from interp_harness.agents.toolspec import ToolCall, ToolSpec
from interp_harness.function_store.benchmark import benchmark
from interp_harness.harness.lab.frames import Call, CallResult
from interp_harness.harness.lab.limits import LabLimits
from interp_harness.harness.lab.session import Lab

USAGE = Usage(prompt_tokens=100, completion_tokens=20)
CALLS = int(os.environ.get("CODE_MODE_CALLS", "10"))  # per step; set by --calls


class ZeroLatencyToolCalls(Agent):
    """Each step: CALLS tool calls of `call_function`, one input each."""

    provider = "bench"
    supports_tools = True

    async def step(
        self, conversation: list[Message], tools: Sequence[ToolSpec] | None = None
    ) -> AgentReply:
        n = len(conversation)
        calls = [
            ToolCall(id=f"c{n}_{i}", name="call_function", arguments={"inputs": [str(n + i)]})
            for i in range(CALLS)
        ]
        return AgentReply(content="", tool_calls=calls, usage=USAGE)


class ZeroLatencyCell(Agent):
    """Each step: one cell that calls `f` CALLS times, one input each."""

    provider = "bench"

    async def step(self, conversation: list[Message]) -> AgentReply:
        n = len(conversation)
        code = f"from target import f\nfor x in range({n}, {n + CALLS}):\n    f(x)"
        return AgentReply(content=cell_block(code), usage=USAGE)


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def load() -> str:
    return f"cpus={os.cpu_count()} load(1m)={os.getloadavg()[0]:.2f}"


async def _answer(frame: Call) -> CallResult:
    return CallResult(
        id=frame.id, ok=True, value=[2.0 * float(x) + 1 for x in frame.arguments["inputs"]]
    )


async def lab_alone(args: argparse.Namespace) -> None:
    print(f"\n== the lab alone (bwrap): starts={args.starts} cells={args.cells}; {load()}")
    commands = benchmark("numeric").commands
    starts: list[float] = []
    for _ in range(args.starts):
        lab = Lab(commands, LabLimits())
        t = time.perf_counter()
        await lab.run("pass", _answer)  # the first cell starts the lab
        starts.append(time.perf_counter() - t)
        await lab.aclose()
    lab = Lab(commands, LabLimits())
    await lab.run("from target import f", _answer)
    timings: dict[str, list[float]] = {"pass": [], "one target call": []}
    for i in range(args.cells):
        for label, code in (("pass", "pass"), ("one target call", f"f({i})")):
            t = time.perf_counter()
            cell = await lab.run(code, _answer)
            timings[label].append(time.perf_counter() - t)
            assert cell.status == "ok", cell
    await lab.aclose()
    print(f"  lab start (first cell included): p50 {pct(starts, 50) * 1e3:8.1f} ms")
    for label, ts in timings.items():
        print(
            f"  cell round trip, {label:15}: p50 {pct(ts, 50) * 1e3:8.2f} ms  "
            f"p95 {pct(ts, 95) * 1e3:8.2f} ms"
        )


async def calls(args: argparse.Namespace) -> None:
    print(
        f"\n== target calls in episodes: episodes={args.episodes} rounds={args.rounds} "
        f"calls/step={CALLS} reps={args.reps}; in-memory targets; {load()}"
    )
    modes = [
        ("tools: a tool call each", "tools", f"{__name__}:ZeroLatencyToolCalls"),
        ("code: f(x) in one cell", "code", f"{__name__}:ZeroLatencyCell"),
    ]
    runs: dict[str, list[tuple[float, float, float]]] = {m[0]: [] for m in modes}
    for rep in range(args.reps + 1):  # rep 0 warms up
        for label, mode, agent in modes[rep % 2 :] + modes[: rep % 2]:
            t = await timed_run(agent, args.episodes, args.rounds, args.episodes, "none", mode)
            if rep:
                per = 1e3 / t.steps  # t.steps: the run's target calls
                runs[label].append((t.elapsed * per, t.p50_ms / CALLS, t.cpu * per))
    med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in runs.items()}
    for label, (wall, steady, cpu) in med.items():
        print(
            f"  {label:24}: wall {wall:7.3f} ms/call  steady {steady:7.3f} ms/call  "
            f"cpu {cpu:7.3f} ms/call"
        )
    (tw, ts, tc), (cw, cs, cc) = med[modes[0][0]], med[modes[1][0]]
    print(f"  ratio code / tools: wall {cw / tw:.2f}x, steady {cs / ts:.2f}x, cpu {cc / tc:.2f}x")


async def main() -> None:
    global CALLS
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cells", type=int, default=50)
    p.add_argument("--starts", type=int, default=3)
    p.add_argument("--episodes", type=int, default=2)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--calls", type=int, default=CALLS)
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()
    CALLS = args.calls
    await lab_alone(args)
    await calls(args)


if __name__ == "__main__":
    asyncio.run(main())
