"""`scripted-strings`: an offline baseline for FIND's string functions, no API needed.

It calls f on a fixed, varied set of probe strings, then looks for a candidate transformation
(interp_harness.agents.string_candidates) or a composition g(h(x)) of two that reproduces every observed output,
and answers with FIND's tokens and code for it. Inputs whose call failed must fail for the
candidate too. Stateless between steps, like the numeric one.
"""

from __future__ import annotations

from typing import Any

from interp_harness.agents.base import AgentReply, Message
from interp_harness.agents.protocol import answer, command, function_path, observations
from interp_harness.agents.string_candidates import (
    HELPERS,
    Candidate,
    atomic_candidates,
    data_candidates,
)
from interp_harness.agents.tools_adapter import TextProtocolAgent

PROBES = [
    "hello", "World", "abc123", "Python3", "a", "xyz", "Zebra", "racecar", "OpenAI", "data2023",
    "AEIOU", "bcd", "Mississippi", "q", "TeSt", "12345", "helloWorld", "encyclopedia", "CAPS",
    "mixedCase99", "banana", "Quiz", "rhythm", "abcdefghij", "xylophone", "Ab", "kayak", "z9Z",
    "aaaa", "night",
]  # fmt: skip
# FIND's CLI gets its inputs through a shell: quoted inputs keep their spaces. Sent apart so a
# protocol that splits them differently cannot spoil the main batch.
SPACED_PROBES = ['"hello world"', '"a b c"']
SAFE_PROBES = [
    "cat",
    "dog",
    "house",
    "tree",
    "apple",
    "river",
    "Stone",
    "light",
]  # if a call crashed

FAILED = object()  # the observed output was an error


def _expected(y: str) -> object:
    return FAILED if y.startswith("Error:") else y


def _run(fn: Any, x: str) -> object:
    try:
        return str(fn(x))
    except Exception:
        return FAILED


def search(pairs: list[tuple[str, object]], max_compose: int = 400) -> tuple[list[Candidate], int]:
    """The simplest candidate (or pair, outer first) matching all pairs, else the best partial
    match; returns (chain, number of pairs matched)."""
    atoms = atomic_candidates() + data_candidates([(x, y) for x, y in pairs if isinstance(y, str)])
    atoms.sort(key=lambda c: c.cost)
    best: tuple[list[Candidate], int] = ([atoms[0]], -1)
    for cand in atoms:
        fn = cand.fn()
        hits = sum(_run(fn, x) == y for x, y in pairs)
        if hits == len(pairs):
            return [cand], hits
        if hits > best[1]:
            best = ([cand], hits)
    # compositions outer(inner(x)): inner outputs computed once per inner candidate
    inners = [c for c in atoms if c.expr != "s"][:max_compose]
    outers = [c for c in atoms if c.expr != "s"]
    outer_fns = [(c, c.fn()) for c in outers]
    for inner in inners:
        ifn = inner.fn()
        mids = [_run(ifn, x) for x, _ in pairs]
        if any(m is FAILED for m in mids) and not any(y is FAILED for _, y in pairs):
            continue
        for outer, ofn in outer_fns:
            ok = True
            for m, (_, y) in zip(mids, pairs, strict=True):
                got = FAILED if m is FAILED else _run(ofn, m)  # type: ignore[arg-type]
                if got != y:
                    ok = False
                    break
            if ok:
                return [outer, inner], len(pairs)
    return best


def code_for(chain: list[Candidate]) -> str:
    lines = [HELPERS.strip(), "", ""]
    if len(chain) == 1:
        lines += ["def f(x):", "    s = x", f"    return {chain[0].expr}"]
    else:
        outer, inner = chain
        lines += [
            "def inner(s):",
            f"    return {inner.expr}",
            "",
            "",
            "def outer(s):",
            f"    return {outer.expr}",
            "",
            "",
            "def f(x):",
            "    return outer(inner(x))",
        ]
    return "\n".join(lines) + "\n"


def describe(chain: list[Candidate], hits: int, total: int) -> str:
    if len(chain) == 1:
        text = f"The function {chain[0].description}."
    else:
        outer, inner = chain
        text = f"The function combines two operations: first it {inner.description}; then it {outer.description}."
    if hits < total:
        text += f" (This matches {hits} of the {total} examples I tested; the rest differ.)"
    return text


class ScriptedStringsAgent(TextProtocolAgent):
    """Offline strings baseline: probes f and searches candidate transformations."""

    name = "scripted-strings"
    families = frozenset({"strings"})
    provider = "local"
    description = (
        "offline baseline: probes a string function and searches candidate transformations (no API)"
    )

    async def text_step(self, conversation: list[Message]) -> AgentReply:
        path = function_path(conversation)
        obs, sent = observations(conversation)
        plan = [PROBES, SPACED_PROBES]
        if sent < len(plan):
            return AgentReply(
                content="Testing f on a set of strings.\nCOMMAND: " + command(path, plan[sent])
            )
        if not obs and sent == len(plan):
            return AgentReply(
                content="The call returned nothing; trying simpler inputs.\nCOMMAND: "
                + command(path, SAFE_PROBES)
            )
        return AgentReply(content=self.conclude([(o.x, o.y) for o in obs]))

    def conclude(self, raw: list[tuple[str, str]]) -> str:
        pairs = [(x, _expected(y)) for x, y in raw]
        if not pairs:
            return answer(
                "I could not observe any output of f: every call returned nothing.",
                "def f(x):\n    return x\n",
                "Unknown.",
            )
        chain, hits = search(pairs)
        return answer(describe(chain, hits, len(pairs)), code_for(chain), "All strings I tested.")
