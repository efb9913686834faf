"""A code-mode agent for the resume test (`resume_agents:GatedCellAgent`, loadable by dotted
path; like every agent module it imports only the `agents` package).

Its messages are fixed: cells that build state in the lab, then (at its second step, once the
`gate` file exists) a cell that uses that state, then an answer that names a function of the
lab. Each call of `step` appends a line to the `record` file first (process, step, a digest of
the conversation), so that a test counts the steps it was asked for, independently of the store.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os

from interp_harness.agents.base import Agent, AgentOptions, AgentReply, Message

FENCE = "```"
MESSAGES = [
    "The function at 4, then the lab.\nPYTHON(./temp/function.py 4)\n"
    f"{FENCE}python\nfrom target import call_function\nxs = [1, 2, 3]\nys = call_function(xs)\n"
    f"def g(x):\n    return 2 * x + 1\n{FENCE}\n"
    f"{FENCE}python\nzs = call_function([10])\nprint('before', ys, zs)\n{FENCE}",
    # uses what the first message's cells defined (the import, ys, zs, g)
    f"{FENCE}python\nw = call_function([100])\nprint('after', sum(ys), zs, w, g(5))\n{FENCE}",
]
ANSWER = "[DESCRIPTION]: f(x) = 2x + 1\n[CODE]: lab:g"


class GatedOptions(AgentOptions):
    record: str = ""  # the file each step call is appended to
    gate: str = ""  # the second step waits until this file exists


class GatedCellAgent(Agent):
    name = "gated-cells"
    Options = GatedOptions
    provider = "orch-local"

    async def step(self, conversation: list[Message]) -> AgentReply:
        k = sum(m.role == "assistant" for m in conversation)
        text = "\x00".join(f"{m.role}:{m.content}" for m in conversation)
        line = {"pid": os.getpid(), "k": k, "conv": hashlib.sha256(text.encode()).hexdigest()}
        with open(self.options["record"], "a") as f:
            f.write(json.dumps(line) + "\n")
        if k == 1:
            while not os.path.exists(self.options["gate"]):
                await asyncio.sleep(0.05)
        return AgentReply(content=MESSAGES[k] if k < len(MESSAGES) else ANSWER)
