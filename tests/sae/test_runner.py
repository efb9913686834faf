"""Runner kind `sae` against the real intervention service: replies in the neuron format with the
catalog's activations, fixed error strings that name nothing of the SAE."""

from __future__ import annotations

import re
from pathlib import Path

from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.runtime import RuntimeContext
from interp_harness.function_store.sae.catalog import SAECatalog
from interp_harness.function_store.sae.runner import UNAVAILABLE, SAERunner


def _runner(target_id: str, url: str, **spec: object) -> SAERunner:
    t = Catalog().get(target_id)
    hidden = t.hidden.model_copy(update={"spec": {**t.hidden.spec, **spec}})
    return SAERunner(
        t.model_copy(update={"hidden": hidden}), RuntimeContext(extra={"backbone_url": url})
    )


def _values(reply: str) -> list[float]:
    return [float(v) for v in re.findall(r"\((-?\d+\.\d\d)\)", reply)]


def test_reply_is_the_catalogued_activations(
    built: SAECatalog, in_cache: Path, sae_llama_url: str
) -> None:
    r = built.latents[0]
    runner = _runner(f"sae/llama-tiny-random/{built.sae}/{r.latent}", sae_llama_url)
    examples = [r.activating[0], r.non_activating[0]]
    out = runner.call([e.text for e in examples])
    for o, e in zip(out, examples, strict=True):
        assert o.error is None
        got = _values(o.output)
        assert len(got) == len(e.acts)
        assert all(abs(a - b) <= 0.006 for a, b in zip(got, e.acts, strict=True))
        assert o.output.endswith(f"[max {max(e.acts):.2f}]")


def test_service_errors_are_fixed_strings(
    built: SAECatalog, in_cache: Path, sae_llama_url: str
) -> None:
    """A request the service refuses (an SAE it does not serve) reads as the fixed string: the
    service's message, which names the SAE, never reaches the agent."""
    r = built.latents[0]
    runner = _runner(
        f"sae/llama-tiny-random/{built.sae}/{r.latent}", sae_llama_url, sae="secret-sae-name"
    )
    out = runner.call(["The cat sat.", "  "])
    assert out[0].error == UNAVAILABLE and out[0].error_category == "infrastructure"
    assert out[1].error == "empty text"
    assert "secret-sae-name" not in repr(out)
