"""What every trainer gets: the model in this process at the layer, the instance, the target
attribute, and the scaled-down hyperparameters (docs/ravel.md lists them next to RAVEL's)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import torch

from interp_harness.evaluator.ravel.methods.local import LocalModel
from interp_harness.function_store.ravel.data import load
from interp_harness.function_store.ravel.instances import Instance, RavelExample, fill


@dataclass
class Hyper:
    seed: int = 0
    epochs: int = 2  # DAS / DBM passes over the counterfactual pairs (RAVEL: 3)
    batch_size: int = 16  # as RAVEL
    das_dim: int = 16  # DAS / MDAS k (RAVEL's Gemma demo: n/32 and n/16)
    das_lr: float = 5e-3  # RAVEL: 1e-4 over ~20k pairs; few pairs here need larger steps
    dbm_lr: float = 5e-2
    dbm_l1: float = 1e-3  # coefficient of ||sigmoid(m/T)||_1
    dbm_temperature: tuple[float, float] = (1.0, 0.05)
    cause_samples: int = 400  # RAVEL: 20000
    iso_samples: int = 100  # per other attribute (RAVEL: 5000)
    l1: float = 0.05  # L1 strength of the feature-selection classifier (PCA, SAE)
    sae_latents: int = 4  # × hidden size (RAVEL's Gemma demo: 4×)
    sae_l1: float = 1e-3
    sae_steps: int = 400
    rlap_rank: int = 8
    rlap_steps: int = 300


@dataclass
class TrainContext:
    local: LocalModel
    instance: Instance
    target: str
    hyper: Hyper = field(default_factory=Hyper)

    @property
    def layer(self) -> int:
        return self.local.layer

    def rng(self) -> random.Random:
        return random.Random(self.hyper.seed)

    def entity_inputs(self, attributes: list[str] | None = None) -> tuple[list, list, list]:
        """(texts, spans, gold values of the target) of train templates truncated right after
        the entity, over the train entities (RAVEL's `extract_ravel_entity_features`)."""
        gold = load(self.instance.config.entity_type).attributes
        texts, spans, ys = [], [], []
        for a in attributes or [self.target]:
            for t in self.instance.templates[a]["train"]:
                prefix = t[: t.index("%s")] + "%s"
                for e in self.instance.entities["train"]:
                    text = fill(prefix, e)
                    texts.append(text)
                    spans.append((len(text) - 1, len(text)))
                    ys.append(gold[e].get(self.target, ""))
        return texts, spans, ys

    def target_reps(self) -> tuple[torch.Tensor, list[str]]:
        texts, spans, ys = self.entity_inputs()
        return self.local.hidden(texts, spans), ys

    def pairs(self, multitask: bool) -> list[tuple[RavelExample, str]]:
        """(pair, label to match): the target's pairs match inv_label (cause); with multitask,
        other attributes' pairs match label (isolate), RAVEL's MDAS / MDBM objective."""
        rng = self.rng()
        train = self.instance.examples["train"]
        cause = [e for e in train if e.attribute == self.target]
        out = [
            (e, e.inv_label) for e in rng.sample(cause, min(len(cause), self.hyper.cause_samples))
        ]
        if multitask:
            for a in self.instance.attributes:
                if a == self.target:
                    continue
                iso = [e for e in train if e.attribute == a]
                out += [
                    (e, e.label) for e in rng.sample(iso, min(len(iso), self.hyper.iso_samples))
                ]
        if not out:
            raise ValueError(f"no train pairs for {self.target!r}")
        rng.shuffle(out)
        return out

    def first_token(self, label: str) -> int:
        tok = self.local.tok
        prefix = tok("0", add_special_tokens=True)["input_ids"]
        ids = tok("0" + label, add_special_tokens=True)["input_ids"]
        ids = ids[len(prefix) :] if ids[: len(prefix)] == prefix else ids
        return ids[0]
