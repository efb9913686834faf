"""Every script in benchmarks/ run in its smoke form (issue 48, item 6): its smallest arguments, as
a fresh `python benchmarks/NAME.py` the way docs tell a reader to run it, and its printed figures
parsed and checked for a sane form. A rename or a moved module then breaks a test here, not a
figure in docs. How fast things are is still the scripts' business, not these tests'.

Scripts that talk to a model server are pointed at the session's shared ones (`backbone_url`,
`smol_url`: marked `model_server` by tests/support/shared_services.py); `sae.py` starts its own (its
SAE is given at the server's start). Those over ten seconds are `slow`. Helper modules of
benchmarks/ are listed in HELPERS with the tests that run them; `test_every_script_has_a_smoke_test`
fails for a new script without a `test_<name>` here.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT, TESTS

BENCH = ROOT / "benchmarks"
# modules of benchmarks/ that are no scripts: what they are, and which smoke tests run them
HELPERS = {
    "serving.py": "servers a script starts (model server, PostgreSQL, Ray): every script's test",
    "zero_agent.py": "the zero-latency agents: test_orchestrator, test_protocols",
    "device_wheelhouse.py": "device_check.sh's wheelhouse: tests/benchmarks/test_device_wheelhouse.py",
}
NUM = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?|nan|inf)"  # a printed figure


def run(
    name: str, *args: str, tmp: Path, env: dict[str, str] | None = None, timeout: int = 300
) -> str:
    """`python benchmarks/NAME ARGS` in `tmp` (its own HARNESS_HOME), wide enough that rich does
    not wrap a figure; its stdout, after asserting it exited 0."""
    full = {**os.environ, "COLUMNS": "200", "HARNESS_HOME": str(tmp / "home"), **(env or {})}
    p = subprocess.run(
        [sys.executable, str(BENCH / name), *args],
        cwd=tmp,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert p.returncode == 0, (
        f"{name} exited {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}"
    )
    return p.stdout


def figures(pattern: str, out: str, count: int = 1) -> list[list[float]]:
    """The figures of each line matching `pattern` (its groups as numbers: `count` such lines),
    each finite and not negative (times, rates, ratios, counts)."""
    found = re.findall(pattern, out, re.M)
    assert len(found) == count, f"{len(found)} lines match {pattern!r}, not {count}:\n{out}"
    rows = [[float(g) for g in (m if isinstance(m, tuple) else (m,))] for m in found]
    for row in rows:
        assert all(math.isfinite(x) and x >= 0 for x in row), (pattern, row)
    return rows


def positive(rows: list[list[float]]) -> None:
    """Rates and ratios: above zero (a zero rate means nothing was timed)."""
    assert all(x > 0 for row in rows for x in row), rows


# ---- the rules ----------------------------------------------------------------------------------
def test_every_script_has_a_smoke_test() -> None:
    scripts = {p.name for p in BENCH.glob("*.py")}
    assert set(HELPERS) <= scripts, "a helper listed here is gone: update HELPERS"
    tested = {n.removeprefix("test_") + ".py" for n in globals() if n.startswith("test_")}
    missing = sorted(scripts - set(HELPERS) - tested)
    assert not missing, f"benchmarks without a smoke test here (test_<name>): {missing}"


def test_no_benchmark_imports_the_test_suite() -> None:
    """A benchmark runs outside pytest: it imports the installed package and benchmarks/ only
    (tests/support's names are the suite's, moved and renamed with it)."""
    ours = {p.stem for p in BENCH.glob("*.py")}
    suite = {p.stem for p in (TESTS / "support").glob("*.py")} | {"support", "tests"}
    for path in sorted(BENCH.glob("*.py")):
        tree = ast.parse(path.read_text())
        names = {
            a.name.split(".")[0]
            for n in ast.walk(tree)
            if isinstance(n, ast.Import)
            for a in n.names
        }
        names |= {
            n.module.split(".")[0]
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and n.module and not n.level
        }
        assert not (names - ours) & suite, f"{path.name} imports the test suite's {names & suite}"
        assert '"tests"' not in path.read_text(), f"{path.name} puts tests/ on its path"


# ---- no model server ----------------------------------------------------------------------------
def test_code_mode(tmp_path: Path, needs_bwrap: None) -> None:
    out = run(
        "code_mode.py",
        *("--cells", "2", "--starts", "1", "--episodes", "1", "--rounds", "3"),
        *("--calls", "2", "--reps", "1"),
        tmp=tmp_path,
    )
    positive(figures(r"lab start \(first cell included\): p50 +" + NUM + " ms", out))
    figures(r"cell round trip, .+: p50 +" + NUM + r" ms +p95 +" + NUM + " ms", out, 2)
    modes = r"wall +" + NUM + r" ms/call +steady +" + NUM + r" ms/call +cpu +" + NUM + " ms/call"
    positive(figures(modes, out, 2))
    ratio = r"ratio code / tools: wall " + NUM + r"x, steady " + NUM + r"x, cpu " + NUM + "x"
    positive(figures(ratio, out))


def test_generate_catalog(tmp_path: Path) -> None:
    out = run(
        "generate_catalog.py",
        *("--n", "10", "--mlp-limit", "1", "--epochs", "1"),
        *("--cache-dir", str(tmp_path / "cache")),
        tmp=tmp_path,
    )
    made = {f: int(n) for f, n in re.findall(r"^(\w+) +(\d+) functions \(paper: \d+\)", out, re.M)}
    assert made == {"numeric": 10, "strings": 10, "entities": 200, "relations": 75}, out
    figures(r"^total +" + NUM + r" s \(goal", out)
    positive(figures(r"^mean " + NUM + r" s per function; extrapolated for all (\d+)", out))
    assert re.search(r"^second pass: 1/1 cache hits in", out, re.M), out


def test_interpolation_floor(tmp_path: Path) -> None:
    out = run("interpolation_floor.py", "--samples", "9", "--limit", "10", tmp=tmp_path)
    [[wins, total]] = figures(r"interpolation floor @ 9 samples: (\d+)/(\d+) NMSE<0\.1", out)
    assert total == 10 and wins <= total


def test_mlp_numpy_vs_torch(tmp_path: Path) -> None:
    # already seconds: the 5 released networks on 10,256 inputs each
    out = run("mlp_numpy_vs_torch.py", tmp=tmp_path)
    figures(r"^f0000\d: identical " + NUM + "%  nmse " + NUM, out, 5)
    [[same, total, share]] = figures(r"identical printed values (\d+)/(\d+) = " + NUM + "%", out)
    assert total == 5 * 10256 and same <= total and share <= 100
    [[_, _, worst]] = figures(
        r"ulp difference: median " + NUM + ", max " + NUM + "; worst NMSE " + NUM, out
    )
    assert worst < 1e-6  # the numpy fallback is the same function as torch's, to rounding


def test_circuits(tmp_path: Path) -> None:
    out = run(
        "circuits.py",
        "--programs",
        "frac_prevs",
        "--gen",
        "1",
        "--calls",
        "2",
        "--batch",
        "2",
        "--agent-targets",
        "2",
        tmp=tmp_path,
    )
    figures(r"^compile frac_prevs: " + NUM + r" s \((\d+) layers", out)
    positive(
        figures(
            r"^in process, (?:run|ablate mean|ablate resample|patch) \(2 inputs\): "
            + NUM
            + " calls/s",
            out,
            4,
        )
    )
    positive(figures(r"^runner, (?:ablate mean|patch) \(2 inputs\): " + NUM + " calls/s", out, 2))
    figures(r"^agents on 2 circuits-gen targets: built in " + NUM + " s, episodes in " + NUM, out)
    # each agent's node scores: a mean inside its 95% interval, inside [0, 1]
    ci = NUM + r" \[" + NUM + ", " + NUM + r"\] \(bootstrap, n=\d\)"
    node = r"^(?:scripted-circuits|circuits-random): "
    scores = figures(node + "node F1 " + ci + "$", out, 2)
    scores += figures(node + "node precision " + ci + "; recall " + ci + "$", out, 2)
    scores += figures(node + "node F1 of random circuits of its size " + ci + "$", out, 2)
    for row in scores:
        for m, lo, hi in zip(row[::3], row[1::3], row[2::3], strict=True):
            assert 0 <= lo <= m <= hi <= 1, row
    # the agent against the floor, per target: a difference, inside [-1, 1]
    [gap] = re.findall(r"^node F1, scripted-circuits minus the floor, per target: " + ci, out, re.M)
    m, lo, hi = map(float, gap)
    assert -1 <= lo <= m <= hi <= 1, gap


def test_orchestrator(tmp_path: Path, needs_bwrap: None) -> None:
    out = run(
        "orchestrator.py", "--episodes", "1", "--rounds", "3", "--concurrency", "1", tmp=tmp_path
    )
    positive(figures(r"steps_per_s=" + NUM + " steady_steps_per_s=" + NUM, out, 2))
    figures(r"step_latency_ms p50=" + NUM + " p95=" + NUM, out, 2)
    positive(figures(r"ratio host/in-process: steps_per_s " + NUM + ", steady " + NUM, out))


def test_protocols(tmp_path: Path) -> None:
    out = run(
        "protocols.py",
        *("--episodes", "1", "--rounds", "3", "--concurrency", "1", "--reps", "1"),
        *("--mcp-calls", "2", "--mcp-warmup", "1"),
        tmp=tmp_path,
    )
    row = r"^  (?:default|tools) \(.+?\) +" + " +".join([NUM] * 5) + "$"
    positive(figures(row, out, 3))  # every mode measured, none "not measured"
    figures(r"ratio tools \(.+\) / default: steps/s " + NUM + "x", out, 2)
    call = r"^  (?:plain HTTP POST|MCP tools/\w+).*? +" + " +".join([NUM] * 3) + "$"
    positive(figures(call, out, 3))
    figures(r"ratio MCP .+ / plain POST: p50 " + NUM + "x, p95 " + NUM + "x", out, 2)


def test_scoring(tmp_path: Path, needs_bwrap: None) -> None:
    out = run("scoring.py", "--n", "4", "--chunk", "2", tmp=tmp_path)
    [[n, _, _]] = figures(
        r"scored (\d+) numeric answers in " + NUM + " s: " + NUM + " functions/s", out
    )
    outcomes = re.search(r"^outcomes: (.+)$", out, re.M)
    assert n == 4 and outcomes, out
    assert sum(int(x) for x in re.findall(r" (\d+)(?:,|$)", outcomes.group(1))) == 4, out


def test_target_calls(tmp_path: Path, needs_bwrap: None) -> None:
    out = run(
        "target_calls.py",
        *("--n", "3", "--find-n", "2", "--callers", "2", "--per-caller", "2"),
        tmp=tmp_path,
    )
    positive(figures(r"service start " + NUM + " s", out))
    positive(figures(r"sandboxed service: n=3 p50 " + NUM + " ms  p95 " + NUM + " ms", out))
    positive(figures(r"FIND way \(spawn\): +n=2 p50 " + NUM + " ms  p95 " + NUM + " ms", out))
    positive(figures(r"ratio FIND/ours: p50 " + NUM + "x  p95 " + NUM + "x", out))
    positive(figures(r"2 concurrent callers: " + NUM + " calls/s", out))


@pytest.mark.slow
def test_scale_out(tmp_path: Path, needs_bwrap: None) -> None:
    """Its own PostgreSQL and a one-node Ray cluster (the script starts both, as docs run it)."""
    from support import require
    from support.pg_server import pg_missing

    pytest.importorskip("ray", reason="Ray is in the dev extra")
    why = pg_missing()
    require(why is None, why or "", "HARNESS_TEST_SKIP_POSTGRES")
    out = run(
        "scale_out.py", "--episodes", "1", "--nodes", "1", "--warm", "1", tmp=tmp_path, timeout=600
    )
    positive(figures(r"PostgreSQL: " + NUM + " single-row transactions/s", out))
    positive(figures(r"local, max_concurrency 1: " + NUM + " episodes/s", out))
    positive(figures(r"ray, 1 worker node\(s\): " + NUM + " episodes/s", out))
    positive(figures(r"ray 1 node\(s\) / local at concurrency 1: " + NUM + "x", out))


# ---- model servers ------------------------------------------------------------------------------
def test_backbone(tmp_path: Path, backbone_url: str, needs_bwrap: None) -> None:
    out = run("backbone.py", "--url", backbone_url, "--calls", "2", "--words", "2", tmp=tmp_path)
    rate = r"^{}.*?: +" + NUM + r" s  \(" + NUM + r" s/call\)"
    positive(figures(rate.format("batched"), out))
    positive(figures(rate.format("one request per word"), out))
    positive(figures(r"^speed-up: " + NUM + "x", out))
    [[_, scores, errors]] = figures(
        r"max \|score difference\|: " + NUM + r" over (\d+) scores; errors: (\d+)", out
    )
    assert scores == 4 and errors == 0, out


def test_backbone_stream(tmp_path: Path, backbone_url: str) -> None:
    out = run(
        "backbone_stream.py", "--url", backbone_url, "--tokens", "4", "--rounds", "1", tmp=tmp_path
    )
    positive(figures(r"^(\d+) completion tokens, medians of 1", out))
    positive(figures(r"^  (?:whole reply|first token|end of stream) .+: +" + NUM + " s$", out, 3))


def test_huge_inputs(tmp_path: Path, backbone_url: str, smol_url: str) -> None:
    # sizes scaled to kilobytes: the shared servers answer them like any request (the refusals of
    # the real sizes are tested by the servers' own tests); their peak RSS is not read (nan)
    out = run(
        "huge_inputs.py",
        *("--backbone-url", backbone_url, "--intervention-url", smol_url, "--scale", "0.00002"),
        tmp=tmp_path,
    )
    case = (
        r"^(?:backbone|intervention) .+? +(\d{3}) +"
        + NUM
        + " s  health max +"
        + NUM
        + " s  reply +"
        + NUM
        + " MB"
    )
    rows = figures(case, out, 7)
    assert all(r[0] == 200 for r in rows), out


def test_intervention(tmp_path: Path, smol_url: str) -> None:
    out = run("intervention.py", "--url", smol_url, "--texts", "3", "--pairs", "2", tmp=tmp_path)
    rates = (
        r"batched " + NUM + " texts/s, one request per text " + NUM + " texts/s, ratio " + NUM + "x"
    )
    positive(figures(rates, out))
    positive(figures(r"interchange, 2 pairs .+: " + NUM + " pairs/s", out))
    assert re.search(r"^peak GPU memory", out, re.M), out


def test_intervention_layer_sweep(tmp_path: Path, smol_url: str) -> None:
    out = run(
        "intervention_layer_sweep.py",
        *("--url", smol_url, "--pairs", "2", "--layers", "2"),
        tmp=tmp_path,
    )
    rows = figures(r"^layer +(\d+): +(\d+)/(\d+)", out, 2)
    assert [r[0] for r in rows] == [0, 1] and all(r[1] <= r[2] == 2 for r in rows), out
    assert re.search(r"^layers where at least half flip: \[[\d, ]*\]$", out, re.M), out


def test_judge(tmp_path: Path, backbone_url: str) -> None:
    out = run("judge.py", "--url", backbone_url + "/v1", "--n", "1", "--tests", "1", tmp=tmp_path)
    positive(
        figures(
            r"^(?:forced choice|generate).+? +1 tests +" + NUM + " s +" + NUM + " tests/s", out, 3
        )
    )
    positive(figures(r"^ratio .+: " + NUM + "x$", out, 2))
    [[same, k, ceiling]] = figures(
        r"same verdict batched vs single (\d+)/(\d+); ceiling " + NUM, out
    )
    assert k == 1 and same <= k and ceiling <= 1


@pytest.mark.slow
def test_omp_spin(tmp_path: Path, backbone_url: str) -> None:
    """The engine in fresh processes, on the weights' cache the shared backbone server filled."""
    out = run("omp_spin.py", "--smoke", "--rounds", "1", tmp=tmp_path)
    figures(r"^alone +round 1 .+judge +" + NUM + " s  generate +" + NUM + " s", out, 2)
    medians = (
        r"^alone: (?:judge|generate): median default "
        + NUM
        + " s, spin 1000 "
        + NUM
        + " s, ratio "
        + NUM
    )
    positive(figures(medians, out, 2))


