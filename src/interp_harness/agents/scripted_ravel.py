"""`scripted-ravel`: an offline baseline for RAVEL localisation targets, no API needed.

It asks for the task (train entities with their values, train templates), reads every dim of the
residual stream at a fixed layer at each train entity's last token (the entity placed in the
target attribute's first train template), and answers either
- `neurons` (default): the TOP dims whose values differ most between entities with different
  values of the attribute, less how much they differ between entities that share its value (a
  difference-of-activations probe), as `[LAYER]` + `[NEURONS]`; or
- `featurizer`: an uploaded rotation featurizer whose orthonormal rows span the centred mean
  activation of each attribute value (the directions that separate the values), as `[FEATURIZER]`.
Stateless between steps: everything is re-read from the conversation.
"""

from __future__ import annotations

import base64
import json
import re
from itertools import combinations
from statistics import mean
from typing import Any, Literal

import numpy as np
from pydantic import Field

from interp_harness.agents.base import AgentOptions, AgentReply, Message
from interp_harness.agents.protocol import function_path
from interp_harness.agents.tools_adapter import TextProtocolAgent

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


def value_directions(vectors: list[dict[int, float]], values: list[str]) -> np.ndarray:
    """k×n orthonormal rows spanning each attribute value's centred mean activation (QR of the
    means; directions that add nothing are dropped)."""
    width = 1 + max(max(v) for v in vectors)
    x = np.zeros((len(vectors), width))
    for i, v in enumerate(vectors):
        x[i, list(v)] = list(v.values())
    x -= x.mean(axis=0)
    labels = np.array(values)
    means = np.stack([x[labels == g].mean(axis=0) for g in sorted(set(values))])
    q, r = np.linalg.qr(means.T)
    keep = np.abs(np.diag(r)) > 1e-6 * max(1.0, float(np.abs(r).max()))
    return q[:, keep].T


def rotation_answer(rows: np.ndarray, layer: int) -> str:
    """`[FEATURIZER]: {...}` in the intervention service's format (float32, little-endian)."""
    a = np.ascontiguousarray(rows, dtype="<f4")
    weight = {"shape": list(a.shape), "dtype": "float32", "data": base64.b64encode(a).decode()}
    return "[FEATURIZER]: " + json.dumps(
        {"kind": "rotation", "layer": layer, "arrays": {"weight": weight}}
    )


class ScriptedRavelOptions(AgentOptions):
    answer: Literal["neurons", "featurizer"] = "neurons"
    layer: int = Field(LAYER, ge=0, le=255)
    top: int = Field(TOP, ge=1, le=100_000)


class ScriptedRavelAgent(TextProtocolAgent):
    name = "scripted-ravel"
    families = frozenset({"ravel"})
    provider = "local"
    description = "offline baseline for RAVEL targets: top dims by activation difference"
    Options = ScriptedRavelOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.opts = ScriptedRavelOptions.model_validate(options)

    async def text_step(self, conversation: list[Message]) -> AgentReply:
        path = function_path(conversation)
        replies = _responses(conversation)
        if not replies:
            return AgentReply(content=f"PYTHON({path} task)")
        task = parse_task(replies[0])
        attr = task["attribute"]
        ents = [e for e, v in task["entities"].items() if v.get(attr)][:MAX_ENTITIES]
        template = task["templates"][attr][0]
        layer = self.opts.layer
        if len(replies) == 1:
            texts = " ".join(json.dumps(prefix(template, e), ensure_ascii=False) for e in ents)
            return AgentReply(
                content=f"PYTHON({path} activations {texts} --layer {layer} --top all)"
            )
        vectors = parse_vectors(replies[1])
        if len(vectors) != len(ents):
            return AgentReply(
                content=f"{ANSWER} nothing could be read.\n[LAYER]: {layer}\n[NEURONS]: 0"
            )
        values = [task["entities"][e][attr] for e in ents]
        if self.opts.answer == "featurizer":
            rows = value_directions(vectors, values)
            return AgentReply(
                content=f"[DESCRIPTION]: a rotation whose {len(rows)} rows span the mean "
                f"activation of each {attr} value of the train entities, at layer {layer}.\n"
                + rotation_answer(rows, layer)
            )
        dims = rank_dims(vectors, values, self.opts.top)
        return AgentReply(
            content=f"{ANSWER} the {len(dims)} dims whose values differ most between train "
            f"entities with different {attr}.\n"
            f"[LAYER]: {layer}\n[NEURONS]: {', '.join(str(d) for d in dims)}"
        )
