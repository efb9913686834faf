"""`inspect eval interp_harness/find` through Inspect's own CLI (a subprocess): samples, prompts,
tool results against the sandboxed target service, the store's counters, no ground truth in the
.eval, nothing left behind after the eval; the text protocol against the project's own backbone
server (provider openai-api); `inspect eval-set` retrying a failed attempt."""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import inspect_scripts  # the scripted solvers' inputs and answers
import pytest
from inspect_ai.log import EvalLog, read_eval_log
from support.inspect_cli import SCRIPTS, inspect_cli, logs

from interp_harness.agents.protocol import format_reply
from interp_harness.evaluator.api import EpisodeStats, ScoreResult
from interp_harness.evaluator.scoring import ScoringContext, score_episode
from interp_harness.function_store.benchmark import benchmark
from interp_harness.function_store.models import Target
from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.episode import prompts
from interp_harness.harness.inspect_tasks.importer import import_eval_log
from interp_harness.harness.runs.report import build_report
from interp_harness.harness.sandbox.code_runner import run_in_sandbox
from interp_harness.harness.settings import Settings
from interp_harness.harness.store.repo import open_store
from interp_harness.harness.target_client import make_target_client

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.usefixtures("needs_bwrap")


@pytest.fixture(scope="module")
def catalog():
    return CatalogCache().get(0)


@pytest.fixture
def sandbox_tmp() -> Iterator[Path]:
    """A private TMPDIR for the eval subprocess: its sandbox files and ephemeral store live there,
    so what it leaves behind is visible (a short path: sandbox sockets need one)."""
    d = Path(tempfile.mkdtemp(prefix="ih-", dir="/tmp"))
    yield d
    subprocess.run(["rm", "-rf", str(d)], check=False)


def expected_replies(targets: list[Target], inputs: list[str], mode: str) -> dict[str, str]:
    """What the sandboxed target service answers, formatted as the harness formats it: computed
    here with a target client of this process, not through the eval's solver."""

    async def go() -> dict[str, str]:
        client = make_target_client(Settings(), CatalogCache())
        try:
            out = {}
            for t in targets:
                outputs = await client.call(t.id, inputs)
                out[t.id] = format_reply(outputs, mode, decimals=benchmark(t.family).reply_decimals)
            return out
        finally:
            await client.aclose()

    return asyncio.run(go())


ENV_CANARIES = {
    "OPENAI_API_KEY": "sk-canary-env-7f3a91",
    "HARNESS_JUDGE_API_KEY": "canary-judge-key-5c2e",
}


def assert_no_ground_truth(path: Path, targets: list[Target]) -> None:
    """The canary audit over the whole .eval: every member unzipped, raw bytes (the environment
    canaries too)."""
    with zipfile.ZipFile(path) as z:
        blob = b"".join(z.read(n) for n in z.namelist())
    for secret in ENV_CANARIES.values():
        assert secret.encode() not in blob, f"an environment secret in {path.name}"
    for t in targets:
        secrets = [t.hidden.canary, t.hidden.code or "", json.dumps(t.hidden.spec)]
        for s in filter(None, secrets):
            assert s.encode() not in blob, f"ground truth of {t.id} in {path.name}"


def assert_nothing_left(tmp: Path) -> None:
    """No sandbox directory, lock, ephemeral store or process of the eval remains."""
    roots = list(tmp.glob("interp-harness-*"))
    left = [p for r in roots if r.is_dir() for p in r.iterdir()]
    assert not left, f"left behind: {left}"
    assert not list(tmp.glob("interp-harness-inspect-*"))
    for pid, (_, cmd) in processes().items():
        assert str(tmp) not in cmd, f"process {pid} of the eval still runs: {cmd}"


def processes() -> dict[int, tuple[int, str]]:
    """Every live process: pid -> (parent pid, command line)."""
    out = {}
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{p}/stat").read_text()
            cmd = Path(f"/proc/{p}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        out[int(p)] = (int(stat.rsplit(")", 1)[1].split()[1]), cmd)
    return out