@pytest.mark.model_server
@pytest.mark.slow
def test_sae(tmp_path: Path) -> None:
    # its own server on the tiny random model: the SAE it times is given at the server's start
    out = run("sae.py", "--texts", "4", "--batch", "2", "--rounds", "1", tmp=tmp_path)
    positive(figures(r"^in-process: +" + NUM + " texts/s", out))
    positive(figures(r"^service: +" + NUM + " texts/s", out))
    positive(figures(r"^ratio service / in-process: " + NUM, out))


@pytest.mark.model_server
@pytest.mark.slow
def test_device_check(tmp_path: Path) -> None:
    """The GPU device check in its CPU form (scripts/device_check.sh runs it on a GPU): tiny random
    models served from the script's process, half precision on the CPU, the operator's command in
    a process of its own; every step ran, printed its line and is in the JSON, and the
    interventions changed the outputs they should and only those."""
    from interp_harness.function_store.circuits import build
    from interp_harness.model_services.intervention.compiled import save_npz

    weights = tmp_path / "circuits"  # one compiled circuits model, as device_wheelhouse.sh copies
    weights.mkdir()
    built = build.build_target("circuits-lib/reverse/0", build.BuildOptions())
    save_npz(weights / "reverse.npz", built.merged.arrays, built.merged.meta)
    out_dir = tmp_path / "out"
    out = run(
        "device_check.py",
        *("--out", str(out_dir), "--tiny", "--circuits-weights", str(weights)),
        tmp=tmp_path,
        timeout=600,
    )
    doc = json.loads((out_dir / "device_check.json").read_text())
    assert doc["status"] == "complete" and "no hub" in doc["weights"]
    steps = {s["name"]: s for s in doc["steps"]}
    models = [
        f"model {m} cpu {dt}"
        for m in ("gpt2-tiny-random", "llama-tiny-random")
        for dt in ("float16", "bfloat16")
    ]
    baselines = [
        f"model {m} cpu float32 baseline" for m in ("gpt2-tiny-random", "llama-tiny-random")
    ]
    assert list(steps) == [
        "machine",
        *models,
        "sae-lens",
        "sae-featurizer",
        "circuits",
        "cli",
        *baselines,
        "ratios",
    ]
    for s in doc["steps"]:  # one printed line per step, the one the JSON keeps
        assert re.search("^" + re.escape(s["line"]) + "$", out, re.M), s["name"]
        assert s["status"] == "ok", (s["name"], s["line"], s["cause"])
    for name in models + baselines:
        f = steps[name]["figures"]
        assert f["dtype"] == name.split()[3] and f["device"] == "cpu"
        assert [x["batch"] for x in f["interchange"]] == [1, 4, 8]
        positive(
            [[x["examples_per_s"] for x in f["interchange"]], [f["activations"]["texts_per_s"]]]
        )
        assert f["changed"] == {"examples": 13, "changed": 13}  # another text's state: changed
        assert f["self_interchange_max_diff"] == 0  # its own state written back: nothing
        assert "peak_gpu_mib" not in f
    sae = steps["sae-lens"]["figures"]
    assert sae["sae_device"] == sae["model_device"] == "cpu"
    assert sae["max_diff_vs_sae_lens"] < 1e-4 and sae["latents_fired"] > 0
    assert steps["sae-featurizer"]["figures"]["changed"] == 8
    circuits = steps["circuits"]["figures"]
    assert (circuits["models"], circuits["device"]) == (1, "cpu")
    assert circuits["same_as_cpu"] == circuits["inputs"] == 64
    assert circuits["ablation_changed"] > 0  # every component zeroed: the outputs change
    cli = steps["cli"]["figures"]
    assert cli["command"].startswith(
        "harness intervention serve --model gpt2-tiny-random --device cpu --dtype float16"
    )
    assert (cli["device"], cli["dtype"], cli["changed"]) == ("cpu", "float16", 8)
    ratios = steps["ratios"]["figures"]["ratios"]
    assert [(r["model"], r["dtype"]) for r in ratios] == [
        (m, dt) for m in ("gpt2-tiny-random", "llama-tiny-random") for dt in ("float16", "bfloat16")
    ]
    positive([[x["ratio"] for x in r["interchange"]] + [r["activations"]] for r in ratios])
    assert re.search(r"^result: .+device_check\.json \(12 steps, 0 failed\)$", out, re.M), out


