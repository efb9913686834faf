"""Simulators: what predicts each token's activation (0-10) from an explanation.

- `EndpointSimulator`: Bills et al.'s "all at once" method over any OpenAI-compatible
  completions endpoint that echoes the prompt with top logprobs (the project's backbone server,
  vLLM). One request per text (`prompt.build`); at each slot the listed alternatives that read
  "0" .. "10" (whitespace stripped) are exponentiated, renormalised over themselves, and their
  expected value is the prediction. A slot where none is listed predicts 0, the scale's most
  common value, and is counted (`unread`). A tokenizer that splits "10" into "1", "0" (SmolLM2,
  Llama) lists "1" for it: that simulator cannot predict above 9 this way.
- `LexicalSimulator`: a token is predicted 10 iff it is one of the explanation's words (its
  quoted strings when it has any, else its content words), else 0. Offline, exact; every report
  row scored with it says "lexical".

Configuration (`HARNESS_SIMULATOR_*`, operator only): URL (unset: the lexical simulator), MODEL
(default: the endpoint's first model), API_KEY, TIMEOUT_S, MAX_RETRIES, TOP_LOGPROBS (15, as
Bills et al. ask), CONCURRENCY. A failure raises `SimulatorError`, a `JudgeError`: scorers record
it as an error state of category "judge", never as a score.
"""

from __future__ import annotations

import asyncio
import bisect
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import httpx
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from interp_harness.evaluator.judge import JudgeError
from interp_harness.evaluator.retrying_post import post_with_retries
from interp_harness.evaluator.simulation import prompt as P
from interp_harness.evaluator.simulation.scale import LEVELS, MAX_LEVEL


class SimulatorSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HARNESS_SIMULATOR_")

    url: str | None = None  # base URL with /v1; unset: the lexical simulator
    model: str | None = None  # None: the first id of GET {url}/models
    api_key: str | None = None
    timeout_s: float = 120.0
    max_retries: int = Field(2, ge=0)
    top_logprobs: int = Field(
        15, ge=1, le=20
    )  # Bills et al. ask for 15; our server lists 20 at most
    concurrency: int = Field(4, ge=1)


class SimulatorError(JudgeError):
    """The simulator gave no prediction (HTTP error, timeout, malformed reply)."""


class Simulation(list[list[float]]):
    """Per text, per token: the predicted activation on the 0-10 scale."""

    unread: int = 0  # slots where the endpoint listed no activation digit


class Simulator(ABC):
    name: str = ""  # what reports show: "lexical", or "<model> at <url>"

    @abstractmethod
    async def simulate(self, explanation: str, texts: Sequence[Sequence[str]]) -> Simulation:
        """Each text's tokens' predicted activations, in order."""

    async def aclose(self) -> None:  # noqa: B027 - optional
        pass


# Words that carry no content in an explanation (what a neuron is said to do, not what it finds).
_STOP = frozenset(
    "a an and or of in on to for with as by at from that this these those is are be the its it "
    "word words token tokens term terms phrase phrases other such like which related various "
    "fires fire firing activates activation neuron latent feature finds detects mentions "
    "mention about especially often typically including".split()
)
_QUOTED = re.compile(r"[\"“”']([^\"“”']{1,40})[\"“”']")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")
_EDGE = " \t\n.,;:!?()[]{}\"'“”"


def _norm(s: str) -> str:
    return s.strip(_EDGE).lower()


def explanation_words(explanation: str) -> frozenset[str]:
    """The strings a lexical simulator looks for: the quoted ones, else the content words."""
    quoted = {_norm(m) for m in _QUOTED.findall(explanation)} - {""}
    if quoted:
        return frozenset(quoted)
    return frozenset(w.lower() for w in _WORD.findall(explanation) if w.lower() not in _STOP)


class LexicalSimulator(Simulator):
    name = "lexical"

    async def simulate(self, explanation: str, texts: Sequence[Sequence[str]]) -> Simulation:
        words = explanation_words(explanation)
        return Simulation(
            [float(MAX_LEVEL) if _norm(t) in words else 0.0 for t in toks] for toks in texts
        )


def expected_value(alternatives: dict[str, float] | None) -> float | None:
    """Σ k·p(k) over the alternatives that read "0" .. "10" (logprobs, renormalised over
    themselves; alternatives that strip to the same level add up). None: no level listed."""
    probs = [0.0] * (MAX_LEVEL + 1)
    for tok, lp in (alternatives or {}).items():
        s = tok.strip()
        if s in LEVELS and lp is not None and math.isfinite(lp):
            probs[int(s)] += math.exp(lp)
    total = sum(probs)
    if total <= 0:
        return None
    return sum(k * p for k, p in enumerate(probs)) / total


