"""Client of the intervention service (`harness intervention serve`), used by the neuron and RAVEL
code. Same retries and error categories as the backbone client (interp_harness.model_services.http_retry): a
failure after the retries is an `InterventionError` (category `infrastructure`); a refused request
(HTTP 400) fails at once with the server's message.
"""

from __future__ import annotations

import sys
from typing import Any

import httpx
from pydantic import BaseModel, Field, ValidationError

from interp_harness.model_services.http_retry import NotFound, ServiceSettings, request_json
from interp_harness.model_services.intervention import schemas as S


class InterventionError(RuntimeError):
    """The intervention service could not answer: an infrastructure error, never a score."""

    category = "infrastructure"


class InterventionSettings(ServiceSettings):
    URL_ENV = "HARNESS_INTERVENTION_URL"
    ENV = {"timeout_s": "HARNESS_INTERVENTION_TIMEOUT", "retries": "HARNESS_INTERVENTION_RETRIES"}

    url: str  # base URL, e.g. http://127.0.0.1:8010 (with or without /v1)
    timeout_s: float = Field(300.0, gt=0)  # large batches take a while on CPU


class _Deleted(BaseModel):
    deleted: str


class InterventionClient:
    def __init__(self, settings: InterventionSettings | str) -> None:
        self.settings = (
            InterventionSettings(url=settings) if isinstance(settings, str) else settings
        )
        s = self.settings
        self._http = httpx.Client(timeout=httpx.Timeout(s.timeout_s, connect=s.connect_timeout_s))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> InterventionClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _call(self, method: str, path: str, body: Any, out: type[BaseModel]) -> Any:
        s = self.settings
        url = (s.api_base[: -len("/v1")] if path == "/health" else s.api_base) + path
        try:
            data = request_json(
                self._http,
                method,
                url,
                body,
                s,
                service=f"intervention service at {s.api_base}",
                error=InterventionError,
            )
        except NotFound as e:
            raise InterventionError(f"{url}: HTTP {e.status}: {e.body}") from e
        try:
            return out.model_validate(data)
        except ValidationError as e:
            raise InterventionError(f"malformed reply from {url}: {str(e).splitlines()[0]}") from e

    def _post(self, path: str, req: BaseModel | dict, out: type[BaseModel]) -> Any:
        body = req.model_dump(exclude_none=True) if isinstance(req, BaseModel) else req
        return self._call("POST", path, body, out)

    # --- API ---------------------------------------------------------------------------------
    def model(self) -> S.ModelInfo:
        return self._call("GET", "/models", None, S.ModelList).data[0]

    def tokenize(self, texts: list[str]) -> list[S.TokenizedText]:
        return self._post("/tokenize", S.TokenizeRequest(texts=texts), S.TokenizeResponse).results

    def activations(self, req: S.ActivationsRequest | dict) -> S.ActivationsResponse:
        return self._post("/activations", req, S.ActivationsResponse)

    def interchange(self, req: S.InterchangeRequest | dict) -> S.InterchangeResponse:
        return self._post("/interchange", req, S.InterchangeResponse)

    def generate(self, req: S.GenerateRequest | dict) -> S.GenerateResponse:
        return self._post("/generate", req, S.GenerateResponse)

    def register_featurizer(self, spec: S.FeaturizerSpec | dict) -> S.FeaturizerInfo:
        return self._post("/featurizers", spec, S.FeaturizerInfo)

    def delete_featurizer(self, fid: str) -> None:
        self._call("DELETE", f"/featurizers/{fid}", None, _Deleted)

    def featurizers(self) -> list[S.FeaturizerInfo]:
        return self._call("GET", "/featurizers", None, S.FeaturizerList).data

    def saes(self) -> list[S.SAEInfo]:
        """The SAEs the service encodes with (`sae` of an activations request)."""
        return self._call("GET", "/saes", None, S.SAEList).data


def serve_argv(model: str) -> list[str]:
    """The command that serves `model`'s internals from a process of its own on this machine
    (`harness intervention serve`), for callers that start their own server."""
    return [sys.executable, "-m", "interp_harness.harness.cli", "intervention", "serve",
            "--model", model]  # fmt: skip