@pytest.mark.slow
def test_main_job(tmp_path: Path, backbone_url: str, needs_bwrap: None) -> None:
    """One main job of this tree, samples of one target per family, on the shared backbone server
    (a baseline's worktree run would double the time: the script's other path)."""
    out = run(
        "main_job.py",
        *("--rounds", "1", "--backbone-url", backbone_url),
        tmp=tmp_path,
        # main_job.sh's operator settings, at their smallest: the entity and relation runs
        # (SmolLM2 generating for every probe) are most of its time
        env={
            "MAIN_JOB_N": "1",
            "MAIN_JOB_WORDS_N": "1",
            "HARNESS_JUDGE_CEILING_TESTS": "1",
            "HARNESS_BACKBONE_RELATION_MAX_TOKENS": "4",
        },
        timeout=900,
    )
    # the report's summary line read back (main_job.sh's output as main_job.py parses it)
    rows = figures(r"^round 1  this +" + NUM + r" s  report: (\d+) rows, (\d+) errors$", out, 1)
    assert all(r[1] > 0 for r in rows), out
    positive(figures(rf"^median: this tree {NUM} s \(no baseline: --base\)$", out))


# each test in an xdist group of its own: the suite groups a file's tests on one worker (for module
# fixtures, none here), which would run these minutes of subprocesses one after another
for _name, _test in list(globals().items()):
    if _name.startswith("test_"):
        pytest.mark.xdist_group(f"benchmarks-{_name}")(_test)
