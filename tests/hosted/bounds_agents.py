"""Scripted agents for the bounds tests (loaded by dotted path inside the agent host, which
imports `agents` only): one that writes NUL characters, one whose answer's code sleeps."""

from __future__ import annotations

from interp_harness.agents.base import Agent, AgentReply, Message
from interp_harness.agents.protocol import command, function_path

NUL_ANSWER = (
    "[DESCRIPTION]: doubles\x00 its input.\n[DOMAIN]: none\x00.\n[CODE]:\n"
    "```python\ndef f(x):\n    return 2 * x  # \x00\n```"
)

# The first call sleeps (a module global survives between calls of one run of the code): scoring
# waits for it once; a page that re-ran the code would wait again.
SLEEPY_ANSWER = """[DESCRIPTION]: doubles its input.
[DOMAIN]: none.
[CODE]:
```python
import time

_slept = []


def f(x):
    if not _slept:
        _slept.append(1)
        time.sleep(8)
    return 2 * x
```"""


SLEEPY_STRINGS_ANSWER = """[DESCRIPTION]: upper-cases its input.
[CODE]:
```python
import time

_slept = []


def f(s):
    if not _slept:
        _slept.append(1)
        time.sleep(8)
    return s.upper() + "!"
```"""


class NulAgent(Agent):
    """One command whose text holds NUL, then an answer with NUL in every part."""

    name = "nul-agent"

    async def step(self, conversation: list[Message]) -> AgentReply:
        if len(conversation) <= 2:
            path = function_path(conversation)
            return AgentReply(content="let me look\x00 " + command(path, ["1", "2"]))
        return AgentReply(content=NUL_ANSWER, model="nul\x00model")


class SleepyAnswerAgent(Agent):
    """Answers at once with code that sleeps 8 s on its first call and then doubles x."""

    name = "sleepy-answer"

    async def step(self, conversation: list[Message]) -> AgentReply:
        return AgentReply(content=SLEEPY_ANSWER)


class SleepyStringsAgent(Agent):
    """Answers at once with code that sleeps 8 s on its first call, then returns s.upper() + "!"."""

    name = "sleepy-strings"

    async def step(self, conversation: list[Message]) -> AgentReply:
        return AgentReply(content=SLEEPY_STRINGS_ANSWER)
