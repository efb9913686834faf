"""Offline baselines for SAE latent targets, no API needed.

- `scripted-sae`: sends a fixed, varied set of texts (ours: prose, numbers, dates, names, code,
  markup), reads each token's latent activation from the replies (the neuron reply format,
  `The(0.00) cat(2.31) [max 2.31]`) and describes the latent by the distinct tokens with the
  largest activations, the way max-activating-example explainers start (Bills et al. 2023;
  Paulo et al. 2024).
- `sae-frequent-tokens`: the floor: the same texts, described by the k tokens that activate the
  latent most often, whatever the activation's size.
SAE latents are sparse (most fire on well under 1% of tokens), so the probes are many more than
the neuron baseline's. Stateless between steps, like every FixedProbesAgent.
"""

from __future__ import annotations

from collections import Counter
from typing import ClassVar, Literal

from interp_harness.agents.probing import FixedProbesAgent
from interp_harness.agents.protocol import Observation
from interp_harness.agents.scripted_neuron import SENTENCES, parse_activations

EXTRA = [
    "def add(a, b):\n    return a + b",
    "for i in range(10):\n    print(i * 2)",
    "import os\npath = os.path.join(root, 'data.csv')",
    "class Point:\n    def __init__(self, x, y):\n        self.x = x",
    "if value is None:\n    raise ValueError('missing value')",
    "The list comprehension [x ** 2 for x in items] builds a new list.",
    "Use the --verbose flag to print every step of the build.",
    "<div class=\"header\"><a href=\"/home\">Home</a></div>",
    "SELECT name, age FROM users WHERE age > 30 ORDER BY name;",
    "The meeting moved from Tuesday, March 3 to Thursday, March 5.",
    "Her phone number is 555-0142 and her office is room 214.",
    "In 2021, revenue grew by 14.5% to $3.2 billion.",
    "Dr. Smith and Prof. Jones met in London, England.",
    "The Amazon, the Nile and the Yangtze are long rivers.",
    "Shakespeare wrote Hamlet, Macbeth and King Lear.",
    "She whispered, \"Don't forget to lock the door!\"",
    "Wait... what? No way! Are you serious?",
    "The mitochondria is the powerhouse of the cell.",
    "Photosynthesis converts light energy into chemical energy.",
    "The court ruled that the contract was void and unenforceable.",
    "Add salt, pepper, and a pinch of sugar, then stir well.",
    "The striker scored twice in the second half of the match.",
    "Happy birthday! We wish you all the best this year.",
    "I think, therefore I am, said the philosopher.",
    "The train leaves at 7:45 am from platform 9.",
    "Mount Everest is 8,849 metres above sea level.",
    "He was angry, then sad, and finally relieved.",
    "The quick brown fox jumps over the lazy dog.",
    "Error: file not found (code 404).",
    "January, February and December are cold months here.",
    "The patient's temperature rose to 39 degrees overnight.",
    "Click Save, then close the window and restart the app.",
    "x = 3; y = x + 4; z = y * 2",
    "The violinist played a sonata by Mozart and a partita by Bach.",
    "Our neighbours adopted two kittens and an old dog.",
    "Breaking news: the central bank raised interest rates again.",
    "My favourite colours are blue, green and deep purple.",
    "Tokyo, Seoul and Beijing are large Asian cities.",
    "The spaceship orbited Mars for three weeks.",
    "Once upon a time, a princess lived in a tall tower.",
]  # fmt: skip


class ScriptedSAEAgent(FixedProbesAgent):
    name = "scripted-sae"
    families = frozenset({"sae"})
    description = "offline baseline for SAE latents: lists the tokens with top activations"
    probes = [*SENTENCES, *EXTRA]
    chunk = 16
    TOP: ClassVar[int] = 5
    rank: ClassVar[Literal["max", "count"]] = "max"

    def describe(self, obs: list[Observation]) -> str:
        top = top_tokens(obs, self.TOP, self.rank)
        if not top:
            return "[DESCRIPTION]: The latent did not activate on any of the texts tried."
        quoted = ", ".join(f'"{t}"' for t in top)
        why = "largest activations" if self.rank == "max" else "most frequent activations"
        return f"[DESCRIPTION]: The latent fires on {quoted}: these tokens give its {why}."


class FrequentTokensFloor(ScriptedSAEAgent):
    name = "sae-frequent-tokens"
    description = "floor for SAE latents: the k tokens that activate the latent most often"
    rank = "count"


def top_tokens(obs: list[Observation], k: int, rank: Literal["max", "count"]) -> list[str]:
    """The k distinct tokens (stripped of surrounding spaces) that activate (value > 0) the most:
    by their largest activation, or by how often they activate; ties by the token."""
    best: dict[str, float] = {}
    count: Counter[str] = Counter()
    for o in obs:
        for tok, v in parse_activations(o.y):
            token = tok.strip()
            if token and v > 0:
                best[token] = max(v, best.get(token, v))
                count[token] += 1
    key = best if rank == "max" else count
    return sorted(key, key=lambda t: (-key[t], t))[:k]
