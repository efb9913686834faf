"""Intervention mode (Huang et al. 2023): interchange interventions on neurons of a task's
prompts, IIA and IIA@K.

- Filter: keep the fillers whose prompt the model completes with the expected word.
- Pairs: `n` random (base, source) pairs of kept fillers with different expected words.
- IIA: share of pairs where the base run, with the chosen neurons set to their values from the
  source run, outputs the source's expected word. Positions follow the paper: layers in the first
  half of the model at the concept's tokens (here its last token, so that base and source always
  have one aligned position each), later layers at the last token.
- IIA@K: the top K% of one layer's neurons under a ranking: random, token-activation correlation
  (high on the concept's tokens, low elsewhere in the task's prompts) and the method under test
  (similarity of each neuron's explanation to the concept).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from interp_harness.evaluator.neurons.probe import lexical_similarity
from interp_harness.function_store.neurons.tasks import Task, matches
from interp_harness.model_services.intervention.client import InterventionClient

KS = (1, 6, 12, 25, 50, 75, 100)
Progress = Callable[[int], None]


@dataclass(frozen=True)
class Pair:
    base: str  # filler
    base_out: str
    source: str
    source_out: str


def filter_fillers(
    client: InterventionClient, task: Task, batch: int = 64
) -> list[tuple[str, str]]:
    """The (filler, expected) pairs whose prompt the model answers correctly (greedy next token)."""
    kept = []
    fillers = list(task.fillers)
    for i in range(0, len(fillers), batch):
        chunk = fillers[i : i + batch]
        res = client.generate(
            {"prompts": [task.prompt(f) for f, _ in chunk], "max_new_tokens": 1}
        ).results
        kept += [(f, e) for (f, e), r in zip(chunk, res, strict=True) if matches(r.text, e)]
    return kept


def make_pairs(kept: Sequence[tuple[str, str]], n: int = 256, seed: int = 0) -> list[Pair]:
    """`n` pairs drawn at random (with repetition once the distinct ones run out)."""
    cands = [(b, s) for b in kept for s in kept if b[1] != s[1]]
    if not cands:
        return []
    rng = random.Random(seed)
    picked = rng.sample(cands, n) if n <= len(cands) else [rng.choice(cands) for _ in range(n)]
    return [Pair(b[0], b[1], s[0], s[1]) for b, s in picked]


def at_concept(layer: int, n_layers: int) -> bool:
    """The paper's split (GPT-2 XL layers 1–24 of 48): the first half at the concept's tokens."""
    return layer < n_layers // 2


def _pos(task: Task, filler: str, concept: bool) -> dict | str:
    if not concept:
        return "last"
    _, end = task.slot_chars(filler)
    return {"char_span": [end - 1, end]}  # the token holding the concept's last character


def iia(
    client: InterventionClient,
    task: Task,
    pairs: Sequence[Pair],
    layers: Sequence[int],
    n_layers: int,
    neurons: list[int] | None = None,
    component: str = "mlp_activation",
    batch: int = 64,
    progress: Progress | None = None,
) -> float:
    """IIA of the neuron set (None: the whole component) at `layers`, intervened together."""
    ok = 0
    for i in range(0, len(pairs), batch):
        chunk = pairs[i : i + batch]
        sites = []
        for layer in layers:
            c = at_concept(layer, n_layers)
            sites.append(
                {
                    "layer": layer,
                    "component": component,
                    "base_positions": [_pos(task, p.base, c) for p in chunk],
                    "source_positions": [_pos(task, p.source, c) for p in chunk],
                    **({"neurons": neurons} if neurons is not None else {}),
                }
            )
        res = client.interchange(
            {
                "examples": [
                    {"base": task.prompt(p.base), "sources": [task.prompt(p.source)]} for p in chunk
                ],
                "sites": sites,
                "max_new_tokens": 1,
                "return_original": False,
            }
        ).results
        ok += sum(matches(r.intervened.text, p.source_out) for p, r in zip(chunk, res, strict=True))
        if progress:
            progress(len(chunk))
    return ok / len(pairs) if pairs else float("nan")


# ---- rankings of one layer's neurons ----------------------------------------------------------
def _layer_acts(
    client: InterventionClient, texts: list[str], layer: int
) -> list[tuple[list[str], np.ndarray]]:
    res = client.activations(
        {"texts": texts, "component": "mlp_activation", "layers": [layer], "positions": "all"}
    ).results
    return [(r.tokens, np.array(r.layers[0].values)) for r in res]


def correlation_ranking(
    client: InterventionClient, task: Task, fillers: Sequence[str], layer: int
) -> list[int]:
    """Neurons by the correlation of their activation with "this token is the concept's" over
    every token of the task's prompts (the paper's token-activation correlation baseline)."""
    texts = [task.prompt(f) for f in fillers]
    toks = client.tokenize(texts)
    acts = _layer_acts(client, texts, layer)
    xs, ys = [], []
    for f, t, (_, a) in zip(fillers, toks, acts, strict=True):
        s, e = task.slot_chars(f)
        ys += [float(o[0] < e and o[1] > s) for o in t.offsets]
        xs.append(a)
    X, y = np.vstack(xs), np.array(ys)
    Xc, yc = X - X.mean(0), y - y.mean()
    r = (Xc * yc[:, None]).sum(0) / (np.sqrt((Xc**2).sum(0) * (yc**2).sum()) + 1e-12)
    return [int(i) for i in np.argsort(-r, kind="stable")]


def exemplar_explanations(
    client: InterventionClient, corpus: Sequence[str], layer: int, top: int = 5
) -> list[str]:
    """An explanation per neuron of the layer, written as the scripted baseline would: its
    top-activating words on a probe corpus (`fires on "x", "y", ...`)."""
    acts = _layer_acts(client, list(corpus), layer)
    width = acts[0][1].shape[1]
    best: list[dict[str, float]] = [{} for _ in range(width)]
    for tokens, a in acts:
        for j, tok in enumerate(tokens):
            w = tok.strip().lower()
            if not w.isalpha():
                continue
            for n in np.argsort(-a[j])[:64]:  # each token is an exemplar of its top neurons
                if a[j, n] > best[n].get(w, 0.0):
                    best[n][w] = float(a[j, n])
    out = []
    for b in best:
        words = sorted(b, key=lambda w: -b[w])[:top]
        out.append("fires on " + ", ".join(f'"{w}"' for w in words) if words else "")
    return out


def similarity_ranking(concept: str, explanations: Sequence[str]) -> list[int]:
    sims = lexical_similarity(concept, explanations)
    return [int(i) for i in np.argsort(-sims, kind="stable")]


def random_ranking(width: int, seed: int = 0) -> list[int]:
    return [int(i) for i in np.random.default_rng(seed).permutation(width)]


def top_k(ranking: Sequence[int], k_percent: float) -> list[int] | None:
    """The top K% (at least one neuron); None for the whole layer at K = 100."""
    if k_percent >= 100:
        return None
    return sorted(ranking[: max(1, round(len(ranking) * k_percent / 100))])
