"""The released RAVEL files of one entity type (RAVEL's `data.tgz`), read through the dataset
registry (`harness data fetch ravel` verifies their checksums into the cache; tests read
../shared/data)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, get_args

from interp_harness.function_store.datasets import Dataset, FileSpec, data_path, register

RAVEL_ARCHIVE = "https://github.com/explanare/ravel/raw/e421fc9/data.tgz"

RAVEL = register(
    Dataset(
        name="ravel",
        description="RAVEL entities, attributes, prompt templates, Wikipedia prompts and splits (5 entity types)",
        archive_url=RAVEL_ARCHIVE,
        files=(
            FileSpec(
                "ravel/ravel_city_attribute_to_prompts.json",
                "ravel_city_attribute_to_prompts.json",
                "4e40cb291cf532c6c8d3c764a3e9b46c2678120feb513055fab39ec51b66398a",
            ),
            FileSpec(
                "ravel/ravel_city_entity_attributes.json",
                "ravel_city_entity_attributes.json",
                "c3568f424f4c4349b85404be17f7671c36fd54945f4759ae533079cba9cd54fd",
            ),
            FileSpec(
                "ravel/ravel_city_entity_to_split.json",
                "ravel_city_entity_to_split.json",
                "9a1e0886b59d4313c153637ffdbeee9e403bce2dbdba8b59ff2a58b9049b842f",
            ),
            FileSpec(
                "ravel/ravel_city_prompt_to_split.json",
                "ravel_city_prompt_to_split.json",
                "f805ec435d64673f0d4eff77b2c4a107abbd2a55df19543876a7e2b0feba352c",
            ),
            FileSpec(
                "ravel/ravel_nobel_prize_winner_attribute_to_prompts.json",
                "ravel_nobel_prize_winner_attribute_to_prompts.json",
                "fad17ac4c798e4d5412591afd4c06a20f1cde930b53ded199f5e27ab21656f2d",
            ),
            FileSpec(
                "ravel/ravel_nobel_prize_winner_entity_attributes.json",
                "ravel_nobel_prize_winner_entity_attributes.json",
                "2a4d66328011bb2c63abc6434446236ccb0da73c727c2f68ea12447277f81c6f",
            ),
            FileSpec(
                "ravel/ravel_nobel_prize_winner_entity_to_split.json",
                "ravel_nobel_prize_winner_entity_to_split.json",
                "066e470ee344a4836f87d2f680ab13850ed1bcba86a788d6e20fa6d4abd80f45",
            ),
            FileSpec(
                "ravel/ravel_nobel_prize_winner_prompt_to_split.json",
                "ravel_nobel_prize_winner_prompt_to_split.json",
                "ac070b66540acc9fbca5fc13e8fe612d7c32a9d99940c1e6e93bf4de0ed60982",
            ),
            FileSpec(
                "ravel/ravel_occupation_attribute_to_prompts.json",
                "ravel_occupation_attribute_to_prompts.json",
                "59bd9bd6613512c9172c7b1871c85a10e4eeea1dc77f97510b241c9545ac45e8",
            ),
            FileSpec(
                "ravel/ravel_occupation_entity_attributes.json",
                "ravel_occupation_entity_attributes.json",
                "b670c6f2f521b19ef5d62e55a1380ec5ff046c14cfa72fdd440c07dde7d01066",
            ),
            FileSpec(
                "ravel/ravel_occupation_entity_to_split.json",
                "ravel_occupation_entity_to_split.json",
                "fe137fa81baa27b91855abc8730855b070ee880c3be6659fd3c1c11df2165b86",
            ),
            FileSpec(
                "ravel/ravel_occupation_prompt_to_split.json",
                "ravel_occupation_prompt_to_split.json",
                "78b336530d354cc25ce29caaae1e4534765de2c15918a0db9d532174e3739296",
            ),
            FileSpec(
                "ravel/ravel_physical_object_attribute_to_prompts.json",
                "ravel_physical_object_attribute_to_prompts.json",
                "f84547c0c3478fe5f966aaafdf3601b1eef6e6326070fa735083f151800d8de9",
            ),
            FileSpec(
                "ravel/ravel_physical_object_entity_attributes.json",
                "ravel_physical_object_entity_attributes.json",
                "672584e27d5027e9ff3391d33a72e69ccdde1cadbf15260a277e1084dd5d1b7a",
            ),
            FileSpec(
                "ravel/ravel_physical_object_entity_to_split.json",
                "ravel_physical_object_entity_to_split.json",
                "d085553d2dd8377e7ef502c7cf7033fe6c9ff614933bb85ca6bd6147c3c128b6",
            ),
            FileSpec(
                "ravel/ravel_physical_object_prompt_to_split.json",
                "ravel_physical_object_prompt_to_split.json",
                "9f87c9e2079636d990b64ab08e294d16bbc37d87c1290be4b2217357db1062f0",
            ),
            FileSpec(
                "ravel/ravel_verb_attribute_to_prompts.json",
                "ravel_verb_attribute_to_prompts.json",
                "e7fa54f8d3e2bd865b8821bff33976d69ac12cebb661f7a13314221636b719ee",
            ),
            FileSpec(
                "ravel/ravel_verb_entity_attributes.json",
                "ravel_verb_entity_attributes.json",
                "309c015a1e14fc32090d16b48ff3634d7e627cd7a2a055ea879070db97d10347",
            ),
            FileSpec(
                "ravel/ravel_verb_entity_to_split.json",
                "ravel_verb_entity_to_split.json",
                "4ebfadc203a3e3098d9a8ce680d7185acc78fc0e66124a0391424c22805b565d",
            ),
            FileSpec(
                "ravel/ravel_verb_prompt_to_split.json",
                "ravel_verb_prompt_to_split.json",
                "dac8e8d38bd1fb6c1d8a5a4efeb1ad011b17589a9b4d1686b6be6ba6bcac4d6f",
            ),
            FileSpec(
                "ravel/wikipedia_city_entity_prompts.json",
                "wikipedia_city_entity_prompts.json",
                "0b27cc890efbaf62ef5292fcb9f157c170685a0d8930327dc4e8f8b5a4f8722f",
            ),
            FileSpec(
                "ravel/wikipedia_nobel_prize_winner_entity_prompts.json",
                "wikipedia_nobel_prize_winner_entity_prompts.json",
                "0b98d65358cc779bcf67c3a5dc065795521a9e8ed303f72159d33af18d05d4a2",
            ),
            FileSpec(
                "ravel/wikipedia_occupation_entity_prompts.json",
                "wikipedia_occupation_entity_prompts.json",
                "9232b746f18d8cf7ad1da1d0662e5f3ce7e8dfb3509f2e5af32043f00710a612",
            ),
            FileSpec(
                "ravel/wikipedia_physical_object_entity_prompts.json",
                "wikipedia_physical_object_entity_prompts.json",
                "821e4c4aeadf1faa0a1df1708c50df7b87e4cf44684793fc0b4d691c6225dcbf",
            ),
            FileSpec(
                "ravel/wikipedia_verb_entity_prompts.json",
                "wikipedia_verb_entity_prompts.json",
                "f599f546ff76f4ec59e831042d4026747aa7ebfaeb7e747c94a0f5bf6e9ba462",
            ),
        ),
    )
)

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