def descendants(pid: int) -> set[int]:
    procs, found = processes(), {pid}
    while grown := {p for p, (ppid, _) in procs.items() if ppid in found} - found:
        found |= grown
    return found - {pid}


def tool_results(sample) -> list[str]:
    return [m.text for m in sample.messages if m.role == "tool" and m.function != "submit_answer"]


@pytest.mark.slow
def test_find_tools_with_a_user_solver(tmp_path: Path, sandbox_tmp: Path, catalog) -> None:
    """`--solver` replaces react: the tools come with the task (setup), call the sandboxed
    targets and return exactly the harness's reply; counters and the answer are in the store."""
    inspect_cli(
        [
            "eval",
            "interp_harness/find",
            "--solver",
            f"{SCRIPTS}@scripted_calls",
            "-T",
            "dataset=find-gen",
            "-T",
            "family=numeric",
            "-T",
            "limit=2",
            "--model",
            "mockllm/model",
        ],
        sandbox_tmp,
        tmp_path,
        ENV_CANARIES,  # secrets of the eval process's environment: never in the log
    )
    assert_nothing_left(sandbox_tmp)
    log = logs(tmp_path)["interp_harness/find"]
    assert log.status == "success"
    assert log.eval.model == "mockllm/model"
    assert log.eval.task_args["family"] == "numeric" and log.eval.task_args["limit"] == 2
    samples = log.samples or []
    assert len(samples) == 2 and len({s.id for s in samples}) == 2
    targets = [catalog.get(str(s.id)) for s in samples]
    expected = expected_replies(targets, inspect_scripts.INPUTS, "default")
    note = prompts.tools_note(benchmark("numeric").commands)
    for s, t in zip(samples, targets, strict=True):
        assert s.target == "" and s.metadata == {
            "dataset": "find-gen",
            "family": "numeric",
            "variant": t.variant,
        }
        assert s.input == prompts.task_prompt(t.public.prompt_family) + note
        assert s.messages[0].role == "system"
        assert s.messages[0].text == prompts.TOOLS_SYSTEM_PROMPT
        assert tool_results(s) == [expected[t.id]]
        assert s.store["interp_harness:target_calls"] == 1
        assert s.store["interp_harness:inputs"] == len(inspect_scripts.INPUTS)
        assert s.store["interp_harness:answer"].startswith("[DESCRIPTION]: returns its input")
        assert s.error is None
    assert_no_ground_truth(next(tmp_path.glob("*.eval")), targets)
    assert_scored_as_our_scorer_and_imported(log, targets, tmp_path)


def assert_scored_as_our_scorer_and_imported(log: EvalLog, targets: list[Target], d: Path) -> None:
    """Each sample's score equals `score_episode` on the same answer and counters (called here,
    not through the eval); the log imported into a store gives a `harness report` whose rows
    equal Inspect's own metrics of that log (mean and interval)."""

    async def direct() -> dict[str, list[ScoreResult]]:
        client = make_target_client(Settings(), CatalogCache())
        ctx = ScoringContext(call_target=client.call, code_runner=run_in_sandbox)
        try:
            out = {}
            for s, t in zip(log.samples or [], targets, strict=True):
                stats = EpisodeStats(
                    target_calls=s.store["interp_harness:target_calls"],
                    inputs=s.store["interp_harness:inputs"],
                    rounds=s.store.get("interp_harness:rounds", 0),
                )
                out[t.id] = await score_episode(t, s.output.completion, stats, ctx)
            return out
        finally:
            await client.aclose()

    ours = asyncio.run(direct())
    for s in log.samples or []:
        got = {k: v for k, v in s.scores["interp_harness"].value.items() if not math.isnan(v)}
        assert got == {r.metric: r.value for r in ours[str(s.id)] if r.value is not None}
    store = open_store(f"sqlite:///{d / 'imported.db'}")
    run = store.runs.get(import_eval_log(store, log))
    assert run is not None
    rows = {r["metric"]: r for r in build_report(store, run).report["rows"]}
    inspect_metrics = {
        e.name: {k.removeprefix("interp_harness/"): m.value for k, m in e.metrics.items()}
        for e in log.results.scores  # type: ignore[union-attr]
    }
    assert rows["code_success"]["scored"] == len(targets)
    for metric, row in rows.items():
        m = inspect_metrics[metric]
        if row["value"] is None:  # nothing scored (e.g. domain IoU of clean functions)
            assert math.isnan(m["mean"])
            continue
        got = [row[k] if row[k] is not None else math.nan for k in ("value", "ci_low", "ci_high")]
        assert got == pytest.approx([m["mean"], m["ci_low"], m["ci_high"]], nan_ok=True)


