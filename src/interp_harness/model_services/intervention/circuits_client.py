"""Client of the intervention service's compiled transformers (`/v1/circuits`, circuits.py).

`RemoteCircuitModel` stands for `CircuitModel` where the target service forwards a target's
experiments to the service: the same attributes and experiment methods the runner uses, the same
return values (decoded outputs as lists, activations as an array with NaN past an input's end),
and the same errors: a request the service refuses (HTTP 400) raises `CircuitInputError` with
its message (the caller's to fix); anything else is an `InterventionError` (infrastructure).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ValidationError

from interp_harness.model_services.intervention import schemas as S
from interp_harness.model_services.intervention.circuit_model import CircuitInputError
from interp_harness.model_services.intervention.client import (
    InterventionClient,
    InterventionError,
    InterventionSettings,
)


class CircuitsSettings(InterventionSettings):
    """Where the compiled transformers are served (operator): HARNESS_CIRCUITS_URL; timeout and
    retries as the intervention client's (HARNESS_INTERVENTION_TIMEOUT, _RETRIES)."""

    URL_ENV = "HARNESS_CIRCUITS_URL"

    timeout_s: float = 60.0  # a call takes milliseconds; a minute is a service in trouble


class CircuitsClient(InterventionClient):
    """The intervention client (its connection, retries and reply checks), subclassed for the
    `/v1/circuits` routes; a request the service refuses (HTTP 400) is the caller's to fix, a
    `CircuitInputError` with the service's message."""

    def __init__(self, settings: CircuitsSettings | str) -> None:
        super().__init__(CircuitsSettings(url=settings) if isinstance(settings, str) else settings)

    def _call(self, method: str, path: str, body: Any, out: type[BaseModel]) -> Any:
        try:
            return super()._call(method, path, body, out)
        except InterventionError as e:
            if getattr(e, "status", None) == 400:
                raise CircuitInputError(_message(getattr(e, "body", ""))) from None
            raise

    def circuit_targets(self) -> list[str]:
        return self._call("GET", "/circuits", None, S.CircuitTargetList).data

    def circuit(self, target: str) -> S.CircuitTarget:
        return self._call("GET", f"/circuits/{target}", None, S.CircuitTarget)

    def circuit_run(self, req: S.CircuitRunRequest) -> S.CircuitOutputs:
        return self._post("/circuits/run", req, S.CircuitOutputs)

    def circuit_ablate(self, req: S.CircuitAblateRequest) -> S.CircuitOutputs:
        return self._post("/circuits/ablate", req, S.CircuitOutputs)

    def circuit_patch(self, req: S.CircuitPatchRequest) -> S.CircuitOutputs:
        return self._post("/circuits/patch", req, S.CircuitOutputs)

    def circuit_activations(self, req: S.CircuitActivationsRequest) -> S.CircuitActivationsResponse:
        return self._post("/circuits/activations", req, S.CircuitActivationsResponse)

    def circuit_tokenize(self, req: S.CircuitTokenizeRequest) -> S.CircuitTokenizeResponse:
        return self._post("/circuits/tokenize", req, S.CircuitTokenizeResponse)


def _message(body: str) -> str:
    """The service's message for a refused request (its error body), else a fixed text."""
    try:
        return str(json.loads(body)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return "the request was refused"


class RemoteCircuitModel:
    """One served target through `client`, with `CircuitModel`'s interface as the runner uses it.
    Its shape is read once, at construction (raises InterventionError when the service does not
    serve the target)."""

    def __init__(self, client: CircuitsClient, target: str) -> None:
        self.client = client
        self.target = target
        info = client.circuit(target)
        self.vocab: list[Any] = list(info.vocab)
        self.max_len: int = info.max_len
        self.n_layers: int = info.n_layers
        self.n_heads: int = info.n_heads
        self.output_kind: str = info.output_kind
        self._components = list(info.components)

    def all_components(self) -> list[str]:
        return list(self._components)

    def run(self, inputs: Sequence[Sequence[Any]]) -> list[list[Any]]:
        req = S.CircuitRunRequest(target=self.target, inputs=_lists(inputs))
        return self.client.circuit_run(req).results

    def ablate(
        self,
        inputs: Sequence[Sequence[Any]],
        components: Iterable[str],
        kind: str = "zero",
        reference: Sequence[Sequence[Any]] | None = None,
        seed: int = 0,
    ) -> list[list[Any]]:
        req = _build(
            S.CircuitAblateRequest,
            target=self.target,
            inputs=_lists(inputs),
            components=list(components),
            kind=kind,
            reference=_lists(reference) if reference is not None else None,
            seed=seed,
        )
        return self.client.circuit_ablate(req).results

    def patch(
        self,
        base: Sequence[Sequence[Any]],
        source: Sequence[Sequence[Any]],
        components: Iterable[str],
    ) -> list[list[Any]]:
        req = _build(
            S.CircuitPatchRequest,
            target=self.target,
            base=_lists(base),
            source=_lists(source),
            components=list(components),
        )
        return self.client.circuit_patch(req).results

    def activations(self, inputs: Sequence[Sequence[Any]], component: str) -> np.ndarray:
        req = _build(
            S.CircuitActivationsRequest,
            target=self.target,
            inputs=_lists(inputs),
            component=component,
        )
        values = self.client.circuit_activations(req).results
        return np.array(values, dtype=np.float64) if values else np.zeros((0, 0, 0))


def _lists(inputs: Sequence[Sequence[Any]]) -> list[list[Any]]:
    return [list(x) for x in inputs]


def _build(model: type[BaseModel], **fields: Any) -> Any:
    """The request, or CircuitInputError naming what the service's bounds refuse (a component
    name too long, an unknown ablation kind): the caller's to fix, as the service would say."""
    try:
        return model(**fields)
    except ValidationError as e:
        where = ".".join(str(x) for x in e.errors()[0]["loc"])
        raise CircuitInputError(f"{where}: {e.errors()[0]['msg']}") from None
