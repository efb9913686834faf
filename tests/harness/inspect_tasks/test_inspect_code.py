"""`inspect eval interp_harness/find -T protocol=code` through Inspect's own CLI (a subprocess;
issue 42 item 4): the sample's tools include `run_python`, whose cells run in one lab per sample
(variables kept from cell to cell), with their target calls on the sandboxed target service,
counted in the sample's store as the call tools' are and refused past max_target_calls; the
answer may name a lab function; the lab is gone when the eval ends; the log imports as a run in
mode `code-tools`."""

from __future__ import annotations

import ast
import asyncio
import base64
import json
from pathlib import Path

import pytest
from fastapi import FastAPI, Request
from inspect_code_scripts import ANSWER, FIRST
from support import HOSTED, serve_in_process
from test_inspect_tasks import (  # noqa: F401 - sandbox_tmp is a fixture
    assert_no_ground_truth,
    assert_nothing_left,
    inspect_cli,
    logs,
    sandbox_tmp,
)

from interp_harness.agents.protocol.cells import parse_cells
from interp_harness.function_store.benchmark import benchmark
from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.episode.runner import offered_tools, prompts
from interp_harness.harness.inspect_tasks.importer import import_eval_log
from interp_harness.harness.lab.api import call_commands, call_value
from interp_harness.harness.lab.limits import LabLimits
from interp_harness.harness.lab.prompt import lab_note
from interp_harness.harness.settings import Settings
from interp_harness.harness.store.repo import open_store
from interp_harness.harness.target_client import make_target_client

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_bwrap")]
SCRIPTS = HOSTED / "inspect_code_scripts.py"


def values(target_id: str, inputs: list[str]) -> list[object]:
    """What a cell reads for `inputs`: the target service's outputs read as the declaration says,
    computed here with a target client of this process, not through the eval."""

    async def go() -> list[object]:
        client = make_target_client(Settings(), CatalogCache())
        try:
            outputs = await client.call(target_id, inputs)
        finally:
            await client.aclose()
        got, _ = call_value(call_commands(benchmark("numeric").commands)[0], outputs)
        return [complex(*v["__complex__"]) if isinstance(v, dict) else v for v in got]

    return asyncio.run(go())


def test_find_protocol_code_with_a_user_solver(tmp_path: Path, sandbox_tmp: Path) -> None:  # noqa: F811
    args = ["eval", "interp_harness/find", "--solver", f"{SCRIPTS}@code_cells"]
    args += ["-T", "dataset=find-gen", "-T", "family=numeric", "-T", "limit=1"]
    args += ["-T", "protocol=code", "-T", "max_target_calls=3", "--model", "mockllm/model"]
    inspect_cli(args, sandbox_tmp, tmp_path / "logs")
    assert_nothing_left(sandbox_tmp)  # the lab's process and files went with the sample
    log = logs(tmp_path / "logs")["interp_harness/find"]
    assert log.status == "success"
    (s,) = log.samples or []
    assert s.error is None
    target = CatalogCache().get(0).get(str(s.id))
    commands = benchmark("numeric").commands
    assert s.input == (
        prompts.task_prompt(target.public.prompt_family)
        + prompts.tools_note(offered_tools("numeric", "code-tools"))
        + lab_note(commands, LabLimits.from_settings(Settings()), tools=True)
    )
    first, second, submitted = [m.text for m in s.messages if m.role == "tool"]
    # cell 1: two target calls, the values the target service gives
    assert first.startswith("Response: cell 1 ran (2 target calls).")
    [cell] = parse_cells(first)
    assert ast.literal_eval(cell.stdout.strip()) == values(target.id, ["1", "2", "3"])
    assert ast.literal_eval(cell.parts["value"]) == values(target.id, ["4"])[0]
    # cell 2: the lab kept ys and g; one call left of the budget, the next one refused
    assert second.startswith("Response: cell 2 ran (1 target call).")
    [cell] = parse_cells(second)
    lines = cell.stdout.splitlines()
    assert lines[0] == "3 42" and lines[1].startswith("budget:") and "3 target calls" in lines[1]
    assert s.store["interp_harness:target_calls"] == 3
    assert s.store["interp_harness:inputs"] == 5
    assert s.store["interp_harness:end_reason"] == "target_calls"
    # the answer names the lab's g: its source is the submitted code
    assert submitted == s.store["interp_harness:answer"]
    assert submitted.startswith(f"[DESCRIPTION]: {ANSWER['description']}")
    assert "def g(x):\n    return 2 * x" in submitted and "lab:g" not in submitted
    assert FIRST not in submitted  # only g, not the cell that defined it
    assert_no_ground_truth(next((tmp_path / "logs").glob("*.eval")), [target])
    store = open_store(f"sqlite:///{tmp_path / 'imported.db'}")
    run = store.runs.get(import_eval_log(store, log))
    assert run is not None and run.spec["protocol"]["mode"] == "code-tools"
    [ep] = store.episodes.of_run(run.id)
    assert (ep.status, ep.end_reason, ep.target_calls, ep.inputs) == (
        "budget_exhausted",
        "target_calls",
        3,
        5,
    )


