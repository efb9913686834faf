"""FIND's synthetic neural modules (entities, relations): prompts, scoring, the backbone client and
the runners. Runners register on import of `interp_harness.function_store.entities_relations.runner` (done lazily by
`interp_harness.function_store.runtime` for runner names starting with `entity` / `relation`)."""

from interp_harness.function_store.entities_relations.backbone_prompts import (
    normalize_relation_output,
)
from interp_harness.function_store.entities_relations.client import (
    BackboneClient,
    BackboneError,
    BackboneSettings,
)

__all__ = ["BackboneClient", "BackboneError", "BackboneSettings", "normalize_relation_output"]
