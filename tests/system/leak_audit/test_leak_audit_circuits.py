"""Circuits targets: nothing of a target's compile reaches the agent, a page, an export or the lab.

The truth is planted as canaries: each target's canary, the asked program's description, its
tracr variable names (the roles' labels, `sort_35`), its residual labels (`tokens:compiler_bos`,
`indices:0`), the distractors' programs and the paths of the weights and truth files. A real
`harness run` of the scripted agent (bubblewrap target services, SQLite) in protocol modes text
and tools must show none of them in what the agent reads, in the web episode page an anonymous
viewer gets, or in either export; the lab's `target` module is written from the declared
commands alone."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from support.orch_helpers import Server

from interp_harness.function_store.circuits import build as cb
from interp_harness.function_store.circuits.commands import COMMANDS
from interp_harness.function_store.models import make_canary
from interp_harness.harness.lab.api import module_source
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

ROOT = Path(__file__).resolve().parents[3]
BUILD = cb.BuildOptions(programs=["sort", "frac_prevs"], gen_count=1, gen_seed=0)


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


def _secrets(truths: list[cb.CircuitTruth]) -> list[str]:
    out = []
    for t in truths:
        b = cb.build_target(t.id, BUILD)  # the same draws (tracr numbers its labels anew)
        assert b.truth.circuit == t.circuit
        labels = [x for x in b.asked.residual_labels if ":" in x]  # `one` is a plain word
        names = {n for role in t.roles.values() for n in re.findall(r"\b[a-z_]+_\d+\b", role)}
        npz = cb.root() / t.dataset / f"{cb.safe(t.id)}.npz"
        out += [make_canary(t.id), t.program, *t.distractors, *labels, *names, str(npz)]
        out += [str(npz.parent), "compiler_bos", "compiler_pad", "selector_width"]
    # the planted canaries are the kinds the audit looks for (and the pattern finds them)
    assert any(":" in s for s in out) and any(TRACR_LABEL.search(s) for s in out)
    return [s for s in out if s]


# any tracr label, whatever number the compile gave it, and any residual direction's label
TRACR_LABEL = re.compile(
    r"\b(?:map|sequence_map|aggregate|selector_width|select|target_pos|sort|frac_prevs|hist"
    r"|length|categorical|numerical)_\d+\b|\b(?:tokens|indices):[^\s\"]"
)


def _leaks(secrets: list[str], text: str) -> list[str]:
    return [s for s in secrets if s in text] + TRACR_LABEL.findall(text)


@pytest.mark.slow
def test_no_truth_reaches_the_agent_a_page_an_export_or_the_lab(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_JUDGE")} | {
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'h.db'}",
        "HARNESS_HOME": str(tmp_path),
        "HARNESS_CACHE_DIR": str(cache),
        "HARNESS_SANDBOX": "bwrap",
    }
    os.environ["HARNESS_CACHE_DIR"] = str(cache)  # this process reads the same build
    try:
        truths = [t for ts in cb.build(BUILD).values() for t in ts]
        secrets = _secrets(truths)
    finally:
        del os.environ["HARNESS_CACHE_DIR"]

    # the lab's module: the declared commands' words, nothing per target
    lab = module_source(COMMANDS)
    assert not _leaks(secrets, lab)

    store = Store(make_engine(env["DATABASE_URL"]))
    runs = {}
    for mode in ("default", "tools"):
        args = ["run", "--agent", "scripted-circuits", "-d", "circuits-lib", "-n", "1", "--json"]
        runs[mode] = json.loads(_harness(env, *args, "--mode", mode))
        assert runs[mode]["status"] == "completed", runs[mode]
    read_all = []
    for mode, run in runs.items():
        eps = store.episodes.of_run(run["id"])
        assert eps
        for ep in eps:
            msgs = store.episodes.messages(ep.id)
            read = "\n".join(m.content or "" for m in msgs if m.role != "assistant")
            assert "vocabulary" in read  # the task reply was read: the audit saw real replies
            read_all.append(read)
            for c in store.episodes.target_calls(ep.id):
                read_all.append(json.dumps(c.model_dump(mode="json"), default=str))
        if mode == "tools":
            names = {c.name for ep in eps for c in store.episodes.tool_calls(ep.id)}
            assert {"task", "ablate", "submit_answer"} <= names, names
    seen = "\n".join(read_all)
    assert not _leaks(secrets, seen)

    run_id = runs["default"]["id"]
    exported = _harness(env, "export", run_id)
    out = tmp_path / "run.json"
    _harness(env, "export", run_id, "--format", "inspect", "-o", str(out))
    exported += out.read_text(encoding="utf-8")
    assert run_id in exported
    assert not _leaks(secrets, exported)

    ep = store.episodes.of_run(run_id)[0]
    # a token configured: the request below is an anonymous viewer's (the operator's pages show
    # the truth, by design)
    srv = Server(env | {"HARNESS_API_TOKENS": "leak-audit-token"}, tmp_path / "api.log")
    srv.start(timeout=120)
    try:
        html = httpx.get(f"{srv.url}/ui/episodes/{ep.id}", timeout=60).text
    finally:
        srv.stop()
    assert "vocabulary" in html  # the transcript is on the page
    assert not _leaks(secrets, html)
