"""Test sets for a *new* explanation E of a neuron, built as Huang et al. 2023 do, cached:
- Type I probes: an LM lists strings in ⟦E⟧ and embeds each in a sentence (q ∈ ⟦E⟧ by design);
- Type II probes: the corpus tokens the neuron activates on most, with their sentences; an LM
  judges whether each is in ⟦E⟧;
- form-based explanations (starts / ends with, contains "x") are decided by a regex instead of an
  LM, for both halves.
The LM is the judge setting (HARNESS_JUDGE_*, any OpenAI-compatible endpoint: operator). The cache
key is (explanation, model, neuron, corpus, sizes); files live under HARNESS_CACHE_DIR.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from interp_harness.evaluator.judge import JudgeClient
from interp_harness.evaluator.token_activations import observational as O
from interp_harness.function_store.datasets import cache_dir
from interp_harness.model_services.intervention.client import InterventionClient

TYPE1_SYSTEM = "You write test data for evaluating descriptions of neurons in language models."
TYPE1_USER = (
    "Description: {explanation}\n"
    "List {n} different words or short phrases that match this description, and write one "
    "natural sentence containing each of them exactly as listed. Answer with one JSON object per "
    'line and nothing else: {{"string": "...", "sentence": "..."}}'
)
TYPE2_USER = (
    "Description: {explanation}\n"
    "Sentence: {sentence}\n"
    'Highlighted string: "{string}"\n'
    "Is the highlighted string, as used in this sentence, an instance of the description? "
    "Answer yes or no."
)


class Probe(BaseModel):
    text: str
    span: tuple[int, int]  # characters of the string in ⟦E⟧ (Type I) or the mined token (II)
    in_explanation: bool
    kind: Literal["type1", "type2"]


class ProbeSet(BaseModel):
    explanation: str
    model: str
    neuron: str  # "layer:index"
    corpus: str
    decider: Literal["lm", "regex"]
    probes: list[Probe]
    dropped: int = 0  # LM lines that were not JSON or whose string is not in its sentence


_FORM = (
    (re.compile(r"(?:start|begin)s?(?:ing)? with [\"']([^\"']+)[\"']", re.I), "^{}"),
    (re.compile(r"end(?:s|ing)? (?:with|in) [\"']([^\"']+)[\"']", re.I), "{}$"),
    (re.compile(r"prefix [\"']([^\"']+)[\"']", re.I), "^{}"),
    (re.compile(r"suffix [\"']([^\"']+)[\"']", re.I), "{}$"),
    (re.compile(r"contain(?:s|ing)? (?:the (?:letters?|string) )?[\"']([^\"']+)[\"']", re.I), "{}"),
)


def form_regex(explanation: str) -> re.Pattern[str] | None:
    """A regex program for a form-based explanation, or None."""
    for pat, fmt in _FORM:
        m = pat.search(explanation)
        if m:
            return re.compile(fmt.format(re.escape(m.group(1).strip())), re.I)
    return None


def cache_path(explanation: str, model: str, neuron: str, corpus: str, sizes: tuple) -> Path:
    key = json.dumps([explanation, model, neuron, corpus, list(sizes)])
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    return cache_dir().parent / "neuron-probes" / f"{digest}.json"


def parse_type1(reply: str) -> tuple[list[Probe], int]:
    probes, dropped = [], 0
    for line in reply.splitlines():
        line = line.strip().rstrip(",")
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
            s, sent = str(obj["string"]).strip(), str(obj["sentence"]).strip()
        except (ValueError, KeyError, TypeError):
            dropped += 1
            continue
        i = sent.find(s) if s else -1
        if i < 0:
            dropped += 1
            continue
        probes.append(Probe(text=sent, span=(i, i + len(s)), in_explanation=True, kind="type1"))
    return probes, dropped


def _yes(text: str) -> bool | None:
    t = text.strip().lower()
    if t.startswith("yes"):
        return True
    if t.startswith("no"):
        return False
    return None


def mine(
    client: InterventionClient, corpus: Sequence[str], layer: int, index: int, n: int
) -> list[tuple[str, tuple[int, int], float]]:
    """The `n` sentences whose most activating token is highest (a > 0), with that token's span."""
    from interp_harness.evaluator.token_activations.testset import read_activations

    acts = read_activations(client, corpus, layer, index)
    offsets = client.tokenize(list(corpus))
    best = []
    for ta, tok in zip(acts, offsets, strict=True):
        if not ta.values:
            continue
        j = max(range(len(ta.values)), key=ta.values.__getitem__)
        if ta.values[j] > 0:
            s, e = tok.offsets[j]
            while s < e and ta.text[s].isspace():  # the string without its leading space
                s += 1
            best.append((ta.text, (s, e), ta.values[j]))
    best.sort(key=lambda b: -b[2])
    return best[:n]


