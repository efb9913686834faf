"""A bare version of FIND's episode loop and its answer parser, written in the tests independently
of the agents' own code: `run_episode`, `find_prompt`, `final_parts`, and `run_code` (agent-written
code in a separate python3 process)."""

from __future__ import annotations

import re
import shlex
from typing import Any

from interp_harness.agents.base import Agent, Message
from interp_harness.function_store.formatting import find_line

SYSTEM = "You now have access to some commands to help complete the user's request."
_COMMAND = re.compile(r"PYTHON\(([^\n]*)\)")


async def run_episode(
    agent: Agent, client: Any, target_id: str, prompt: str, max_rounds: int = 21
) -> tuple[str, list[Message], list[list[str]]]:
    """A bare version of FIND's loop, written here independently of the agents' own parser: returns
    the final message, the conversation and the inputs of every call."""
    conv = [Message(role="system", content=SYSTEM), Message(role="user", content=prompt)]
    calls: list[list[str]] = []
    for _ in range(max_rounds):
        reply = (await agent.step(conv)).content
        conv.append(Message(role="assistant", content=reply))
        if "[DESCRIPTION]" in reply:
            return reply, conv, calls
        found = _COMMAND.search(reply)
        assert found, f"agent sent neither a command nor an answer: {reply!r}"
        words = shlex.split(found.group(1))
        assert words[0] == "./temp/function.py"
        inputs = words[1:]
        calls.append(inputs)
        outputs = await client.call(target_id, inputs)
        conv.append(Message(role="user", content="Response: " + find_line(outputs) + "\n"))
    raise AssertionError("no [DESCRIPTION] within the round cap")


def find_prompt(family: str) -> str:
    from interp_harness.function_store.datasets import data_path

    template = data_path(f"find/prompts/interpreter/{family}.txt").read_text()
    return template.replace("{DIR2FUNC}", "./temp/function.py")


def final_parts(message: str) -> tuple[str, str, str]:
    """description, domain, code as FIND's parser reads them, reimplemented here."""
    description = (
        message.rsplit("[DESCRIPTION]: ")[-1].rsplit("[DOMAIN]: ")[0].rsplit("[CODE]: ")[0]
    )
    domain = message.rsplit("[DOMAIN]: ")[-1].rsplit("[CODE]: ")[0]
    c = message.rsplit("[CODE]:")[-1]
    code = c.rsplit("```python")[-1].split("```")[0] if "```python" in c else ""
    return description, domain, code


def run_code(code: str, calls: str) -> str:
    """Run agent-written code in a separate python3 process (never in the test process)."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", code + "\n" + calls], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout
