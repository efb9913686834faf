"""A circuits target as a model one experiments on: run it, read a component, ablate components,
patch them from another input. The scorer and the runner share this one implementation.

Components are named `L{layer}H{head}` (an attention head) and `L{layer}MLP` (a layer's MLP),
0-based. A head's activation is its output before the output projection (its value-weighted
sum, width `key_size`); ablating or patching a head replaces exactly that, so the head's whole
contribution to the residual is replaced. An MLP's activation is its output (residual width).

Inputs are lists of tokens from `vocab`, 1 to `max_len` long; the BOS token tracr's programs
rely on is added here and its position never shows in an output or an activation.

`output_scores(...)` gives the raw output-space values the faithfulness score needs, one array
per input: categorical outputs as the scores of every output value per position ([len,
n_values], the argmax is the decoded output; `output_values` names the columns), numerical
outputs as the value per position ([len]). It takes the same ablation and patching arguments as
`ablate` and `patch`.

It lives here, below the targets, so that the intervention server (which imports nothing above
`model_services`) serves the same experiments the target service and the scorer run in process.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

from interp_harness.model_services.intervention.compiled import (
    CompiledMeta,
    CompiledTransformer,
    load_npz,
)

AblationKind = Literal["zero", "mean", "resample"]
ABLATIONS: tuple[str, ...] = ("zero", "mean", "resample")
UNDEFINED_BELOW = 0.5  # a categorical position whose best score is below this has no value
N_REFERENCE = 32  # inputs drawn per input length for a mean ablation without a reference
# default-draw means kept per model, keyed by (seed, length): the scorer asks for one seed and
# at most max_len lengths, an agent may vary --seed, so the oldest entries go
MEAN_CACHE_ENTRIES = 64
_HEAD = re.compile(r"^L(\d+)H(\d+)$")
_MLP = re.compile(r"^L(\d+)MLP$")
_SITE = re.compile(r"^L(\d+)H(\d+)\.pattern$|^L(\d+)\.(resid_mid|resid_post)$|^embed$")


class CircuitInputError(ValueError):
    """An input, a component or an argument the model cannot take; the message is for the agent."""


class CircuitModel:
    def __init__(
        self,
        arrays: dict[str, np.ndarray],
        meta: CompiledMeta,
        device: str = "cpu",
        threads: int | None = None,
    ) -> None:
        """`threads`: torch's intra-op threads for the process (a process-wide setting). These
        models are tiny: one thread is ~10x faster than two on a busy 2-core machine (measured
        by benchmarks/circuits.py), so the runner passes 1; None leaves the setting alone."""
        if threads is not None:
            torch.set_num_threads(threads)
        self.meta = meta
        self.device = torch.device(device)
        self.net = CompiledTransformer(arrays, meta).to(self.device).eval()
        self.vocab: list[Any] = list(meta.vocab)
        self.max_len: int = meta.max_len
        self.n_layers: int = meta.n_layers
        self.n_heads: int = meta.n_heads
        self.key_size: int = meta.key_size
        self.output_kind: str = meta.output_kind
        self.output_values: list[Any] = list(meta.output_values)
        self._index = {_key(t): i for i, t in enumerate(meta.tokens)}
        self._nonempty = self._non_empty(arrays)
        # (seed, length with BOS) -> every component's mean over that length's default draw
        self._means: OrderedDict[tuple[int, int], dict[str, torch.Tensor]] = OrderedDict()
        self._means_lock = threading.Lock()  # the runner and the scorer call from threads

    @classmethod
    def from_npz(
        cls, path: str | Path, device: str = "cpu", threads: int | None = None
    ) -> CircuitModel:
        arrays, meta = load_npz(path)
        return cls(arrays, meta, device, threads)

    # ---- the model's parts --------------------------------------------------------------------

    def _non_empty(self, arrays: dict[str, np.ndarray]) -> list[str]:
        k = self.key_size
        out = []
        for layer in range(self.n_layers):
            for h in range(self.n_heads):
                cols = slice(h * k, (h + 1) * k)
                if np.any(arrays[f"l{layer}.v"][:, cols]) and np.any(arrays[f"l{layer}.o"][cols]):
                    out.append(f"L{layer}H{h}")
            if np.any(arrays[f"l{layer}.mlp2"]) or np.any(arrays[f"l{layer}.mlp2_b"]):
                out.append(f"L{layer}MLP")
        return out

    def components(self) -> list[str]:
        """The non-empty components (padding heads and empty MLPs left out): the universe a
        circuit is chosen from."""
        return list(self._nonempty)

    def all_components(self) -> list[str]:
        """Every head slot and MLP, empty ones included (what the agent may name)."""
        return [
            name
            for layer in range(self.n_layers)
            for name in (*(f"L{layer}H{h}" for h in range(self.n_heads)), f"L{layer}MLP")
        ]

    def parse_component(self, name: str) -> tuple[int, int | None]:
        """(layer, head) or (layer, None) for an MLP; raises CircuitInputError."""
        m = _HEAD.match(name)
        if m:
            layer, head = int(m[1]), int(m[2])
            if layer < self.n_layers and head < self.n_heads:
                return layer, head
        m = _MLP.match(name)
        if m and int(m[1]) < self.n_layers:
            return int(m[1]), None
        raise CircuitInputError(
            f"unknown component {name!r}: heads are L0H0..L{self.n_layers - 1}H"
            f"{self.n_heads - 1}, MLPs L0MLP..L{self.n_layers - 1}MLP"
        )

    # ---- inputs -------------------------------------------------------------------------------

    def encode(self, inputs: Sequence[Sequence[Any]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Token ids [B, 1 + longest] (BOS first, pad after) and the mask of real positions."""
        if not inputs:
            raise CircuitInputError("give at least one input")
        rows = []
        for x in inputs:
            if not 1 <= len(x) <= self.max_len:
                raise CircuitInputError(
                    f"an input has {len(x)} tokens; inputs have 1 to {self.max_len}"
                )
            ids = []
            for t in x:
                i = self._index.get(_key(t))
                if i is None or t in (self.meta.bos, self.meta.pad):
                    raise CircuitInputError(f"token {t!r} is not in the vocabulary {self.vocab}")
                ids.append(i)
            rows.append([self._index[_key(self.meta.bos)], *ids])
        width = max(len(r) for r in rows)
        pad = self._index[_key(self.meta.pad)]
        tokens = torch.tensor([r + [pad] * (width - len(r)) for r in rows], device=self.device)
        mask = torch.tensor(
            [[True] * len(r) + [False] * (width - len(r)) for r in rows], device=self.device
        )
        return tokens, mask

    def random_inputs(self, n: int, length: int, seed: int) -> list[list[Any]]:
        rng = np.random.default_rng(seed)
        return [
            [self.vocab[int(i)] for i in rng.integers(len(self.vocab), size=length)]
            for _ in range(n)
        ]

    # ---- hooks --------------------------------------------------------------------------------

    @contextmanager
    def _hooked(
        self,
        replace: dict[str, torch.Tensor] | None = None,
        record: Iterable[str] = (),
    ):
        """Replace components' activations ([B, T, width] each) and record others during the
        passes inside the block; yields the dict the recordings land in."""
        replace = replace or {}
        record = set(record)
        seen: dict[str, torch.Tensor] = {}
        handles = []
        k = self.key_size
        for layer, block in enumerate(self.net.h):
            heads = {
                h: n
                for h in range(self.n_heads)
                if (n := f"L{layer}H{h}") in replace or n in record
            }
            if heads:
                handles.append(
                    block.attn.c_proj.register_forward_pre_hook(_head_hook(heads, replace, seen, k))
                )
            mlp = f"L{layer}MLP"
            if mlp in replace or mlp in record:
                handles.append(block.mlp.register_forward_hook(_out_hook(mlp, replace, seen)))
            site = f"L{layer}.resid_mid"
            if site in record:
                handles.append(block.resid_mid.register_forward_hook(_out_hook(site, {}, seen)))
            site = f"L{layer}.resid_post"
            if site in record:
                handles.append(block.register_forward_hook(_out_hook(site, {}, seen)))
            pats = {h for h in range(self.n_heads) if f"L{layer}H{h}.pattern" in record}
            if pats:
                handles.append(
                    block.attn.attn_dropout.register_forward_hook(_pattern_hook(layer, pats, seen))
                )
        if "embed" in record:
            handles.append(self.net.embed_out.register_forward_hook(_out_hook("embed", {}, seen)))
        try:
            yield seen
        finally:
            for handle in handles:
                handle.remove()

    @torch.no_grad()
    def _scores(
        self,
        tokens: torch.Tensor,
        mask: torch.Tensor,
        replace: dict[str, torch.Tensor] | None = None,
        record: Iterable[str] = (),
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        with self._hooked(replace, record) as seen:
            out = self.net(tokens, mask)
        return out, seen

    def _record(self, inputs: Sequence[Sequence[Any]], names: Iterable[str]):
        tokens, mask = self.encode(inputs)
        _, seen = self._scores(tokens, mask, record=names)
        return seen, mask

    # ---- ablation values ----------------------------------------------------------------------

    def _ablation(
        self,
        names: list[str],
        kind: str,
        tokens: torch.Tensor,
        mask: torch.Tensor,
        reference: Sequence[Sequence[Any]] | None,
        seed: int,
    ) -> dict[str, torch.Tensor]:
        b, t = tokens.shape
        lengths = mask.sum(1).tolist()  # BOS included
        if kind == "zero":
            return {n: torch.zeros(b, t, self._width(n), dtype=torch.float64) for n in names}
        if kind not in ABLATIONS:
            raise CircuitInputError(f"unknown ablation {kind!r}: one of {', '.join(ABLATIONS)}")
        if reference is None and kind == "mean":
            # each length's default draw is the same on every call: its means are kept
            rows = {n: mask.sum(1) == n for n in set(lengths)}
            means = {n: self._default_means(seed, n) for n in rows}
            out = {}
            for name in names:
                val = torch.zeros(b, t, self._width(name), dtype=torch.float64, device=mask.device)
                for n, r in rows.items():
                    val[r, :n] = means[n][name]
                out[name] = val
            return out
        if reference is None:
            per = N_REFERENCE if kind == "mean" else b
            reference = [x for n in sorted(set(lengths)) for x in self._default_draw(per, n, seed)]
        seen, rmask = self._record(reference, names)
        rlen = rmask.sum(1)
        out = {}
        rng = np.random.default_rng(seed)
        for name in names:
            acts = seen[name]  # [R, Tr, w]
            val = torch.zeros(b, t, acts.shape[-1], dtype=acts.dtype)
            for i, n in enumerate(lengths):
                same = (rlen == n).nonzero().flatten()
                pool = same if len(same) else (rlen >= n).nonzero().flatten()
                if kind == "resample":
                    if not len(pool):
                        raise CircuitInputError(
                            f"resample ablation: no reference input is {n - 1} tokens long"
                        )
                    r = int(pool[int(rng.integers(len(pool)))])
                    val[i, :n] = acts[r, :n]
                elif len(pool):
                    val[i, :n] = acts[pool, :n].mean(0)
                else:  # only shorter references: each position's mean over those that reach it
                    m = rmask[:, :n].to(acts.dtype)[..., None]
                    val[i, :n] = (acts[:, :n] * m).sum(0) / m.sum(0).clamp(min=1)
            out[name] = val
        return out

    def _default_draw(self, per: int, n: int, seed: int) -> list[list[Any]]:
        """The references of a call without any: `per` inputs of `n` positions, BOS included."""
        return self.random_inputs(per, n - 1, seed + 7919 * n)

    def _default_means(self, seed: int, n: int) -> dict[str, torch.Tensor]:
        """Every component's mean ([n, width]) over the N_REFERENCE inputs of `n` positions (BOS
        included) drawn from `seed`, as a call without a reference draws them; computed once per
        model, seed and length."""
        key = (seed, n)
        with self._means_lock:
            if key in self._means:
                self._means.move_to_end(key)
                return self._means[key]
        names = self.all_components()
        seen, _ = self._record(self._default_draw(N_REFERENCE, n, seed), names)
        means = {name: seen[name].mean(0) for name in names}  # every reference is n long
        with self._means_lock:
            self._means[key] = means
            while len(self._means) > MEAN_CACHE_ENTRIES:
                self._means.popitem(last=False)
        return means

    def _width(self, name: str) -> int:
        return self.key_size if _HEAD.match(name) else self.net.d_model

    def _checked(self, components: Iterable[str]) -> list[str]:
        names = list(dict.fromkeys(components))
        for n in names:
            self.parse_component(n)
        return names

    # ---- experiments --------------------------------------------------------------------------

    def output_scores(
        self,
        inputs: Sequence[Sequence[Any]],
        ablate: Iterable[str] = (),
        kind: AblationKind = "zero",
        reference: Sequence[Sequence[Any]] | None = None,
        seed: int = 0,
        patch_source: Sequence[Sequence[Any]] | None = None,
        patch: Iterable[str] = (),
    ) -> list[np.ndarray]:
        """Raw output-space values per input (see the module docstring), after ablating
        `ablate` (`kind`) and patching `patch` from `patch_source` (one source per input)."""
        tokens, mask = self.encode(inputs)
        names = self._checked(ablate)
        replace = self._ablation(names, kind, tokens, mask, reference, seed) if names else {}
        patched = self._checked(patch)
        if patched:
            if patch_source is None or len(patch_source) != len(inputs):
                raise CircuitInputError("patching needs one source input per base input")
            stokens, smask = self.encode(patch_source)
            if not torch.equal(smask.sum(1), mask.sum(1)):
                raise CircuitInputError("each source input must be as long as its base input")
            _, seen = self._scores(stokens, smask, record=patched)
            for n in patched:
                replace[n] = seen[n][:, : tokens.shape[1]]
        out, _ = self._scores(tokens, mask, replace)
        return self._rows(out, mask)

    def _rows(self, out: torch.Tensor, mask: torch.Tensor) -> list[np.ndarray]:
        rows = []
        for i, n in enumerate(mask.sum(1).tolist()):
            r = out[i, 1:n].cpu().numpy()
            rows.append(r[:, 0] if self.output_kind == "numerical" else r)
        return rows

    def decode(self, scores: list[np.ndarray]) -> list[list[Any]]:
        """Categorical: the value of the largest score, or None where no value scores (the
        program's output is undefined there, as RASP's evaluation says None; tracr's argmax there
        picks among rounding noise)."""
        if self.output_kind == "numerical":
            return [[float(v) for v in row] for row in scores]
        return [
            [
                self.output_values[int(j)] if s[j] >= UNDEFINED_BELOW else None
                for s, j in zip(row, row.argmax(-1), strict=True)
            ]
            for row in scores
        ]

    def run(self, inputs: Sequence[Sequence[Any]]) -> list[list[Any]]:
        """The decoded output at every position of every input."""
        return self.decode(self.output_scores(inputs))

    def ablate(
        self,
        inputs: Sequence[Sequence[Any]],
        components: Iterable[str],
        kind: AblationKind = "zero",
        reference: Sequence[Sequence[Any]] | None = None,
        seed: int = 0,
    ) -> list[list[Any]]:
        """The decoded outputs with `components` ablated: zero, their mean over `reference`
        inputs of each input's length, or a random reference's value (`resample`); references
        are drawn from the vocabulary with `seed` when not given."""
        return self.decode(self.output_scores(inputs, components, kind, reference, seed))

    def patch(
        self,
        base: Sequence[Sequence[Any]],
        source: Sequence[Sequence[Any]],
        components: Iterable[str],
    ) -> list[list[Any]]:
        """The decoded outputs on `base` with `components` taking their values on `source` (one
        source per base input, of the same length)."""
        return self.decode(self.output_scores(base, patch_source=source, patch=components))

    def activations(self, inputs: Sequence[Sequence[Any]], component: str) -> np.ndarray:
        """[B, longest input, width], NaN past an input's end. `component`: a head (its output
        before the output projection), an MLP (its output), `L{l}H{h}.pattern` (the head's
        attention over the input positions), `L{l}.resid_mid` / `L{l}.resid_post` (the residual
        after the layer's attention / MLP) or `embed`."""
        m = _SITE.match(component)
        if m:
            layer = m[1] or m[3]
            if layer is not None and int(layer) >= self.n_layers:
                raise CircuitInputError(f"no layer {layer}: layers 0..{self.n_layers - 1}")
            if m[2] is not None and int(m[2]) >= self.n_heads:
                raise CircuitInputError(f"no head {m[2]}: heads 0..{self.n_heads - 1}")
        else:
            self.parse_component(component)
        seen, mask = self._record(inputs, [component])
        acts = seen[component]
        if component.endswith(".pattern"):
            acts = acts[:, :, 1:]  # the BOS column
        acts = acts[:, 1:].cpu().numpy().copy()
        for i, n in enumerate(mask.sum(1).tolist()):
            acts[i, n - 1 :] = np.nan
            if component.endswith(".pattern"):
                acts[i, :, n - 1 :] = np.nan
        return acts


def parse_word(word: str, vocab: Sequence[Any], max_len: int) -> list[Any]:
    """One input as an agent writes it (its tokens separated by commas, `a,b,c`, or written
    together when every token is one character, `abc`) -> its tokens. Raises CircuitInputError
    (the message is for the agent). The target service and the intervention server's tokenizer
    read inputs with this one function."""
    tokens = {str(v): v for v in vocab}
    word = word.strip()
    parts = [p.strip() for p in word.split(",")] if "," in word else None
    if parts is None:
        if word in tokens:
            parts = [word]
        elif all(len(t) == 1 for t in tokens) and all(c in tokens for c in word):
            parts = list(word)
        else:
            parts = word.split()
    bad = [p for p in parts if p not in tokens]
    if bad or not parts:
        raise CircuitInputError(
            f"input {word!r}: tokens must come from the vocabulary {list(tokens)}, "
            "separated by commas (a,b,c) or written together (abc)"
        )
    if len(parts) > max_len:
        raise CircuitInputError(f"input {word!r} has {len(parts)} tokens; at most {max_len}")
    return [tokens[p] for p in parts]


def _key(t: Any) -> tuple[str, Any]:
    # 1 and True (and 1.0) are equal in Python: the type keeps tokens apart
    return (type(t).__name__, t)


def _head_hook(
    heads: dict[int, str], replace: dict[str, torch.Tensor], seen: dict[str, torch.Tensor], k: int
) -> Callable:
    def hook(_module: torch.nn.Module, args: tuple[torch.Tensor, ...]):
        (z,) = args
        changed = False
        for h, name in heads.items():
            cols = slice(h * k, (h + 1) * k)
            seen[name] = z[..., cols].clone()
            if name in replace:
                if not changed:
                    z, changed = z.clone(), True
                z[..., cols] = replace[name].to(z)
        return (z,) if changed else None

    return hook


def _out_hook(
    name: str, replace: dict[str, torch.Tensor], seen: dict[str, torch.Tensor]
) -> Callable:
    def hook(_module: torch.nn.Module, _args: Any, out: torch.Tensor):
        seen[name] = out.clone()
        return replace[name].to(out) if name in replace else None

    return hook


def _pattern_hook(layer: int, heads: set[int], seen: dict[str, torch.Tensor]) -> Callable:
    def hook(_module: torch.nn.Module, _args: Any, out: torch.Tensor):
        for h in heads:
            seen[f"L{layer}H{h}.pattern"] = out[:, h].clone()

    return hook
