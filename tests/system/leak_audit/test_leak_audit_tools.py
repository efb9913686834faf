"""The leak audit in protocol mode `tools`: a real `harness run` (bwrap target services) in which
an agent sends the audit's adversarial commands as tool calls, unknown tools and malformed
arguments. No canary of the targets' hidden truth appears in any tool result, stored tool call or
message, and nothing the agent wrote ran (no marker file)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support import HOSTED, ROOT
from test_leak_audit import LEAK_TARGETS, MARK, adversarial_messages, forbidden_texts

from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_no_canary_in_any_tool_result(tmp_path: Path, leak_catalog) -> None:  # type: ignore[no-untyped-def]
    db = f"sqlite:///{tmp_path / 'h.db'}"
    # (lone surrogates are refused in options: the agent sends those itself)
    texts = [t for t in adversarial_messages() if len(t) < 100_000 and "\udcff" not in t]
    env_canaries = {
        "OPENAI_API_KEY": "sk-env-canary-tools-31aa",
        "HARNESS_API_TOKENS": "tok-canary-9f",
    }
    env = {
        **os.environ,
        **env_canaries,
        "DATABASE_URL": db,
        "PYTHONPATH": os.pathsep.join([str(HOSTED), str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    args = ["harness", "run", "-a", "tool_leak_agents:AdversarialToolsAgent", "-d", "find-v1"]
    args += ["--mode", "tools", "--no-floor", "--agent-isolation", "none", "--json"]
    for t in LEAK_TARGETS:
        args += ["--id", t]
    args += ["-o", f"texts={json.dumps(texts)}", "-o", f"mark={MARK}"]
    r = subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    run_id = json.loads(r.stdout)["id"]
    store = Store(make_engine(db))
    forbidden = [*forbidden_texts(leak_catalog), *env_canaries.values()]
    assert any(f.startswith("CANARY-") for f in forbidden)
    n_results = 0
    for ep in store.episodes.of_run(run_id):
        assert ep.status == "completed", (ep.status, ep.error)
        rows = store.episodes.tool_calls(ep.id)
        texts_seen = [m.content for m in store.episodes.messages(ep.id)]
        texts_seen += [r.result + (r.error or "") for r in rows]
        n_results += sum(m == "tool" for m in (x.role for x in store.episodes.messages(ep.id)))
        for text in texts_seen:
            for f in forbidden:
                assert f not in text, (text[:80], f)
            assert "root:x:0" not in text
        errors = [r.error for r in rows if r.error]
        assert any(e.startswith("unknown tool '../../etc/passwd'") for e in errors)
        assert any("Additional properties are not allowed" in e for e in errors)
    assert n_results > 2 * len(texts)
    leftovers = [p for p in os.listdir("/tmp") if p.startswith(os.path.basename(MARK))]
    assert leftovers == []
