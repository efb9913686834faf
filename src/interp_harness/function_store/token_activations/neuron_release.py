"""The released observational data of "Rigorously Assessing Natural Language Explanations of
Neurons" (255 GPT-2 XL neurons, GPT-4 explanations, 9,592 labelled sentences). Shared: the neuron
family's targets and scorers read it, and its sentences are a corpus of the SAE build
(token_activations/corpus.py).

The file stores each item's concept span (`test_tokens`) and its post-GELU activations as the
*string* repr of a Python list; both are parsed here with `ast.literal_eval` (literals only). In 36
items the two lists differ in length: they are kept and flagged (`mismatched`), never dropped; the
span's max activation is then the max over whatever values the file gives.
"""

from __future__ import annotations

import ast
import json
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from interp_harness.function_store import datasets

DATASET = "neuron-explanations"  # name in interp_harness.function_store.datasets (`harness data fetch ...`)
FILE = "neuron_explanations/observational_eval_data.json"
NEURON_ARCHIVE = "https://github.com/explanare/eval-neuron-explanation/raw/300eea4/eval_data.tar.gz"

datasets.register(
    datasets.Dataset(
        name=DATASET,
        description="GPT-2 XL neuron explanations with labelled test sentences (observational evaluation)",
        archive_url=NEURON_ARCHIVE,
        files=(
            datasets.FileSpec(
                FILE,
                "observational_eval_data.json",
                "9a7826c46d5c62d8ddf175ab23bccffa6071fc060f975ab9d202cb8faa9da808",
            ),
        ),
    ),
    aliases=("neuron-expl",),  # the name the neuron issue uses
)
Label = Literal["true_positive", "false_positive", "false_negative", "true_negative"]
# The labels take the explanation's viewpoint: TP/FP items are strings the explanation claims
# (q ∈ ⟦E⟧), FN/TN items are strings it does not claim.
IN_EXPLANATION: dict[str, bool] = {
    "true_positive": True,
    "false_positive": True,
    "false_negative": False,
    "true_negative": False,
}


class EvalItem(BaseModel):
    text: str
    tokens: list[str]  # the concept span, GPT-2 tokens
    activations: list[float]  # post-GELU MLP activations of the span's tokens (as shipped)
    label: Label
    mismatched: bool = False  # len(tokens) != len(activations) in the released file

    @property
    def in_explanation(self) -> bool:
        return IN_EXPLANATION[self.label]

    @property
    def max_activation(self) -> float:
        return max(self.activations) if self.activations else float("-inf")

    @property
    def span(self) -> str:
        return "".join(self.tokens)


class NeuronRecord(BaseModel):
    neuron: str  # "layer:index"
    layer: int
    index: int
    explanation: str  # GPT-4's, as released
    items: list[EvalItem]


class DataFormatError(ValueError):
    """The file does not have the released format."""


def _literal_list(raw: object, kind: type, where: str) -> list:
    value = ast.literal_eval(raw) if isinstance(raw, str) else raw
    if not isinstance(value, list) or not all(isinstance(v, kind) for v in value):
        raise DataFormatError(f"{where}: expected a list of {kind.__name__}, got {raw!r:.80}")
    return value


def parse(records: list[dict]) -> list[NeuronRecord]:
    out = []
    for r in records:
        name = r["neuron"]
        layer, index = (int(x) for x in name.split(":"))
        items = []
        for j, it in enumerate(r["eval_data"]):
            where = f"neuron {name} item {j}"
            toks = _literal_list(it["test_tokens"], str, where)
            acts = [float(a) for a in _literal_list(it["neuron_activations"], (int, float), where)]
            items.append(
                EvalItem(
                    text=it["test_input"],
                    tokens=toks,
                    activations=acts,
                    label=it["label"],
                    mismatched=len(toks) != len(acts),
                )
            )
        out.append(
            NeuronRecord(
                neuron=name,
                layer=layer,
                index=index,
                explanation=r["gpt4_explanation"],
                items=items,
            )
        )
    return out


def load(path: Path | None = None, *, verify: bool = True) -> list[NeuronRecord]:
    """The 255 released records. From `path`, else the data directory (checksum-verified)."""
    if path is not None:
        return parse(json.loads(Path(path).read_text()))
    return list(_load_default(datasets.data_dir(), verify))


@lru_cache(maxsize=4)
def _load_default(root: Path, verify: bool) -> tuple[NeuronRecord, ...]:
    p = datasets.data_path(FILE)
    if verify:
        status = datasets.verify(DATASET, root=root)
        if status.get(FILE) != "ok":
            raise datasets.DataUnavailable(
                f"{p}: {status.get(FILE)} (expected the released file; "
                f"`harness data fetch {DATASET}` downloads and checks it)"
            )
    return tuple(parse(json.loads(p.read_text())))
