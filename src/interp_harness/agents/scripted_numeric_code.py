"""`scripted-numeric-code`: the numeric baseline in protocol mode `code`, no API needed.

One cell samples f on the same inputs as `scripted-numeric` (in the same batches, so the calls
and inputs counted are the same) through the lab's `target` module and prints each input with
its value; the agent reads them back from the cell's stdout and fits and answers exactly as
`scripted-numeric` does. In mode `code-tools` the cell is a `run_python` call.

Stateless between steps, like the text baseline: the plan step is the number of cells sent.
"""

from __future__ import annotations

from typing import Any

from interp_harness.agents.base import AgentReply, Message
from interp_harness.agents.protocol import Observation
from interp_harness.agents.protocol.cells import cell_block, cell_stdouts, cells_sent
from interp_harness.agents.scripted_numeric import ScriptedNumericAgent


def sampling_cell(batches: list[list[str]]) -> str:
    """The cell: every batch through `call_function`, then one `input<TAB>value` line each."""
    literal = "[" + ", ".join("[" + ", ".join(b) + "]" for b in batches) + "]"
    return (
        "from target import call_function\n"
        f"batches = {literal}\n"
        "xs, ys = [], []\n"
        "for batch in batches:\n"
        "    xs += batch\n"
        "    ys += call_function(batch)\n"
        "for x, y in zip(xs, ys):\n"
        "    print(f'{x}\\t{y}')\n"
    )


def read_samples(stdout: str) -> list[Observation]:
    """The (input, value) lines the cell printed, values as FIND prints them."""
    out = []
    for line in stdout.splitlines():
        x, sep, y = line.partition("\t")
        if sep:
            out.append(Observation(x=x, y=y))
    return out


class ScriptedNumericCodeAgent(ScriptedNumericAgent):
    """Offline numeric baseline that experiments with Python cells in the lab."""

    name = "scripted-numeric-code"
    description = (
        "offline baseline in protocol mode code: samples a numeric function in one lab cell and "
        "fits candidate families (no API)"
    )
    needs_lab = True

    async def text_step(self, conversation: list[Message]) -> AgentReply:
        if cells_sent(conversation) == 0:
            return AgentReply(
                content="Sampling f on [-128, 128] in one cell.\n"
                + cell_block(sampling_cell(self.plan))
            )
        outs = cell_stdouts(conversation)
        obs: list[Any] = read_samples(outs[-1]) if outs else []
        return AgentReply(content=self.conclude(obs))
