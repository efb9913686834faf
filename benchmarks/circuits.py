"""Circuits targets: compile time per library program (our compile: tracr's passes, then the
weights laid out with numpy; with --tracr also tracr's own `compile_rasp_to_model`, which
initialises a haiku model), the generator's draws and time per kept program, and experiments
per second on one built target (run, mean ablation, resample ablation, patching), in process
and through the runner's words (as the target service answers a call), and the scripted agent's
node F1 on `--agent-targets` generated targets (`circuits-gen/0/0..N-1`, the targets `harness
circuits build --gen-count N` writes) beside the `circuits-random` floor's on the same targets:
each agent's episode runs in process, its commands through the target's runner, its answer
scored by the circuit scorer's node scores (InterpBench's finding, docs/reproductions.md row 8).

    python benchmarks/circuits.py [--programs sort,hist] [--gen 10] [--calls 50] [--batch 16]
        [--tracr] [--threads 1] [--agent-targets 50]

The test suite's smoke form (tests/benchmarks): `--programs frac_prevs --gen 1 --calls 2
--batch 2 --agent-targets 2`.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from statistics import mean
from typing import Any

import numpy as np

from interp_harness.agents.base import Message
from interp_harness.agents.protocol import format_reply, parse_message
from interp_harness.agents.scripted_circuits import RandomCircuitFloor, ScriptedCircuitsAgent
from interp_harness.evaluator.circuits.scorer import node_results
from interp_harness.evaluator.report import bootstrap_interval, interval_and_method
from interp_harness.function_store.circuits import build as cb
from interp_harness.function_store.circuits.answer import parse_circuit
from interp_harness.function_store.circuits.compile import BOS, compile_program
from interp_harness.function_store.circuits.generator import generate
from interp_harness.function_store.circuits.programs import LIBRARY
from interp_harness.function_store.circuits.prompt import PROMPTS
from interp_harness.function_store.circuits.runner import CircuitRunner
from interp_harness.model_services.intervention.circuit_model import CircuitModel
from interp_harness.sdk import HiddenTruth, PublicMeta, Target

MAX_STEPS = 10  # the scripted agents answer in 4 messages; a loop past this is a bug here


def runner_for(tid: str, model: CircuitModel) -> CircuitRunner:
    """The target service's runner over an already loaded model (its words and JSON run as in
    the service; the weights need no file)."""
    dataset = tid.split("/")[0]
    target = Target(
        id=tid,
        dataset=dataset,
        family="circuits",
        variant=dataset.removeprefix("circuits-"),
        public=PublicMeta(input_kind="string", prompt_family="circuits"),
        hidden=HiddenTruth(runner="circuits", spec={}),
    )
    runner = CircuitRunner(target, None)
    runner._model = model
    return runner


async def episode(agent: Any, runner: CircuitRunner) -> str:
    """One text-protocol episode in process, replies written as the harness writes them; the
    final answer (the message with [DESCRIPTION])."""
    conversation = [Message(role="user", content=PROMPTS["circuits"])]
    for _ in range(MAX_STEPS):
        content = (await agent.text_step(conversation)).content
        parsed = parse_message(content)
        if parsed.has_description:
            return content
        replies = [format_reply(runner.call(list(c.inputs))) for c in parsed.commands]
        conversation += [
            Message(role="assistant", content=content),
            Message(role="user", content="\n".join(r.rstrip("\n") for r in replies)),
        ]
    raise RuntimeError(f"{agent.name}: no answer in {MAX_STEPS} steps")


def figure(values: list[float], metric: str) -> str:
    """The mean with the report's 95% interval for `metric` (metric_scale's range: the
    percentile bootstrap, inside [0, 1] for these)."""
    ci, method = interval_and_method(values, "t", metric)
    shown = f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "[no interval]"
    return f"{mean(values):.3f} {shown} ({method}, n={len(values)})"


def agent_node_f1(n: int, threads: int) -> None:
    """The scripted agent's and the floor's node scores on the first `n` circuits-gen targets."""
    agents = {"scripted-circuits": ScriptedCircuitsAgent(), "circuits-random": RandomCircuitFloor()}
    scores: dict[str, dict[str, list[float]]] = {a: {} for a in agents}
    build_s = episodes_s = 0.0
    for tid in cb.target_ids(cb.BuildOptions(per_program=0, gen_count=n))[cb.GEN]:
        t0 = time.perf_counter()
        b = cb.build_target(tid, cb.BuildOptions())
        model = CircuitModel(b.merged.arrays, b.merged.meta, threads=threads)
        build_s += time.perf_counter() - t0
        universe = model.components()
        truth = [c for c in b.truth.circuit if c in universe]
        t0 = time.perf_counter()
        for name, agent in agents.items():
            answer = asyncio.run(episode(agent, runner_for(tid, model)))
            for r in node_results(parse_circuit(answer), truth, universe):
                if r.value is not None:  # precision of an empty claim: undefined, left out
                    scores[name].setdefault(r.metric, []).append(r.value)
        episodes_s += time.perf_counter() - t0
    print(
        f"agents on {n} circuits-gen targets: built in {build_s:.1f} s, "
        f"episodes in {episodes_s:.1f} s"
    )
    for name, s in scores.items():
        print(f"{name}: node F1 {figure(s['node_f1'], 'node_f1')}")
        print(
            f"{name}: node precision {figure(s['node_precision'], 'node_precision')}; "
            f"recall {figure(s['node_recall'], 'node_recall')}"
        )
        print(
            f"{name}: node F1 of random circuits of its size "
            f"{figure(s['node_f1_random'], 'node_f1_random')}"
        )
    gap = [
        a - f
        for a, f in zip(
            scores["scripted-circuits"]["node_f1"],
            scores["circuits-random"]["node_f1"],
            strict=True,
        )
    ]
    # a difference of two [0, 1] scores: its bootstrap interval stays inside [-1, 1]
    ci = bootstrap_interval(gap, -1.0, 1.0)
    shown = f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "[no interval]"
    print(
        "node F1, scripted-circuits minus the floor, per target: "
        f"{mean(gap):.3f} {shown} (bootstrap, n={len(gap)})"
    )


def rate(fn, calls: int) -> float:  # noqa: ANN001
    fn()  # warm
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return calls / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", default=",".join(LIBRARY))
    ap.add_argument("--gen", type=int, default=10)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--tracr", action="store_true", help="also time tracr's own compile")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the runner's: 1)")
    ap.add_argument(
        "--agent-targets",
        type=int,
        default=50,
        help="circuits-gen targets the scripted agent and the floor run on (0: none)",
    )
    a = ap.parse_args()

    names = [n for n in a.programs.split(",") if n]
    t0 = time.perf_counter()
    import tracr.compiler.lib  # noqa: F401 - jax's import, timed apart from the compiles

    print(f"import tracr (jax, haiku): {time.perf_counter() - t0:.2f} s")
    for name in names:
        lp = LIBRARY[name]
        t0 = time.perf_counter()
        c = compile_program(lp.make(), lp.vocab, lp.max_len)
        ours = time.perf_counter() - t0
        line = f"compile {name}: {ours:.3f} s ({c.meta.n_layers} layers, {len(c.roles)} components)"
        if a.tracr:
            from tracr.compiler import compiling

            t0 = time.perf_counter()
            compiling.compile_rasp_to_model(lp.make(), set(lp.vocab), lp.max_len, compiler_bos=BOS)
            line += f"; tracr's compile_rasp_to_model {time.perf_counter() - t0:.3f} s"
        print(line)

    if a.gen:
        rng = np.random.default_rng(0)
        t0 = time.perf_counter()
        draws = sum(generate(rng)[2] for _ in range(a.gen))
        per = (time.perf_counter() - t0) / a.gen
        print(
            f"generator: {a.gen} programs, {per:.3f} s per kept program, {draws / a.gen:.2f} draws each"
        )

    tid = f"{cb.LIB}/{names[0]}/0"
    b = cb.build_target(tid, cb.BuildOptions())
    t0 = time.perf_counter()
    model = CircuitModel(b.merged.arrays, b.merged.meta, threads=a.threads)
    print(
        f"target {tid}: {model.n_layers} layers x {model.n_heads} heads, loaded in {time.perf_counter() - t0:.3f} s"
    )
    xs = model.random_inputs(a.batch, model.max_len, seed=1)
    src = model.random_inputs(a.batch, model.max_len, seed=2)
    circuit = b.truth.circuit
    figures = {
        "run": lambda: model.run(xs),
        "ablate mean": lambda: model.ablate(xs, circuit, "mean"),
        "ablate resample": lambda: model.ablate(xs, circuit, "resample"),
        "patch": lambda: model.patch(xs, src, circuit),
    }
    for label, fn in figures.items():
        print(f"in process, {label} ({a.batch} inputs): {rate(fn, a.calls):.1f} calls/s")

    runner = runner_for(tid, model)  # the words' parsing and JSON are what is timed
    words = [",".join(map(str, x)) for x in xs]
    sources = [",".join(map(str, x)) for x in src]
    calls = {
        "ablate mean": ["ablate", *words, "--components", *circuit, "--kind", "mean"],
        "patch": ["patch", *words, "--source", *sources, "--components", *circuit],
    }
    for label, w in calls.items():
        print(
            f"runner, {label} ({a.batch} inputs): {rate(lambda w=w: runner.call(w), a.calls):.1f} calls/s"
        )
    if a.agent_targets:
        agent_node_f1(a.agent_targets, a.threads)


if __name__ == "__main__":
    main()
