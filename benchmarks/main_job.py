"""The main job's wall time, this tree against a baseline commit, runs alternating (A B A B ...).

Both trees run `bash scripts/main_job.sh` the same way: each starts its own model server (none
may be running), keeps its database in its own HARNESS_HOME, and imports its own code (the
baseline through PYTHONPATH, from a git worktree of BASE made here and removed after). The runs
alternate rather than overlap: side by side they would share the two cores and time each other.
Prints each run's wall time and the ratio of the medians (baseline / this tree).

    python benchmarks/main_job.py --base HEAD~1 [--rounds 2] [--backbone-url URL]
    python benchmarks/main_job.py [--rounds 2]      this tree alone: its wall times, no ratio

`--backbone-url` names a running backbone server that every run uses (model and judge) instead of
starting its own; main_job.sh's sample sizes (MAIN_JOB_N, MAIN_JOB_WORDS_N) come from the
environment. The test suite's smoke form (tests/benchmarks): `--rounds 1 --backbone-url URL` with
MAIN_JOB_N=1 and MAIN_JOB_WORDS_N=1 (this tree alone: a baseline's run would double its time and
test nothing more of this tree).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_once(tree: Path, home: Path, backbone: str | None = None) -> tuple[float, str]:
    """The run's wall time and its report's summary line ("report: R rows, E errors")."""
    # the tree's own code before the editable install's: src/ since the src layout, the tree
    # itself in a baseline made before it
    code = tree / "src" if (tree / "src" / "interp_harness").is_dir() else tree
    env = {**os.environ, "HARNESS_HOME": str(home), "PYTHONPATH": str(code)}
    shared = ROOT.parent / "shared" / "data"  # what main_job.sh finds from this tree, for both
    if "HARNESS_DATA_DIR" not in env and shared.is_dir():
        env["HARNESS_DATA_DIR"] = str(shared)
    for k in ("HARNESS_BACKBONE_URL", "HARNESS_JUDGE_URL"):  # each run starts its own server
        env.pop(k, None)
    if backbone:  # ... unless told to share one (main_job.sh judges with it too)
        env["HARNESS_BACKBONE_URL"] = backbone
    t = time.perf_counter()
    p = subprocess.run(
        ["bash", "scripts/main_job.sh"], cwd=tree, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - t
    if p.returncode != 0 or not re.search(r"main job: \d+ s wall", p.stderr):
        sys.exit(f"main job in {tree} failed (rc {p.returncode}):\n{p.stderr[-3000:]}")
    summary = re.search(r"^report: .*$", p.stdout, re.M)
    return wall, summary.group(0) if summary else "(no report summary line)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--base", default=None, help="baseline commit (e.g. HEAD~1); none: this tree")
    ap.add_argument("--rounds", type=int, default=2, help="runs of each tree (default 2)")
    ap.add_argument("--backbone-url", default=None, help="a running backbone server to share")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="main-job-bench-") as tmp:
        if a.base is None:
            walls = []
            for r in range(a.rounds):
                wall, summary = run_once(ROOT, Path(tmp) / f"home-this-{r}", a.backbone_url)
                walls.append(wall)
                print(f"round {r + 1}  this {wall:7.1f} s  {summary}", flush=True)
            print(f"median: this tree {statistics.median(walls):.1f} s (no baseline: --base)")
            return
        base = Path(tmp) / "base"
        p = subprocess.run(
            ["git", "worktree", "add", "--detach", str(base), a.base],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if p.returncode != 0:
            sys.exit(f"cannot check out {a.base}: {p.stderr.strip()}")
        try:
            times: dict[str, list[float]] = {"base": [], "this": []}
            for r in range(a.rounds):
                for name, tree in (("base", base), ("this", ROOT)):
                    wall, summary = run_once(tree, Path(tmp) / f"home-{name}-{r}", a.backbone_url)
                    times[name].append(wall)
                    print(f"round {r + 1}  {name:<4} {wall:7.1f} s  {summary}", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT)
    mb, mt = statistics.median(times["base"]), statistics.median(times["this"])
    print(
        f"median: base ({a.base}) {mb:.1f} s, this tree {mt:.1f} s, ratio base/this {mb / mt:.2f}"
    )


if __name__ == "__main__":
    main()
