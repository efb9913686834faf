"""Circuits targets: compile time per library program (our compile: tracr's passes, then the
weights laid out with numpy; with --tracr also tracr's own `compile_rasp_to_model`, which
initialises a haiku model), the generator's draws and time per kept program, and experiments
per second on one built target (run, mean ablation, resample ablation, patching), in process
and through the runner's words (as the target service answers a call).

    python benchmarks/circuits.py [--programs sort,hist] [--gen 10] [--calls 50] [--batch 16]
        [--tracr] [--threads 1]

The test suite's smoke form (tests/benchmarks): `--programs frac_prevs --gen 1 --calls 2
--batch 2`.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from interp_harness.function_store.circuits import build as cb
from interp_harness.function_store.circuits.compile import BOS, compile_program
from interp_harness.function_store.circuits.generator import generate
from interp_harness.function_store.circuits.model import CircuitModel
from interp_harness.function_store.circuits.programs import LIBRARY
from interp_harness.function_store.circuits.runner import CircuitRunner
from interp_harness.sdk import HiddenTruth, PublicMeta, Target


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

    target = Target(
        id=tid,
        dataset=cb.LIB,
        family="circuits",
        variant="lib",
        public=PublicMeta(input_kind="string", prompt_family="circuits"),
        hidden=HiddenTruth(runner="circuits", spec={}),
    )
    runner = CircuitRunner(target, None)
    runner._model = model  # the loaded model: the words' parsing and JSON are what is timed
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


if __name__ == "__main__":
    main()
