"""SAE latents end to end through `harness run` (CLI, bubblewrap target services, SQLite) on the
tiny model's built SAE: every report row scored with its ceiling beside it, the floor run next to
the agent, the same calls and scores in protocol mode `tools`, and nothing that identifies the
latent in what the agent reads; then `inspect eval interp_harness/sae` through Inspect's CLI."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
from support import HARNESS_CLI
from support.inspect_cli import SCRIPTS, inspect_cli, logs
from support.orch_helpers import Server

from interp_harness.function_store.models import make_canary
from interp_harness.function_store.sae.benchmark import BENCHMARK
from interp_harness.function_store.sae.catalog import SAECatalog
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

ROOT = Path(__file__).resolve().parents[2]
ROWS = {r.metric for r in BENCHMARK.report_rows}
CANARIES = {
    "OPENAI_API_KEY": "sk-canary-sae-91c4",
    "ANTHROPIC_API_KEY": "canary-sae-anthropic-3b7e",
}


def _env(tmp: Path, cache: Path, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_JUDGE")}
    return env | {
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": f"sqlite:///{tmp / 'h.db'}",
        "HARNESS_HOME": str(tmp),
        "HARNESS_CACHE_DIR": str(cache),
        "HARNESS_INTERVENTION_URL": url,
        "HARNESS_SANDBOX": "bwrap",
        "HARNESS_SERVICE_CALL_TIMEOUT_S": "300",
        **CANARIES,  # operator secrets in the environment: never in a reply, page or report
    }


def _harness(env: dict[str, str], *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "interp_harness.harness.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc.stdout


def _secrets(built: SAECatalog) -> list[str]:
    out = [built.sae, built.hook_name, "llama-tiny-random", *CANARIES.values()]
    for r in built.latents:
        tid = f"sae/{built.model}/{built.sae}/{r.latent}"
        out += [tid, make_canary(tid), r.reference]
    return out


def test_run_report_tools_mode_and_leak_audit(
    built: SAECatalog, sae_cache: Path, sae_llama_url: str, tmp_path: Path
) -> None:
    env = _env(tmp_path, sae_cache, sae_llama_url)
    run = json.loads(
        _harness(env, "run", "--agent", "scripted-sae", "-d", "sae", "-n", "2", "--json")
    )
    assert run["status"] == "completed", run
    report_text = _harness(env, "report", run["id"], "--json")
    assert not [c for c in CANARIES.values() if c in report_text]
    report = json.loads(report_text)
    rows = {(r["agent"], r["metric"]): r for r in report["report"]["rows"] if r["family"] == "sae"}
    for agent in ("scripted-sae", "sae-frequent-tokens"):  # the agent and the family's floor
        for metric in ROWS:
            row = rows[(agent, metric)]
            assert row["errors"] == {} and row["scored"] >= 1, row
            # the firing share describes the test texts: no reference scores it, nothing to beat
            described = metric == "observational_firing_share"
            assert row["value"] is not None, row
            assert (row["judge_ceiling"] is None) == described, row
            assert row["baseline"] is None or not described, row
            if described:
                continue
            correlation = metric.startswith("simulation_") or metric.endswith("_mcc")
            low = -1.0 if correlation else 0.0
            assert low <= row["value"] <= 1.0 and low <= row["judge_ceiling"] <= 1.0, row

    store = Store(make_engine(env["DATABASE_URL"]))
    _episode_page_shades_tokens(env, store, run["id"], tmp_path)
    secrets = _secrets(built)
    seen = {}
    for mode in ("default", "tools"):
        args = ["run", "--agent", "scripted-sae", "-d", "sae", "-n", "1", "--no-floor", "--json"]
        run_id = json.loads(_harness(env, *args, "--mode", mode))["id"]
        [ep] = store.episodes.of_run(run_id)
        msgs = store.episodes.messages(ep.id)
        read = "\n".join(m.content or "" for m in msgs if m.role != "assistant")
        assert not [s for s in secrets if s in read]
        seen[mode] = (
            [c.inputs for c in store.episodes.target_calls(ep.id)],
            sorted((s.metric, s.status, s.value) for s in store.scores.of_episodes([ep.id])),
        )
        if mode == "tools":
            names = {c.name for c in store.episodes.tool_calls(ep.id)}
            assert names == {"read_activations", "submit_answer"}, names
    assert seen["default"] == seen["tools"]
    assert len(seen["default"][0]) >= 4  # the baseline's probes, a chunk a call


def _episode_page_shades_tokens(env: dict[str, str], store: Store, run_id: str, tmp: Path) -> None:
    """The web episode page (the real API server on the run's store) shows each reply's tokens
    shaded by activation and the simulation panel: the family's panels, declared in its
    record."""
    ep = next(e for e in store.episodes.of_run(run_id) if e.status == "completed")
    srv = Server(env, tmp / "api.log").start(timeout=120)
    try:
        html = httpx.get(f"{srv.url}/ui/episodes/{ep.id}", timeout=60).text
    finally:
        srv.stop()
    shades = re.findall(r'class="act" style="background: rgba\(230, 120, 0, ([0-9.]+)\)"', html)
    assert shades and max(map(float, shades)) == 1.0  # each text's max is fully shaded
    # the simulation panel: the top-and-random examples, true against simulated, per token
    assert "Simulated vs true activations" in html and "<strong>lexical</strong>" in html
    [sim] = [s for s in store.scores.of_episodes([ep.id]) if s.metric == "simulation_top_random"]
    texts = sim.details["per_text"]
    assert texts and html.count('<table class="simulation"') == len(texts) == sim.details["texts"]
    assert not [c for c in CANARIES.values() if c in html]


def test_inspect_task_with_a_scripted_solver(
    built: SAECatalog, sae_cache: Path, sae_llama_url: str, tmp_path: Path
) -> None:
    env = _env(tmp_path, sae_cache, sae_llama_url)
    env.pop("DATABASE_URL")  # the eval keeps no store of ours
    args = ["eval", "interp_harness/sae", "--solver", f"{SCRIPTS}@calls_each_tool_once"]
    args += ["-T", "limit=1", "--model", "mockllm/model"]
    inspect_cli(args, Path(env.get("TMPDIR", "/tmp")), tmp_path / "logs", env)
    log = logs(tmp_path / "logs")["interp_harness/sae"]
    assert log.status == "success", log.error
    (s,) = log.samples or []
    assert s.metadata == {"dataset": "sae", "family": "sae", "variant": "llama-tiny-random"}
    tool_results = [m.text for m in s.messages if m.role == "tool"]
    assert any("[max " in t for t in tool_results), tool_results
    read = "\n".join(m.text for m in s.messages if m.role != "assistant")
    assert not [x for x in _secrets(built) if x in read]
    score = s.scores["interp_harness"]
    assert ROWS <= set(score.value), score.value


def test_preflight_refuses_an_sae_the_service_does_not_serve(
    built: SAECatalog, sae_llama_url: str, tmp_path: Path
) -> None:
    """A catalog whose SAE the service lacks: refused before anything starts, naming the SAE."""
    cache = tmp_path / "cache"
    other = built.model_copy(update={"sae": "not-served"})
    folder = cache / "data" / "sae" / "not-served"
    folder.mkdir(parents=True)
    (folder / "harness_catalog.json").write_text(other.model_dump_json())
    env = _env(tmp_path, cache, sae_llama_url)
    proc = subprocess.run(
        [*HARNESS_CLI, "run", "--agent", "scripted-sae", "-d", "sae"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode != 0
    assert "targets of SAE 'not-served' need an intervention service serving it" in proc.stderr
    assert f"the service serves {built.sae}" in proc.stderr
