"""FIND's synthetic neural modules (entities, relations): prompts, scoring, the backbone client and
the runners. Runners register on import of `interp_harness.targets.entities_relations.runners` (done lazily by
`interp_harness.targets.runtime` for runner names starting with `entity` / `relation`)."""

from interp_harness.targets.entities_relations.client import (
    BackboneClient,
    BackboneError,
    BackboneSettings,
)
from interp_harness.targets.entities_relations.prompts import normalize_relation_output

__all__ = ["BackboneClient", "BackboneError", "BackboneSettings", "normalize_relation_output"]
