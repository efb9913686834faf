"""An agent whose lab cells print, return and raise markup (and draw a figure), for the notebook's escaping test
(loaded by dotted path, `notebook_agents:HostileCellAgent`, inside the agent host: imports
`agents` only)."""

from __future__ import annotations

from interp_harness.agents.base import Agent, AgentReply, Message

STDOUT = "</pre><script>window.pwned=1</script>"
STDERR = '<img src=x onerror="window.pwned=2">'
LINK = "<a href='javascript:window.pwned=3'>javascript:window.pwned=3</a>"
BAD_INPUT = "</code></td><script>window.pwned=4</script>"
RAISED = "</code></pre><script>window.pwned=5</script>"

CELL_1 = f"""import sys
from target import call_function
print()  # a first newline, which a page's <pre> must not swallow
print({STDOUT!r})
print({STDERR!r}, file=sys.stderr)
try:
    call_function([1, {BAD_INPUT!r}])
except Exception as e:
    print(repr(e))
import matplotlib.pyplot as plt
plt.plot([0, 1], [1, 0])
plt.title({RAISED!r})  # drawn as pixels: a figure, served as a PNG
{LINK!r}"""
CELL_2 = f"raise ValueError({RAISED!r})"
MESSAGE = f"Two cells.\n```python\n{CELL_1}\n```\n```python\n{CELL_2}\n```"


class HostileCellAgent(Agent):
    """Sends MESSAGE (two cells), then a final answer."""

    name = "hostile-cells"

    async def step(self, conversation: list[Message]) -> AgentReply:
        if not any(m.role == "assistant" for m in conversation):
            return AgentReply(content=MESSAGE)
        return AgentReply(content="[DESCRIPTION]: done")
