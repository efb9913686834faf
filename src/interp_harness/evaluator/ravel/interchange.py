"""Run one localisation over RAVEL pairs through the intervention service and collect the outcomes
Cause / Isolate are computed from (scores.py). The site is the last entity token of base and
source at one layer's residual stream (`block_output`), as in RAVEL."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from interp_harness.evaluator.ravel.scores import ExampleOutcome
from interp_harness.function_store.ravel.instances import RavelExample
from interp_harness.model_services.intervention.client import InterventionClient

Progress = Callable[[int, int], None]
NOTHING = "nothing"  # no intervention: the base run as it is
WHOLE = "whole"  # the whole residual vector is swapped


def label_ids(client: InterventionClient, labels: Sequence[str]) -> dict[str, list[int]]:
    """Token ids of each label as it follows a prompt: tokenised after a '0' whose ids (and any
    BOS) are cut off, so a SentencePiece tokenizer keeps the leading space (RAVEL's SOS_PAD)."""
    uniq = sorted(set(labels))
    toks = client.tokenize(["0", *("0" + x for x in uniq)])
    prefix = toks[0].ids
    out = {}
    for lab, t in zip(uniq, toks[1:], strict=True):
        ids = t.ids[len(prefix) :] if t.ids[: len(prefix)] == prefix else t.ids
        out[lab] = ids
    return out


def run(
    client: InterventionClient,
    examples: Sequence[RavelExample],
    layer: int,
    what: Literal["nothing", "whole"] | tuple[str, list[int] | None],
    max_new_tokens: int = 1,
    batch_size: int = 32,
    progress: Progress | None = None,
) -> list[ExampleOutcome]:
    """`what`: NOTHING, WHOLE, or (featurizer id, dims or None for its registered dims)."""
    ids = label_ids(client, [x for e in examples for x in (e.label, e.inv_label)])
    generated: list[list[int]] = []
    for i in range(0, len(examples), batch_size):
        chunk = examples[i : i + batch_size]
        if what == NOTHING:
            res = client.generate(
                {"prompts": [e.input for e in chunk], "max_new_tokens": max_new_tokens}
            ).results
            generated += [r.ids for r in res]
        else:
            site: dict = {
                "layer": layer,
                "component": "block_output",
                "base_positions": [{"char_span": list(e.base_span())} for e in chunk],
                "source_positions": [{"char_span": list(e.source_span())} for e in chunk],
            }
            if what != WHOLE:
                fid, dims = what
                site["featurizer"] = {"id": fid, **({"dims": dims} if dims else {})}
            req = {
                "examples": [{"base": e.input, "sources": [e.source_input]} for e in chunk],
                "sites": [site],
                "max_new_tokens": max_new_tokens,
                "return_original": False,
            }
            generated += [r.intervened.ids for r in client.interchange(req).results]
        if progress:
            progress(min(i + batch_size, len(examples)), len(examples))
    return [
        ExampleOutcome(
            attribute=e.attribute,
            template=e.split,
            generated_ids=g,
            label_ids=ids[e.label],
            inv_label_ids=ids[e.inv_label],
        )
        for e, g in zip(examples, generated, strict=True)
    ]
