"""Runners for FIND's entity and relation modules: one backbone batch per call.

The backbone comes from `RuntimeContext.backbone` (a `BackboneClient`, `BackboneSettings` or a URL)
or from `HARNESS_BACKBONE_URL`; with neither, building the runner raises `NoBackboneConfigured`.
A backbone failure does not raise: every input of the call gets an error text the agent can read,
with `error_category="infrastructure"` so the episode records it as such (never as a score).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence

from function_store.models import CallOutput, Target
from function_store.neural.client import BackboneClient, BackboneError, BackboneSettings
from function_store.neural.prompts import messages
from function_store.neural.scoring import format_score
from function_store.runtime import NoBackboneConfigured, RuntimeContext, register_runner

_clients: dict[str, BackboneClient] = {}
_clients_lock = threading.Lock()


def backbone_client(ctx: RuntimeContext | None) -> BackboneClient:
    """The client a runner uses (shared per settings, so connections are reused)."""
    cfg = ctx.backbone if ctx is not None else None
    if isinstance(cfg, BackboneClient):
        return cfg
    if isinstance(cfg, str):
        cfg = BackboneSettings(url=cfg)
    elif isinstance(cfg, dict):
        cfg = BackboneSettings(**cfg)
    elif cfg is None:
        cfg = BackboneSettings.from_env()
    if cfg is None:
        raise NoBackboneConfigured()
    if not isinstance(cfg, BackboneSettings):
        raise TypeError(
            f"RuntimeContext.backbone must be a client, settings or URL, not {type(cfg).__name__}"
        )
    key = cfg.model_dump_json()
    with _clients_lock:
        if key not in _clients:
            _clients[key] = BackboneClient(cfg)
        return _clients[key]


class _NeuralRunner(ABC):
    def __init__(self, target: Target, client: BackboneClient) -> None:
        spec = target.hidden.spec
        self.target_id = target.id
        self.system: str = spec["system_prompt"]
        self.template: str = spec["user_template"]
        self.client = client

    def call(self, inputs: Sequence[str]) -> list[CallOutput]:
        words = list(inputs)
        if not words:
            return []
        try:
            outs = self._outputs([messages(self.system, self.template, w) for w in words])
        except BackboneError as e:
            msg = f"backbone unavailable: {e}"
            return [CallOutput(input=w, error=msg, error_category=e.category) for w in words]
        return [CallOutput(input=w, output=o) for w, o in zip(words, outs, strict=True)]

    @abstractmethod
    def _outputs(self, convs: list[list[dict[str, str]]]) -> list[str]: ...


class EntityRunner(_NeuralRunner):
    """Outputs P("1")/(P("0")+P("1")) with 4 decimals, as FIND prints it."""

    def _outputs(self, convs: list[list[dict[str, str]]]) -> list[str]:
        return [format_score(p) for p in self.client.entity_scores(convs)]


class RelationRunner(_NeuralRunner):
    """Outputs the greedy reply raw, as FIND prints it (see prompts.normalize_relation_output)."""

    def _outputs(self, convs: list[list[dict[str, str]]]) -> list[str]:
        return self.client.relation_replies(convs)


@register_runner("entity")
def entity_runner(target: Target, ctx: RuntimeContext) -> EntityRunner:
    return EntityRunner(target, backbone_client(ctx))


@register_runner("relation")
def relation_runner(target: Target, ctx: RuntimeContext) -> RelationRunner:
    return RelationRunner(target, backbone_client(ctx))
