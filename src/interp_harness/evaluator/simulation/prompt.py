"""The "all at once" simulation prompt, laid out as Bills et al. 2023 lay theirs out (the wording
and the examples are ours): a short statement of the task, two worked neurons, then the neuron
under test: its explanation, and every token of one text on a line of its own followed by a tab
and the slot `unknown`. One completion request over this prompt (echoed, with top logprobs)
gives, at each slot, the simulator's distribution over the activation it expects there.

Tokens are shown as the data gives them, with line breaks and tabs escaped (`\\n`, `\\t`) so that
each keeps its own line. The explanation is the agent's text: it is shown on one line, its
whitespace runs (line breaks and tabs included) folded to one space and its angle brackets
replaced, so that it can add no line of its own (no token line, no `Neuron N` block) and close no
`<start>` block: an agent's injected examples would otherwise be read as data by the simulator.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

SLOT = "unknown"

HEADER = (
    "This is a study of single neurons inside a language model. A neuron watches a text and "
    "responds to one particular kind of thing in it. For each neuron below there is a one-line "
    "description of what it responds to, then a text split into tokens, one token per line: the "
    "token, a tab, and how strongly the neuron responds to that token, from 0 (no response) to "
    f"10 (its strongest response). Most tokens get 0. A response still to be filled in is "
    f"written `{SLOT}`.\n\n"
)

# Two worked neurons of our own: a word class and a topic, with sparse and graded responses.
EXAMPLES: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = (
    (
        "days of the week",
        (
            ("We", 0), (" meet", 0), (" on", 0), (" Monday", 10), (" and", 0),
            (" again", 0), (" on", 0), (" Friday", 9), (" morning", 1), (".", 0),
        ),
    ),
    (
        "words about the weather",
        (
            ("The", 0), (" storm", 8), (" brought", 0), (" heavy", 2), (" rain", 10),
            (" and", 0), (" wind", 7), (" to", 0), (" the", 0), (" coast", 0), (".", 0),
        ),
    ),
)  # fmt: skip


def shown(token: str) -> str:
    """A token as its line shows it: line breaks and tabs escaped."""
    return (
        token.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    )


def one_line(explanation: str) -> str:
    """The explanation as the prompt shows it: one line, none of the prompt's delimiters."""
    folded = re.sub(r"\s+", " ", explanation).strip()
    return folded.replace("<", "\u2039").replace(">", "\u203a")  # ‹ › : no <start>, no <end>


def _block(number: int, explanation: str, lines: Sequence[str]) -> str:
    body = "".join(f"{line}\n" for line in lines)
    return (
        f"Neuron {number}\n"
        f"What neuron {number} responds to: {one_line(explanation)}\n"
        f"Activations:\n<start>\n{body}<end>\n\n"
    )


@dataclass(frozen=True)
class SimulationPrompt:
    text: str
    slots: tuple[int, ...]  # the character offset of each token's `unknown`, in token order


def build(explanation: str, tokens: Sequence[str]) -> SimulationPrompt:
    """The prompt for one text; `slots[i]` is where token i's activation is to be read."""
    head = HEADER + "".join(
        _block(i + 1, expl, [f"{shown(t)}\t{a}" for t, a in acts])
        for i, (expl, acts) in enumerate(EXAMPLES)
    )
    n = len(EXAMPLES) + 1
    start = head + (
        f"Neuron {n}\nWhat neuron {n} responds to: {one_line(explanation)}\nActivations:\n<start>\n"
    )
    parts, slots, at = [start], [], len(start)
    for t in tokens:
        line = f"{shown(t)}\t"
        slots.append(at + len(line))
        parts.append(f"{line}{SLOT}\n")
        at += len(line) + len(SLOT) + 1
    parts.append("<end>\n")
    return SimulationPrompt("".join(parts), tuple(slots))