@pytest.mark.slow
def test_a_killed_eval_leaves_nothing_after_the_sweep(tmp_path: Path, sandbox_tmp: Path) -> None:
    """`inspect eval` killed (SIGKILL: no hook, no atexit) while a target service runs: the
    sandboxed services die with it (bwrap --die-with-parent), and what is left on disk is removed
    by the sweep that the next eval's first call runs (`service_pool` -> `sweep_stale`)."""
    marker = tmp_path / "called"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "TMPDIR": str(sandbox_tmp),
        "INTERP_HARNESS_TEST_MARKER": str(marker),
    }
    args = ["eval", "interp_harness/find", "--solver", f"{SCRIPTS}@hangs_after_a_call"]
    args += ["-T", "family=numeric", "-T", "limit=1", "--model", "mockllm/model"]
    proc = subprocess.Popen(
        ["inspect", *args, "--log-dir", str(tmp_path / "logs"), "--display", "none"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while not marker.exists():
            assert proc.poll() is None, "the eval ended before its first call"
            assert time.monotonic() < deadline, "no target call within 300 s"
            time.sleep(0.2)
        services = descendants(proc.pid)
        assert services, "no target service of the eval was running"
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 30
    while any(p in processes() for p in services):
        assert time.monotonic() < deadline, "the target services outlived the killed eval"
        time.sleep(0.2)
    root = next(sandbox_tmp.glob("interp-harness-*"))
    assert list(root.iterdir()), "the killed eval left nothing to sweep: the test proves nothing"
    sweep = "from interp_harness.harness.sandbox.workdir import sweep_stale; sweep_stale()"
    subprocess.run([sys.executable, "-c", sweep], env=env, cwd=ROOT, check=True, timeout=60)
    assert_nothing_left(sandbox_tmp)


@pytest.mark.slow
def test_find_default_react_with_mockllm(
    tmp_path: Path, sandbox_tmp: Path, catalog, tiktoken_cache: Path
) -> None:
    """`inspect eval interp_harness/find --model mockllm/model` as a user types it: Inspect's
    react agent with our tools, the mock model's fixed reply (no tool call) until the round
    budget ends the sample; scored by our scorer; the log imports to the same report."""
    inspect_cli(
        ["eval", "interp_harness/find", "--model", "mockllm/model"]
        + ["-T", "dataset=find-gen", "-T", "family=numeric", "-T", "limit=2", "-T", "max_rounds=2"],
        sandbox_tmp,
        tmp_path,
        {"TIKTOKEN_CACHE_DIR": str(tiktoken_cache)},
    )
    assert_nothing_left(sandbox_tmp)
    log = logs(tmp_path)["interp_harness/find"]
    assert log.status == "success"
    samples = log.samples or []
    assert len(samples) == 2
    for s in samples:
        assert s.error is None
        assert s.store["interp_harness:end_reason"] == "rounds"
        assert s.store["interp_harness:target_calls"] == 0
        assert sum(m.role == "assistant" for m in s.messages) == 2
    targets = [catalog.get(str(s.id)) for s in samples]
    assert_scored_as_our_scorer_and_imported(log, targets, tmp_path)
    store = open_store(f"sqlite:///{tmp_path / 'imported.db'}")
    (run,) = store.runs.latest()
    assert {e.status for e in store.episodes.of_run(run.id)} == {"budget_exhausted"}


@pytest.mark.slow
def test_find_react_and_text_protocols_on_strings(
    tmp_path: Path, sandbox_tmp: Path, catalog
) -> None:
    """The default solver (react) and the text protocol (the harness's episode loop) with
    Inspect's mockllm scripted: one eval process, two tasks."""
    inspect_cli(
        [
            "eval",
            f"{SCRIPTS}@find_react_scripted",
            f"{SCRIPTS}@find_text_scripted",
            "-T",
            "family=strings",
            "-T",
            "limit=1",
            "--model",
            "mockllm/model",
            "--no-score",  # strings' unit tests need a judge; test_scoring.py scores
        ],
        sandbox_tmp,
        tmp_path,
    )
    assert_nothing_left(sandbox_tmp)
    found = logs(tmp_path)
    react, text = found["find_react_scripted"], found["find_text_scripted"]
    (rs,) = react.samples or []
    (ts,) = text.samples or []
    t = catalog.get(str(rs.id))
    assert ts.id == rs.id and t.family == "strings"
    # react: the tool result is the harness's reply; the submitted answer is the completion
    assert tool_results(rs) == [expected_replies([t], inspect_scripts.INPUTS, "default")[t.id]]
    answer = rs.store["interp_harness:answer"]
    assert rs.output.completion == answer and answer.startswith("[DESCRIPTION]:")
    assert rs.store["interp_harness:rounds"] == 2
    # text: FIND's loop; the reply to the PYTHON(...) command is FIND's text for the outputs
    assert ts.input == prompts.task_prompt(t.public.prompt_family)
    roles = [m.role for m in ts.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant"]
    assert ts.messages[2].text == inspect_scripts.TEXT_COMMAND
    assert ts.messages[3].text == expected_replies([t], ["3", "-2.5", "7"], "find-compat")[t.id]
    assert ts.output.completion == inspect_scripts.TEXT_ANSWER
    assert ts.store == {
        "interp_harness:target_calls": 1,
        "interp_harness:inputs": 3,
        "interp_harness:rounds": 2,
        "interp_harness:answer": inspect_scripts.TEXT_ANSWER,
    }
    for path in tmp_path.glob("*.eval"):
        assert_no_ground_truth(path, [t])


@pytest.mark.slow
def test_find_text_against_the_project_backbone_server(
    tmp_path: Path,
    sandbox_tmp: Path,
    backbone_url: str,  # noqa: F811 - the fixture
) -> None:
    """Inspect's openai-api provider against `harness backbone serve` (SmolLM2): protocol text
    (the model has no tool parser), one target, two rounds."""
    served = httpx.get(f"{backbone_url}/v1/models").json()["data"][0]["id"]
    inspect_cli(
        [
            "eval",
            "interp_harness/find",
            "-T",
            "family=numeric",
            "-T",
            "limit=1",
            "-T",
            "protocol=text",
            "-T",
            "max_rounds=2",
            "--model",
            f"openai-api/backbone/{served}",
            "--max-tokens",
            "24",
            "--no-score",  # the run path; test_scoring.py scores
        ],
        sandbox_tmp,
        tmp_path,
        {"BACKBONE_BASE_URL": f"{backbone_url}/v1", "BACKBONE_API_KEY": "unused"},
    )
    log = logs(tmp_path)["interp_harness/find"]
    assert log.status == "success", log.error
    assert log.eval.model == f"openai-api/backbone/{served}"
    (s,) = log.samples or []
    assert s.error is None
    assert [m.role for m in s.messages][:3] == ["system", "user", "assistant"]
    assert s.store["interp_harness:rounds"] >= 1
    if s.output.completion == "":  # no [DESCRIPTION] within the cap: the loop's round budget
        assert s.store["interp_harness:end_reason"] == "rounds"
    assert sum(u.output_tokens for u in log.stats.model_usage.values()) > 0


@pytest.mark.slow
def test_eval_set_retries_a_failed_attempt(tmp_path: Path, sandbox_tmp: Path) -> None:
    marker = sandbox_tmp / "failed-once"
    inspect_cli(
        [
            "eval-set",
            "interp_harness/find",
            "--solver",
            f"{SCRIPTS}@fails_once",
            "-T",
            "family=numeric",
            "-T",
            "limit=1",
            "--model",
            "mockllm/model",
            "--retry-attempts",
            "2",
            "--retry-wait",
            "0",
            "--no-score",
        ],
        sandbox_tmp,
        tmp_path,
        {"INTERP_HARNESS_TEST_MARKER": str(marker)},
    )
    assert marker.exists()  # the first attempt ran and failed
    found = list(tmp_path.glob("*.eval"))
    statuses = sorted(read_eval_log(str(f), header_only=True).status for f in found)
    assert "success" in statuses
    final = [read_eval_log(str(f)) for f in found]
    ok = next(x for x in final if x.status == "success")
    assert ok.eval.task == "interp_harness/find" and len(ok.samples or []) == 1


def _descendants(pid: int) -> list[str]:
    """The command lines of every live descendant of `pid`."""
    procs = processes()
    out, todo = [], [pid]
    while todo:
        cur = todo.pop()
        for child, (ppid, cmd) in procs.items():
            if ppid == cur:
                todo.append(child)
                out.append(cmd)
    return out


@pytest.mark.slow
def test_services_and_episode_store_stop_when_the_run_ends(
    tmp_path: Path, sandbox_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In one process (as `inspect eval` is): after `eval()` returns, the run-end hook has stopped
    the sandboxed target services and removed the ephemeral episode store, although the process
    goes on (atexit would only clean up at its end). Also the budgets `max_target_calls` and
    `max_rounds`."""
    from inspect_ai import eval as inspect_eval

    monkeypatch.setattr(tempfile, "tempdir", str(sandbox_tmp))  # where the episode store goes
    logs_ = inspect_eval(
        [
            inspect_scripts.find_react_scripted("numeric", 1),
            inspect_scripts.find_text_scripted("numeric", 1),
            inspect_scripts.find_call_budget(),
            inspect_scripts.find_react_one_round(),
        ],
        model="mockllm/model",
        log_dir=str(tmp_path),
        display="none",
    )
    assert [x.status for x in logs_] == ["success"] * 4
    assert all(x.samples and x.samples[0].store["interp_harness:target_calls"] == 1 for x in logs_)
    # max_target_calls: the second call did not run; the solver is told so
    (budget,) = logs_[2].samples or []
    calls = [m for m in budget.messages if m.role == "tool" and m.function == "call_function"]
    assert len(calls) == 2 and calls[0].error is None and calls[1].text == ""
    assert (
        calls[1].error is not None
        and "target-call budget exhausted: 1 calls" in calls[1].error.message
    )
    assert budget.store["interp_harness:end_reason"] == "target_calls"
    # max_rounds: react stops after the capped round without an answer, as the harness does
    (capped,) = logs_[3].samples or []
    assert capped.output.completion == "" == capped.store["interp_harness:answer"]
    assert capped.store["interp_harness:rounds"] == 1
    assert capped.store["interp_harness:end_reason"] == "rounds"
    left = [
        c
        for c in _descendants(os.getpid())
        if "bwrap" in c or "interp_harness.function_store.service" in c
    ]
    assert not left, left
    assert not list(sandbox_tmp.glob("interp-harness-inspect-*"))


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"dataset": "ravel"}, "unknown dataset 'ravel'; this task has: find-v1, find-gen"),
        ({"family": "neurons"}, "unknown family 'neurons' for dataset 'find-gen'"),
        ({"protocol": "native"}, "unknown protocol 'native'; one of: tools, text"),
        ({"text_mode": "tools"}, "unknown text_mode 'tools'"),
        ({"max_rounds": 0}, "max_rounds: Input should be greater than or equal to 1"),
        ({"limit": 0}, "limit: Input should be greater than or equal to 1"),
    ],
)
def test_bad_task_parameters_are_refused_with_what_is_allowed(params, says) -> None:
    from interp_harness._registry import find
    from interp_harness.harness.inspect_tasks.task import TaskParameterError

    with pytest.raises(TaskParameterError, match=re.escape(says)):
        find(**params)