def read_slots(logprobs: Any, slots: Sequence[int]) -> tuple[list[float], int]:
    """The expected value at each slot of an echoed legacy-completions `logprobs` object
    (`tokens`, `text_offset`, `top_logprobs`): the alternatives of the token that covers the
    slot's first character (a tokenizer may join the tab to the slot word). Returns the values
    and how many slots listed no level."""
    try:
        tokens = list(logprobs["tokens"])
        offsets = [int(o) for o in logprobs["text_offset"]]
        tops = list(logprobs["top_logprobs"])
    except (KeyError, TypeError, ValueError) as e:
        raise SimulatorError(f"simulator reply without echoed logprobs ({type(e).__name__})") from e
    if not (len(tokens) == len(offsets) == len(tops)) or offsets != sorted(offsets):
        raise SimulatorError("simulator reply: tokens, offsets and logprobs do not line up")
    out, unread = [], 0
    for at in slots:
        i = bisect.bisect_right(offsets, at) - 1
        if i < 0 or offsets[i] + len(tokens[i]) <= at:
            raise SimulatorError(f"simulator reply has no token at prompt offset {at}")
        alts = tops[i]
        if alts is not None and not isinstance(alts, dict):
            raise SimulatorError("simulator reply: top_logprobs is not a mapping per position")
        ev = expected_value(alts)
        if ev is None:
            unread += 1
        out.append(0.0 if ev is None else ev)
    return out, unread


class EndpointSimulator(Simulator):
    """POST {url}/completions, one text per request (`concurrency` at a time), retrying
    transport errors, 5xx/429 and malformed replies."""

    def __init__(
        self, settings: SimulatorSettings, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        if not settings.url:
            raise SimulatorError("no simulator URL (HARNESS_SIMULATOR_URL)")
        self.settings = settings
        self.url = settings.url.rstrip("/")
        self.model = settings.model
        headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
        self._client = httpx.AsyncClient(
            timeout=settings.timeout_s, headers=headers, transport=transport
        )
        self.name = f"{self.model or '?'} at {self.url}"

    async def _model(self) -> str:
        if self.model:
            return self.model
        try:
            r = await self._client.get(f"{self.url}/models")
            self.model = str(r.json()["data"][0]["id"])
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as e:
            raise SimulatorError(
                f"simulator endpoint lists no model: {type(e).__name__}: {e}"
            ) from e
        self.name = f"{self.model} at {self.url}"
        return self.model

    async def _one(
        self, model: str, explanation: str, tokens: Sequence[str]
    ) -> tuple[list[float], int]:
        if not tokens:
            return [], 0
        p = P.build(explanation, tokens)
        body = {
            "model": model,
            "prompt": p.text,
            "echo": True,
            "logprobs": self.settings.top_logprobs,
            # the prompt's logprobs are what is read; one generated token (ignored) because
            # some servers refuse max_tokens 0
            "max_tokens": 1,
            "temperature": 0,
        }
        return await post_with_retries(
            self._client, f"{self.url}/completions", body, max_retries=self.settings.max_retries,
            parse=lambda r: read_slots(r.json()["choices"][0]["logprobs"], p.slots),
            malformed=(ValueError, KeyError, IndexError, TypeError, SimulatorError),
            describe=lambda e, r: f"malformed reply ({type(e).__name__}: {e}): {r.text[:200]!r}",
            error=SimulatorError, what="simulator endpoint",
        )  # fmt: skip

    async def simulate(self, explanation: str, texts: Sequence[Sequence[str]]) -> Simulation:
        model = await self._model()
        gate = asyncio.Semaphore(self.settings.concurrency)

        async def one(tokens: Sequence[str]) -> tuple[list[float], int]:
            async with gate:
                return await self._one(model, explanation, tokens)

        results = await asyncio.gather(*(one(t) for t in texts))
        out = Simulation(values for values, _ in results)
        out.unread = sum(u for _, u in results)
        return out

    async def aclose(self) -> None:
        await self._client.aclose()


def make_simulator(settings: SimulatorSettings | None = None) -> Simulator:
    """The configured simulator: the endpoint's when HARNESS_SIMULATOR_URL is set, else lexical."""
    s = settings or SimulatorSettings()
    return EndpointSimulator(s) if s.url else LexicalSimulator()
