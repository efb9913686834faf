"""`scripted-ravel`: an offline baseline for RAVEL localisation targets, no API needed.

It asks for the task (train entities with their values, train templates), reads every dim of the
residual stream at a fixed layer at each train entity's last token (the entity placed in the
target attribute's first train template), and answers the TOP dims whose values differ most
between entities with different values of the attribute, less how much they differ between
entities that share its value (a difference-of-activations probe). Stateless between steps:
everything is re-read from the conversation.
"""

from __future__ import annotations

import json
import re
from itertools import combinations
from statistics import mean

from agents.base import Agent, AgentReply, Message
from agents.protocol import function_path

LAYER = 8
TOP = 32
MAX_ENTITIES = 16
ANSWER = "[DESCRIPTION]: a difference-of-activations probe at the entity's last token:"
_DIMS = re.compile(r"((?:\d+\([+-]\d+\.\d+\)\s?)+)")
_DIM = re.compile(r"(\d+)\(([+-]\d+\.\d+)\)")


def _responses(conversation: list[Message]) -> list[str]:
    return [m.content for m in conversation if m.role == "user" and m.content.startswith("Resp")]


def parse_task(reply: str) -> dict:
    start = reply.index("{")
    task, _ = json.JSONDecoder().raw_decode(reply[start:])
    return task


def parse_vectors(reply: str) -> list[dict[int, float]]:
    """One {dim: value} per text of an `activations` reply, in order."""
    return [{int(d): float(v) for d, v in _DIM.findall(m)} for m in _DIMS.findall(reply)]


def prefix(template: str, entity: str) -> str:
    """The template up to and including the entity: its last token is the intervention site."""
    return template[: template.index("%s")] + entity


def rank_dims(vectors: list[dict[int, float]], values: list[str], top: int) -> list[int]:
    dims = sorted(set().union(*vectors))
    diff = [(i, j) for i, j in combinations(range(len(vectors)), 2) if values[i] != values[j]]
    same = [(i, j) for i, j in combinations(range(len(vectors)), 2) if values[i] == values[j]]

    def spread(d: int, pairs: list[tuple[int, int]]) -> float:
        if not pairs:
            return 0.0
        return mean(abs(vectors[i].get(d, 0.0) - vectors[j].get(d, 0.0)) for i, j in pairs)

    score = {d: spread(d, diff) - spread(d, same) for d in dims}
    return sorted(sorted(dims, key=lambda d: (-score[d], d))[:top])


class ScriptedRavelAgent(Agent):
    name = "scripted-ravel"
    provider = "local"
    description = "offline baseline for RAVEL targets: top dims by activation difference"

    async def step(self, conversation: list[Message]) -> AgentReply:
        path = function_path(conversation)
        replies = _responses(conversation)
        if not replies:
            return AgentReply(content=f"PYTHON({path} task)")
        task = parse_task(replies[0])
        attr = task["attribute"]
        ents = [e for e, v in task["entities"].items() if v.get(attr)][:MAX_ENTITIES]
        template = task["templates"][attr][0]
        if len(replies) == 1:
            texts = " ".join(json.dumps(prefix(template, e), ensure_ascii=False) for e in ents)
            return AgentReply(
                content=f"PYTHON({path} activations {texts} --layer {LAYER} --top all)"
            )
        vectors = parse_vectors(replies[1])
        if len(vectors) != len(ents):
            return AgentReply(
                content=f"{ANSWER} nothing could be read.\n[LAYER]: {LAYER}\n[NEURONS]: 0"
            )
        dims = rank_dims(vectors, [task["entities"][e][attr] for e in ents], TOP)
        return AgentReply(
            content=f"{ANSWER} the {len(dims)} dims whose values differ most between train "
            f"entities with different {attr}.\n"
            f"[LAYER]: {LAYER}\n[NEURONS]: {', '.join(str(d) for d in dims)}"
        )
