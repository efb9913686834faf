"""Runners for FIND's entity and relation modules: one backbone batch per call.

The backbone comes from `RuntimeContext.backbone` (a `BackboneClient`, `BackboneSettings` or a URL)
or from `HARNESS_BACKBONE_URL`; with neither, building the runner raises `NoBackboneConfigured`.
A backbone failure does not raise: every input of the call gets an error text the agent can read,
with `error_category="infrastructure"` so the episode records it as such (never as a score).

An input longer than `max_input_chars` is not sent: it gets an input error the agent can read
and correct, and the call's other inputs are answered. A prompt the backbone still refuses as
longer than its context (a backbone with a short context) is the same kind of input error for
every input of that call. Either way the call answers at once instead of running past the call's
time limit into a target error.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence

from interp_harness.function_store.entities_relations.backbone_prompts import messages
from interp_harness.function_store.entities_relations.client import (
    BackboneClient,
    BackboneError,
    BackboneSettings,
    InputTooLong,
)
from interp_harness.function_store.entities_relations.scoring import format_score
from interp_harness.function_store.runtime import NoBackboneConfigured
from interp_harness.sdk import CallOutput, RuntimeContext, Target, register_runner

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
        cap = self.client.settings.max_input_chars
        out: list[CallOutput | None] = [
            CallOutput(
                input=w,
                error=f"input too long: {len(w)} characters; this target reads at most {cap} "
                "characters per input",
            )
            if len(w) > cap
            else None
            for w in words
        ]
        todo = [i for i, o in enumerate(out) if o is None]
        try:
            outs = self._outputs([messages(self.system, self.template, words[i]) for i in todo])
        except InputTooLong as e:  # the input's fault: the agent reads it and shortens
            msg = f"input too long for the model's context: {e}"
            outs = None
            for i in todo:
                out[i] = CallOutput(input=words[i], error=msg)
        except BackboneError as e:
            msg = f"backbone unavailable: {e}"
            return [CallOutput(input=w, error=msg, error_category=e.category) for w in words]
        if outs is not None:
            for i, o in zip(todo, outs, strict=True):
                out[i] = CallOutput(input=words[i], output=o)
        return [o for o in out if o is not None]

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
