"""`inspect eval interp_harness/neurons` through Inspect's CLI on SmolLM2 neuron targets: the
target service in bubblewrap reaches the intervention service; the tool result is the harness's
reply for the same texts; the description is scored observationally; nothing the model reads
names the neuron."""

from __future__ import annotations

import asyncio
from pathlib import Path

import inspect_scripts
from support.inspect_cli import SCRIPTS, inspect_cli, logs
from support.neuron_runs import neuron_api_env

from interp_harness.agents.protocol import format_reply
from interp_harness.agents.protocol.tools import by_name, to_words
from interp_harness.function_store.benchmark import benchmark
from interp_harness.function_store.models import make_canary
from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.settings import Settings
from interp_harness.harness.target_client import make_target_client


def test_neurons_task_with_a_scripted_solver(smol_url: str, tmp_path: Path) -> None:
    env = neuron_api_env(tmp_path, smol_url)
    env.pop("DATABASE_URL")  # the eval keeps no store of ours
    args = ["eval", "interp_harness/neurons", "--solver", f"{SCRIPTS}@calls_each_tool_once"]
    args += ["-T", "variant=smollm2", "-T", "limit=1", "-T", "seed=1", "--model", "mockllm/model"]
    inspect_cli(args, Path(env.get("TMPDIR", "/tmp")), tmp_path / "logs", env)
    log = logs(tmp_path / "logs")["interp_harness/neurons"]
    assert log.status == "success", log.error
    (s,) = log.samples or []
    tid = str(s.id)
    assert s.metadata == {"dataset": "neuron", "family": "neurons", "variant": "smollm2"}

    spec = by_name(benchmark("neurons").commands)["read_activations"]
    words = to_words(spec, {"texts": inspect_scripts.TEXTS})

    async def expected() -> str:
        client = make_target_client(Settings(intervention_url=smol_url), CatalogCache())
        try:
            outputs = await client.call(tid, words)
        finally:
            await client.aclose()
        return format_reply(outputs, "default", decimals=benchmark("neurons").reply_decimals)

    results = [m.text for m in s.messages if m.role == "tool" and m.function != "submit_answer"]
    assert results == [asyncio.run(expected())]
    seen = "\n".join(m.text for m in s.messages if m.role != "assistant")  # what the model reads
    for secret in (tid, tid.rsplit("/", 1)[1], make_canary(tid), "smollm2", "mlp_activation"):
        assert secret not in seen
    score = s.scores["interp_harness"]
    f1 = score.value["observational_f1"]
    assert 0.0 <= f1 <= 1.0
    (row,) = [r for r in score.metadata["scores"] if r["metric"] == "observational_f1"]
    assert row["status"] == "ok" and row["value"] == f1
