"""FIND's synthetic neural modules (entities, relations): prompts, scoring, the backbone client and
the runners. Runners register on import of `function_store.entities_relations.runners` (done lazily by
`function_store.runtime` for runner names starting with `entity` / `relation`)."""

from function_store.entities_relations.client import BackboneClient, BackboneError, BackboneSettings
from function_store.entities_relations.prompts import normalize_relation_output

__all__ = ["BackboneClient", "BackboneError", "BackboneSettings", "normalize_relation_output"]