async def build_probe_set(
    explanation: str,
    *,
    model: str,
    layer: int,
    index: int,
    client: InterventionClient,
    corpus: Sequence[str],
    corpus_name: str,
    judge: JudgeClient | None,
    n_type1: int = 20,
    n_type2: int = 20,
    use_cache: bool = True,
) -> ProbeSet:
    neuron = f"{layer}:{index}"
    path = cache_path(explanation, model, neuron, corpus_name, (n_type1, n_type2))
    if use_cache and path.exists():
        return ProbeSet.model_validate_json(path.read_text())
    regex = form_regex(explanation)
    if regex is None and judge is None:
        raise ValueError(
            "this explanation is not form-based: building its probes needs an LM "
            "(configure the judge: HARNESS_JUDGE_URL / HARNESS_JUDGE_MODEL)"
        )
    mined = mine(client, corpus, layer, index, n_type2)
    dropped = 0
    if regex is not None:
        type1 = []
        for text in corpus:
            for m in re.finditer(r"\w+", text):
                if regex.search(m.group()) and len(type1) < n_type1:
                    type1.append(Probe(text=text, span=m.span(), in_explanation=True, kind="type1"))
        verdicts = [bool(regex.search(t[s:e])) for t, (s, e), _ in mined]
    else:
        assert judge is not None
        reply = await judge.complete(
            TYPE1_SYSTEM, TYPE1_USER.format(explanation=explanation, n=n_type1)
        )
        type1, dropped = parse_type1(reply.text)
        verdicts = []
        for text, (s, e), _ in mined:
            r = await judge.complete(
                TYPE1_SYSTEM,
                TYPE2_USER.format(explanation=explanation, sentence=text, string=text[s:e]),
            )
            v = _yes(r.text)
            if v is None:  # ambiguous: dropped, as the paper drops invalid and ambiguous ones
                dropped += 1
            verdicts.append(v)
    type2 = [
        Probe(text=t, span=sp, in_explanation=v, kind="type2")
        for (t, sp, _), v in zip(mined, verdicts, strict=True)
        if v is not None
    ]
    ps = ProbeSet(
        explanation=explanation,
        model=model,
        neuron=neuron,
        corpus=corpus_name,
        decider="regex" if regex is not None else "lm",
        probes=type1 + type2,
        dropped=dropped,
    )
    if use_cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(ps.model_dump_json(indent=1))
        tmp.replace(path)  # never a half-written cache file
    return ps


def score_probe_set(
    ps: ProbeSet, client: InterventionClient, layer: int, index: int
) -> tuple[O.PRF, O.Counts]:
    """P/R/F1 of E on its probes: a(q) = max over the model tokens overlapping the span."""
    if not ps.probes:
        return O.prf(O.Counts()), O.Counts()
    res = client.activations(
        {
            "texts": [p.text for p in ps.probes],
            "component": "mlp_activation",
            "layers": [layer],
            "neurons": [index],
            "positions": [{"char_span": list(p.span)} for p in ps.probes],
            "pooling": "max",
        }
    ).results
    obs = [
        O.Observation(ps.neuron, p.in_explanation, r.layers[0].values[0][0] > 0)
        for p, r in zip(ps.probes, res, strict=True)
    ]
    c = O.counts(obs)
    return O.prf(c), c