PLOT = """import matplotlib.pyplot as plt
from target import call_function
xs = [1, 2, 3]
plt.figure(figsize=(3, 2), dpi=50)
plt.plot(xs, call_function(xs))
"""


def _tool_reply(n: int, name: str, arguments: dict[str, str]) -> dict[str, object]:
    """One Chat Completions reply holding one tool call."""
    call = {"id": f"c{n}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(arguments)}  # type: ignore[assignment]
    message = {"role": "assistant", "content": "", "tool_calls": [call]}
    return {
        "id": f"r{n}", "object": "chat.completion", "created": 0, "model": "loop",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }  # fmt: skip


def test_protocol_code_gives_a_multimodal_model_the_figure_as_an_image(
    tmp_path: Path,
    sandbox_tmp: Path,  # noqa: F811
) -> None:
    """A loopback Chat Completions model records each request: after its run_python call made a
    figure, the next request holds the figure as a PNG image part (before: only the text line
    `[figure 1: 150x100 PNG]`), besides the text that names it."""
    received: list[dict[str, object]] = []
    script = [
        ("run_python", {"code": PLOT}),
        ("submit_answer", {"description": "d", "domain": "all", "code": "def f(x):\n    return x"}),
    ]
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> dict[str, object]:
        received.append(await request.json())
        n = min(len(received), len(script)) - 1
        return _tool_reply(n, *script[n])

    with serve_in_process(app) as url:
        args = ["eval", "interp_harness/find", "--model", "openai-api/loop/m"]
        args += ["-T", "dataset=find-gen", "-T", "family=numeric", "-T", "limit=1"]
        args += ["-T", "protocol=code", "--no-score"]
        env = {"LOOP_BASE_URL": f"{url}/v1", "LOOP_API_KEY": "unused"}
        inspect_cli(args, sandbox_tmp, tmp_path / "logs", env)
    log = logs(tmp_path / "logs")["interp_harness/find"]
    assert log.status == "success" and log.samples and log.samples[0].error is None
    assert len(received) == 2, received
    after = received[1]["messages"]
    assert isinstance(after, list)
    [tool] = [m for m in after if m["role"] == "tool"]
    text = tool["content"] if isinstance(tool["content"], str) else tool["content"][0]["text"]
    assert "[figure 1: 150x100 PNG]" in text  # every model reads the line
    parts = [p for m in after if isinstance(m["content"], list) for p in m["content"]]
    [image] = [p for p in parts if p.get("type") == "image_url"]
    url_ = image["image_url"]["url"]
    assert url_.startswith("data:image/png;base64,")
    png = base64.b64decode(url_.split(",", 1)[1])
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png[16:24] == (150).to_bytes(4, "big") + (
        100
    ).to_bytes(4, "big")  # the IHDR's width and height: the figure the cell made
