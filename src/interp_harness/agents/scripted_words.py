"""`scripted-entities` and `scripted-relations`: offline baselines for FIND's neural modules (word
in, score or word out), no API needed.

Both call f on a fixed, varied vocabulary (16 words a round) (our own list, spanning many domains; nothing from the
benchmark's unit tests), then describe it by the evidence, as an interpreter with no world model
would: entities by the words f scores highest and lowest, relations by the mappings observed
(and, for [DOMAIN], the inputs f gave no mapping for). A real interpreter names the concept; these
set the floor an exemplar list reaches with the judge. Stateless between steps: everything is
re-read from the conversation, so a resumed episode continues where it stopped.
"""

from __future__ import annotations

import math

from interp_harness.agents.probing import FixedProbesAgent
from interp_harness.agents.protocol import Observation, parse_value

VOCABULARY = [
    "France", "Japan", "Paris", "Tokyo", "Nile", "Einstein", "Shakespeare", "Olympics",
    "election", "war", "football", "chess", "bicycle", "electron", "algebra", "protein",
    "volcano", "granite", "computer", "software", "apple", "bread", "coffee", "chair",
    "shirt", "dog", "eagle", "oak", "judge", "parliament", "church", "school", "doctor",
    "money", "novel", "symphony", "painting", "film", "newspaper", "airplane", "train",
    "ship", "hurricane", "winter", "happiness", "freedom", "seven", "percent",
]  # fmt: skip
CHUNK = 16  # words per call: each is one backbone prompt, and a call has a time limit


class ScriptedEntitiesAgent(FixedProbesAgent):
    """Probes a fixed vocabulary, then names the words f scores highest."""

    name = "scripted-entities"
    families = frozenset({"entities"})
    description = "offline baseline for FIND entity modules: lists the top-scoring probe words"
    probes, chunk = VOCABULARY, CHUNK
    TOP = 8

    def describe(self, obs: list[Observation]) -> str:
        scored = []
        for o in obs:
            v = parse_value(o.y)
            if isinstance(v, float | int) and math.isfinite(v):
                scored.append((float(v), o.x))
        if not scored:
            return "[DESCRIPTION]: The function gave no numeric scores for common words."
        scored.sort(key=lambda p: (-p[0], p[1]))
        top = [x for v, x in scored[: self.TOP] if v >= 0.5] or [scored[0][1]]
        low = [x for _, x in scored[-3:]]
        return (
            f"[DESCRIPTION]: The function is selective for the concept shared by "
            f"{', '.join(top)}: these words score highest (close to 1), while words such as "
            f"{', '.join(low)} score close to 0."
        )


class ScriptedRelationsAgent(FixedProbesAgent):
    """Probes a fixed vocabulary, then describes the rule by the mappings observed."""

    name = "scripted-relations"
    families = frozenset({"relations"})
    description = "offline baseline for FIND relation modules: lists the observed mappings"
    probes, chunk = VOCABULARY, CHUNK
    SHOWN = 10

    def describe(self, obs: list[Observation]) -> str:
        mapped = [(o.x, o.y.strip()) for o in obs if _is_mapping(o.y)]
        unmapped = [o.x for o in obs if not _is_mapping(o.y)]
        if not mapped:
            return (
                "[DESCRIPTION]: The function returned no output word for common words.\n"
                "[DOMAIN]: No input tried produced a mapping."
            )
        examples = "; ".join(f"{x} -> {y}" for x, y in mapped[: self.SHOWN])
        domain = (
            f"The rule gives an answer for inputs such as {', '.join(x for x, _ in mapped[:5])}; "
            f"for inputs such as {', '.join(unmapped[:5])} it gives none."
            if unmapped
            else "The rule applied to every input tried."
        )
        return (
            f"[DESCRIPTION]: The function maps each input word to a related word, as in: "
            f"{examples}.\n[DOMAIN]: {domain}"
        )


def _is_mapping(y: str) -> bool:
    s = y.strip().strip("'\"").lower()
    return bool(s) and s not in ("none", "n/a", "unknown", "error") and not s.startswith("error")
