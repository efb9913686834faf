"""One finished tools-mode episode in a store, for the tests of what shows it (REST API, web
pages, Inspect export): a message with a target call and an unknown tool whose arguments hold
markup, then submit_answer."""

from __future__ import annotations

from typing import Any

from support.orch_helpers import run_in_process

AGENT = "tool_agents:ScriptedToolsAgent"
F0 = "orch-test/numeric/f00000"  # f(x) = 2x + 1
XSS = "<script>window.pwned=1</script>"
SCRIPT = [
    [
        {"name": "call_function", "arguments": {"inputs": ["0", "1"]}},
        {"name": "run_python", "arguments": {"code": XSS}},  # unknown tool: a tool error
    ]
]
REPLY = "Response: Function input - output pairs: (0, 1.0) (1, 3.0) \n"  # FIND's reply format


async def tools_episode(url: str, script: list[Any] = SCRIPT) -> tuple[Any, Any]:
    """(store, episode) after running `script` to its end (agents in-process, SQLite at `url`)."""
    spec = {
        "agent": AGENT,
        "dataset": "orch-test",
        "ids": [F0],
        "agent_options": {"script": script},
        "protocol": {"mode": "tools"},
    }
    store, [run] = await run_in_process(url, spec, agent_isolation="none")
    assert run.status == "completed", run.error
    [ep] = store.episodes.of_run(run.id)
    return store, ep
