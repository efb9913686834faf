"""The model server's engine with libgomp's default spin-wait against GOMP_SPINCOUNT=1000 (what
`python -m interp_harness.model_services.backbone` and `harness backbone serve` set), alone and next to one busy
process, as the server is beside the harness's own runs in the main job.

Each case is a fresh process (libgomp reads its settings once, when torch loads) that runs the
engine on 40 forced-choice judge prompts (the judge ceiling's prompts of 4 find-gen string
targets, as benchmarks/judge.py builds them) and on 64 greedy generations of 16 tokens. The two
settings alternate, ROUNDS times each; printed: every wall time and the ratio of the medians
(default / 1000).

    python benchmarks/omp_spin.py [--rounds 2] [--smoke]

`--smoke`: 1 judge prompt, 4 generations of 2 tokens, alone only. The test suite's smoke form
(tests/benchmarks): `--smoke --rounds 1`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUSY = "import time\nt = time.time()\nwhile time.time() - t < 100000: pass\n"


def workload(smoke: bool = False) -> dict[str, float]:
    """Runs in the child: load the model, time both workloads (`smoke`: small ones)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from judge import ceiling_prompts

    from interp_harness.evaluator.unit_tests import OPTIONS, PREFILL, SYSTEM_PROMPT
    from interp_harness.model_services.backbone.engine import Engine, GenRequest
    from interp_harness.model_services.backbone.model import load

    eng = Engine(*load())
    judge = [
        GenRequest(
            messages=[
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": p},
                {"role": "assistant", "content": PREFILL},
            ],
            forced_choice=OPTIONS,
        )
        for p in (ceiling_prompts(1)[0][:1] if smoke else ceiling_prompts(4)[0])
    ]
    words = ["Paris", "dog", "London", "apple", "Einstein", "river", "car", "Tokyo"] * 8
    words, tokens = (words[:4], 2) if smoke else (words, 16)
    gen = [
        GenRequest(
            messages=[{"role": "user", "content": f"In one word: where is {w}?"}],
            max_tokens=tokens,
        )
        for w in words
    ]
    eng.generate(gen[:4])  # warm-up
    out = {}
    for name, reqs in (("judge", judge), ("generate", gen)):
        t = time.perf_counter()
        eng.generate(reqs)
        out[name] = time.perf_counter() - t
    return out


def run_case(spin: str | None, smoke: bool) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    if spin is not None:
        env["GOMP_SPINCOUNT"] = spin
    p = subprocess.run(
        [sys.executable, __file__, "--workload", *(["--smoke"] if smoke else [])],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        sys.exit(f"workload failed:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--smoke", action="store_true", help="small workloads, alone only")
    ap.add_argument("--workload", action="store_true", help=argparse.SUPPRESS)  # the child
    a = ap.parse_args()
    if a.workload:
        print(json.dumps(workload(a.smoke)))
        return
    settings = {"default": None, "spin 1000": "1000"}
    for beside in ("alone",) if a.smoke else ("alone", "beside one busy process"):
        busy = subprocess.Popen([sys.executable, "-c", BUSY]) if beside != "alone" else None
        try:
            times: dict[str, dict[str, list[float]]] = {s: {} for s in settings}
            for r in range(a.rounds):
                for name, spin in settings.items():
                    res = run_case(spin, a.smoke)
                    for k, v in res.items():
                        times[name].setdefault(k, []).append(v)
                    shown = "  ".join(f"{k} {v:6.2f} s" for k, v in res.items())
                    print(f"{beside:<24} round {r + 1}  {name:<9}  {shown}", flush=True)
        finally:
            if busy is not None:
                busy.kill()
                busy.wait()
        for k in times["default"]:
            d = statistics.median(times["default"][k])
            s = statistics.median(times["spin 1000"][k])
            print(
                f"{beside}: {k}: median default {d:.2f} s, spin 1000 {s:.2f} s, ratio {d / s:.2f}"
            )


if __name__ == "__main__":
    main()
