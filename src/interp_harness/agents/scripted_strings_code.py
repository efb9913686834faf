"""`scripted-strings-code`: the strings baseline in protocol mode `code`, no API needed.

One cell calls f on the probes of `scripted-strings` (the plain ones, then the ones with spaces,
as its two commands do; the safe ones if every call failed) through the lab's `target` module
and prints each input with its output as JSON; the agent reads them back and searches candidate
transformations exactly as `scripted-strings` does.
"""

from __future__ import annotations

import json

from interp_harness.agents.base import AgentReply, Message
from interp_harness.agents.protocol.cells import cell_block, cell_stdouts, cells_sent
from interp_harness.agents.scripted_strings import PROBES, SAFE_PROBES, ScriptedStringsAgent

SPACED = ["hello world", "a b c"]  # scripted-strings' quoted probes, as the function gets them


def probing_cell() -> str:
    return (
        "import json\n"
        "from target import call_function\n"
        f"probes = {PROBES!r}\n"
        f"spaced = {SPACED!r}\n"
        "outs = call_function(probes) + call_function(spaced)\n"
        "probes = probes + spaced\n"
        "if all(o is None for o in outs):\n"
        f"    probes = {SAFE_PROBES!r}\n"
        "    outs = call_function(probes)\n"
        "for p, o in zip(probes, outs):\n"
        "    print(json.dumps([p, o]))\n"
    )


def read_pairs(stdout: str) -> list[tuple[str, str]]:
    """(input, output) pairs; a failed input's output reads `Error: ...`, as in a text reply."""
    out = []
    for line in stdout.splitlines():
        try:
            x, y = json.loads(line)
        except (ValueError, TypeError):
            continue
        if isinstance(x, str):
            out.append((x, y if isinstance(y, str) else "Error: the call failed"))
    return out


class ScriptedStringsCodeAgent(ScriptedStringsAgent):
    """Offline strings baseline that experiments with one Python cell in the lab."""

    name = "scripted-strings-code"
    description = (
        "offline baseline in protocol mode code: probes a string function in one lab cell and "
        "searches candidate transformations (no API)"
    )
    needs_lab = True

    async def text_step(self, conversation: list[Message]) -> AgentReply:
        if cells_sent(conversation) == 0:
            return AgentReply(content="Probing f in one cell.\n" + cell_block(probing_cell()))
        outs = cell_stdouts(conversation)
        return AgentReply(content=self.conclude(read_pairs(outs[-1]) if outs else []))
