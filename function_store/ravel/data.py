"""The released RAVEL files of one entity type (RAVEL's `data.tgz`), read through the dataset
registry (`harness data fetch ravel` verifies their checksums into the cache; tests read
../shared/data)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, get_args

from function_store.datasets import data_path

EntityType = Literal["city", "nobel_prize_winner", "occupation", "physical_object", "verb"]
ENTITY_TYPES: tuple[str, ...] = get_args(EntityType)
Split = Literal["train", "val", "test"]


@dataclass(frozen=True)
class RavelData:
    entity_type: str
    attributes: dict[str, dict[str, str]]  # entity -> attribute -> gold value ("" = unknown)
    attribute_prompts: dict[str, list[str]]  # attribute -> templates (one "%s" each)
    prompt_split: dict[str, str]  # template -> train / val / test
    entity_split: dict[str, str]  # entity -> train / val / test
    wiki_prompts: dict[str, dict]  # template -> {"split", "entity" (None: any entity)}

    @property
    def attribute_names(self) -> list[str]:
        return list(self.attribute_prompts)

    def entities(self, split: str) -> list[str]:
        return sorted(e for e, s in self.entity_split.items() if s == split)

    def templates(self, attribute: str, split: str) -> list[str]:
        return [t for t in self.attribute_prompts[attribute] if self.prompt_split[t] == split]

    def wiki_templates(self, split: str) -> list[str]:
        """Wikipedia templates any entity may fill (entity null), in file order."""
        return sorted(
            t for t, v in self.wiki_prompts.items() if v["split"] == split and v["entity"] is None
        )


def file_names(entity_type: str) -> list[str]:
    return [
        f"ravel/ravel_{entity_type}_entity_attributes.json",
        f"ravel/ravel_{entity_type}_attribute_to_prompts.json",
        f"ravel/ravel_{entity_type}_prompt_to_split.json",
        f"ravel/ravel_{entity_type}_entity_to_split.json",
        f"ravel/wikipedia_{entity_type}_entity_prompts.json",
    ]


@lru_cache(maxsize=8)
def load(entity_type: str) -> RavelData:
    if entity_type not in ENTITY_TYPES:
        raise ValueError(f"unknown RAVEL entity type {entity_type!r}; one of {list(ENTITY_TYPES)}")
    parts = [json.loads(data_path(p).read_text(encoding="utf-8")) for p in file_names(entity_type)]
    d = RavelData(entity_type, *parts)
    for attr, temps in d.attribute_prompts.items():
        bad = [t for t in temps if t.count("%s") != 1]
        if bad:
            raise ValueError(f"{entity_type}/{attr}: templates without exactly one %s: {bad[:2]}")
    return d
