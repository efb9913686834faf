"""`scripted-neuron`: an offline baseline for neuron targets (Huang et al. 2023), no API needed.

It sends a fixed, varied set of sentences (our own, CHUNK a round), reads each token's activation
from the replies (`The(0.00) cat(2.31) sat(0.10) [max 2.31]`), and describes the neuron by the
distinct words it activates on most: `fires on "x", "y", "z"`. This is the exemplar-list floor an
interpreter without a world model reaches. Stateless between steps: everything is re-read from
the conversation, so a resumed episode continues where it stopped.
"""

from __future__ import annotations

import re

from interp_harness.agents.probing import FixedProbesAgent
from interp_harness.agents.protocol import Observation

SENTENCES = [
    "The cat sat on the warm windowsill all afternoon.",
    "She paid twelve dollars for two coffees and a muffin.",
    "In 1998 the bridge was finally opened to traffic.",
    "He ran quickly, then stopped and looked back.",
    "Paris and Berlin are the capitals of France and Germany.",
    "The doctor said the results would arrive on Monday.",
    "Water boils at one hundred degrees Celsius at sea level.",
    "They were playing football when it started to rain.",
    "My grandmother grows tomatoes, beans and peppers.",
    "The committee will vote on the proposal next week.",
    "A small red boat drifted slowly across the lake.",
    "If you press the button twice, the machine restarts.",
    "The trail is about three miles long and quite steep.",
    "Alice told Bob that she would not come to the party.",
    "Stock prices fell sharply after the announcement.",
    "The children laughed at the clown's silly tricks.",
    "He wrote the function in Python and tested it carefully.",
    "Thousands of people gathered in the square last night.",
    "The recipe calls for two cups of flour and one egg.",
    "Our flight to Tokyo was delayed by four hours.",
    "The old church bell rang at noon every Sunday.",
    "Scientists discovered a new species of frog in Peru.",
    "Please send me the report before Friday afternoon.",
    "The trees were bare, and the wind was cold.",
]  # fmt: skip
CHUNK = 8
_TOKEN = re.compile(r"(.*?)\((-?\d+(?:\.\d+)?)\)")


def parse_activations(output: str) -> list[tuple[str, float]]:
    """(token, activation) pairs of one reply line; the trailing `[max ...]` is ignored."""
    body = re.sub(r"\s*\[max [^\]]*\]\s*$", "", output)
    return [(m.group(1), float(m.group(2))) for m in _TOKEN.finditer(body)]


class ScriptedNeuronAgent(FixedProbesAgent):
    name = "scripted-neuron"
    families = frozenset({"neurons"})
    description = "offline baseline for neuron targets: lists the words with top activations"
    probes, chunk = SENTENCES, CHUNK
    TOP = 5

    def describe(self, obs: list[Observation]) -> str:
        best: dict[str, float] = {}
        for o in obs:
            for tok, v in parse_activations(o.y):
                word = tok.strip().strip(".,;:!?'\"").lower()
                if word and v > best.get(word, float("-inf")):
                    best[word] = v
        ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
        top = [w for w, v in ranked[: self.TOP] if v > 0]
        if not top:
            return "[DESCRIPTION]: The neuron did not activate on any of the texts tried."
        quoted = ", ".join(f'"{w}"' for w in top)
        return (
            f"[DESCRIPTION]: The neuron fires on {quoted}: these words give its largest "
            "activations on the texts tried."
        )
