"""The intervention engine: tokenisation with offsets, position specs, padded micro-batches, and
pyvene interventions (Collect for reads; Vanilla, Zero, constant-source Vanilla and featurizer
interventions for interchanges).

Padding is on the left, with position ids counted from each row's first real token (GPT-2 would
otherwise shift a padded row's positions), so a text's last token is always the last column and
every requested position p of row i is column pad_i + p. Batches are cut so that rows × padded
length stays under a token budget (longest texts first, so rows of similar length share a batch).
"""

from __future__ import annotations

import contextvars
import functools
import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from pydantic import BaseModel, Field

from interp_harness.model_services.backbone.engine import BadRequest
from interp_harness.model_services.body_limit import DEFAULT_MAX_BODY_MIB
from interp_harness.model_services.intervention import schemas as S
from interp_harness.model_services.intervention.featurizers import (
    FeaturizerError,
    FeaturizerRegistry,
)
from interp_harness.model_services.intervention.model import COMPONENTS, LoadedModel
from interp_harness.model_services.intervention.pyvene_import import import_pyvene
from interp_harness.model_services.intervention.saelens import SAERegistry, encode
from interp_harness.model_services.text_bounds import token_chars

MAX_SAE_LATENTS = 64  # latents per SAE request: every latent of a 16k-wide SAE is ~64 KiB a token

log = logging.getLogger(__name__)


class Limits(BaseModel):
    """Per-request limits and the micro-batch budget (set by the operator at `serve`)."""

    max_texts: int = Field(1024, ge=1)  # texts, prompts or examples per request
    max_text_tokens: int = Field(1024, ge=1)  # tokens per text (also capped by the model)
    # tokens of all texts of one request together (bases, sources, mean texts; prompts plus
    # their new tokens): the bound on one request's work, whatever its shape
    max_request_tokens: int = Field(16384, ge=1)
    max_queue_tokens: int = Field(65536, ge=1)  # request tokens waiting or running, all callers
    max_positions: int = Field(1024, ge=1)  # positions per text and site
    max_sites: int = Field(64, ge=1)
    max_new_tokens: int = Field(64, ge=1)
    # rows × padded length of one forward pass; None: 16384 on a GPU, 1024 on a CPU (a CPU gains
    # little from bigger passes, and an abandoned request stops only between passes)
    batch_tokens: int | None = Field(None, ge=64)
    batch_rows: int = Field(128, ge=1)
    max_body_mib: int = Field(DEFAULT_MAX_BODY_MIB, ge=1)  # request body size (413 past it)


class Cancelled(Exception):
    """Nobody waits for this request's answer any more; its remaining micro-batches are skipped."""


# Set by the server's batcher around an engine call (asyncio.to_thread copies it into the
# worker thread); the engine checks it between micro-batches.
CANCEL: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "intervention_cancel", default=None
)


def check_cancelled() -> None:
    ev = CANCEL.get()
    if ev is not None and ev.is_set():
        raise Cancelled()


def _check_cancel_before(block: Any) -> None:
    """Check for cancellation before each transformer block runs, so an abandoned request stops
    within one layer, not after a micro-batch (minutes on a busy CPU). The block's `forward` is
    wrapped, not hooked: pyvene removes every hook of the model before each call."""
    if getattr(block, "_cancel_checked", False):
        return
    inner = block.forward

    @functools.wraps(inner)
    def forward(*args: Any, **kwargs: Any) -> Any:
        check_cancelled()
        return inner(*args, **kwargs)

    block.forward = forward
    block._cancel_checked = True


@dataclass
class Tok:
    ids: list[int]
    offsets: list[tuple[int, int]]
    text: str


def _pv() -> Any:
    return import_pyvene()


def _one_position(layer: int, component: str, intervention: Any, **group: Any) -> Any:
    """pyvene's representation of one (layer, component) site at one position per example."""
    return _pv().RepresentationConfig(
        layer=layer,
        component=component,
        unit="pos",
        max_number_of_units=1,
        intervention=intervention,
        **group,
    )


def _collect(width: int) -> Any:
    """A read of the site's vectors; keep_last_dim: [batch, positions, d], not pyvene's flattened
    default."""
    return _pv().CollectIntervention(keep_last_dim=True, embed_dim=width)


def _as_list(positions: S.Positions, n: int, what: str) -> list[S.PositionSpec]:
    if isinstance(positions, list):
        if len(positions) != n:
            raise BadRequest(f"{what}: {len(positions)} position specs for {n} texts")
        return positions
    return [positions] * n


def resolve_positions(spec: S.PositionSpec, tok: Tok, where: str) -> list[int]:
    """Token positions (0-based, in the text's own tokens) named by a position spec."""
    n = len(tok.ids)
    if spec == "all":
        return list(range(n))
    if spec == "last":
        return [n - 1]
    if isinstance(spec, S.TokenList):
        out = [p + n if p < 0 else p for p in spec.tokens]
        bad = [p for p, q in zip(spec.tokens, out, strict=True) if not 0 <= q < n]
        if bad:
            raise BadRequest(f"{where}: token positions {bad[:5]} outside the text's {n} tokens")
        return out
    if isinstance(spec, S.TokenSpan):
        s, e = spec.token_span
        if not 0 <= s < e <= n:
            raise BadRequest(f"{where}: token_span [{s}, {e}) is not inside the text's {n} tokens")
        return list(range(s, e))
    s, e = spec.char_span
    if not 0 <= s < e <= len(tok.text):
        raise BadRequest(
            f"{where}: char_span [{s}, {e}) is not inside the text ({len(tok.text)} characters)"
        )
    out = [i for i, (a, b) in enumerate(tok.offsets) if a < e and b > s and b > a]
    if not out:
        raise BadRequest(f"{where}: char_span [{s}, {e}) covers no token")
    return out


def chunks(costs: Sequence[int], budget: int, max_rows: int) -> list[list[int]]:
    """Indices grouped so that len(group) × max cost ≤ budget (a single row may exceed it)."""
    order = sorted(range(len(costs)), key=lambda i: -costs[i])
    out: list[list[int]] = []
    cur: list[int] = []
    for i in order:
        width = costs[cur[0]] if cur else costs[i]
        if cur and ((len(cur) + 1) * width > budget or len(cur) >= max_rows):
            out.append(cur)
            cur = []
        cur.append(i)
    if cur:
        out.append(cur)
    return out


def _rect(rows: list[list[int]]) -> list[list[int]]:
    """Pad ragged position lists to one length by repeating each row's last position: pyvene
    gathers a rectangle, and a repeated position reads or writes the same value again."""
    width = max(len(r) for r in rows)
    return [r + [r[-1]] * (width - len(r)) for r in rows]


class Engine:
    def __init__(
        self,
        model: LoadedModel,
        limits: Limits | None = None,
        featurizers: FeaturizerRegistry | None = None,
        saes: SAERegistry | None = None,
    ) -> None:
        self.m = model
        self.tok = model.tokenizer
        self.limits = limits or Limits()
        self.max_tokens = min(self.limits.max_text_tokens, model.max_positions)
        # a longer text can never be within max_tokens: refused before tokenizing (seconds and
        # gigabytes for megabytes of text)
        self.max_text_chars = self.max_tokens * token_chars(self.tok)
        self.batch_tokens = self.limits.batch_tokens or (
            16384 if model.device.type == "cuda" else 1024
        )
        self.featurizers = featurizers or FeaturizerRegistry(
            {c: model.width(c) for c in COMPONENTS}
        )
        self.saes = saes or SAERegistry(device=model.device)
        for block in self._blocks():
            _check_cancel_before(block)

    def _blocks(self) -> list[Any]:
        lm = self.m.lm
        blocks = lm.transformer.h if self.m.family == "gpt2" else lm.model.layers
        return list(blocks)

    def reset_hooks(self) -> None:
        """Remove every forward hook from the model: a pass that raised inside pyvene (cancelled,
        out of memory) skips pyvene's own removal of its hooks, and a left-over hook would
        intervene in the next request."""
        for mod in self.m.lm.modules():
            for name in (
                "_forward_hooks",
                "_forward_pre_hooks",
                "_forward_hooks_with_kwargs",
                "_forward_hooks_always_called",
                "_forward_pre_hooks_with_kwargs",
            ):
                hooks = getattr(mod, name, None)
                if hooks:
                    hooks.clear()

    # --- inputs ------------------------------------------------------------------------------
    def tokenize(self, texts: list[str], what: str = "texts", start: int = 0) -> list[Tok]:
        """`start`: the index of texts[0] in the request's list (for error messages)."""
        if len(texts) > self.limits.max_texts:
            raise BadRequest(f"{len(texts)} {what}; at most {self.limits.max_texts} per request")
        for i, text in enumerate(texts):
            if len(text) > self.max_text_chars:
                raise BadRequest(
                    f"{what}[{start + i}] has {len(text)} characters; a text of at most "
                    f"{self.max_tokens} tokens (the limit per text) holds at most "
                    f"{self.max_text_chars} characters"
                )
        enc = self.tok(texts, return_offsets_mapping=True, add_special_tokens=True)
        out = []
        for i, (text, ids, offs) in enumerate(
            zip(texts, enc["input_ids"], enc["offset_mapping"], strict=True)
        ):
            if not ids:
                raise BadRequest(f"{what}[{start + i}] has no tokens")
            if len(ids) > self.max_tokens:
                raise BadRequest(
                    f"{what}[{start + i}] has {len(ids)} tokens; at most {self.max_tokens} per text"
                )
            out.append(Tok(list(ids), [tuple(o) for o in offs], text))
        return out

    def request_tokens(self, kind: str, req: BaseModel) -> int:
        """The tokens one request makes the model process (what `max_request_tokens` bounds and
        the queue counts); BadRequest past the bound or for a text over the per-text limits.
        Texts are tokenized 64 at a time and counting stops at the bound, so refusing a huge
        request costs about as much as tokenizing the bound. (The engine call tokenizes again:
        cheap next to a forward pass.)"""
        cap = self.limits.max_request_tokens
        # (texts, what, extra tokens per text): as the engine call runs them
        parts: list[tuple[list[str], str, int]]
        if isinstance(req, S.ActivationsRequest):
            parts = [(req.texts, "texts", 0)]
        elif isinstance(req, S.InterchangeRequest):
            n_src = max(len(e.sources) for e in req.examples)
            parts = [([e.base for e in req.examples], "examples", req.max_new_tokens - 1)]
            parts += [
                ([e.sources[k] if k < len(e.sources) else e.base for e in req.examples], "texts", 0)
                for k in range(n_src)
            ]
            parts += [(req.mean_texts, "mean_texts", 0)] if req.mean_texts else []
        elif isinstance(req, S.GenerateRequest):
            parts = [(req.prompts, "prompts", req.max_new_tokens)]
        else:
            raise TypeError(f"no work count for {type(req).__name__}")
        total = 0
        for texts, what, extra in parts:
            if len(texts) > self.limits.max_texts:
                raise BadRequest(
                    f"{len(texts)} {what}; at most {self.limits.max_texts} per request"
                )
            for i in range(0, len(texts), 64):
                total += sum(len(t.ids) + extra for t in self.tokenize(texts[i : i + 64], what, i))
                if total > cap:
                    raise BadRequest(
                        f"{kind}: the request holds more than {cap} tokens of work (texts, sources, "
                        f"mean texts and new tokens together; {total} counted so far); at most "
                        f"{cap} per request: split it into smaller requests"
                    )
        return total

    def token_strings(self, ids: list[int]) -> list[str]:
        return [self.tok.decode([i]) for i in ids]

    def _batch(self, toks: list[Tok], with_positions: bool = True) -> tuple[dict, list[int]]:
        width = max(len(t.ids) for t in toks)
        pads = [width - len(t.ids) for t in toks]
        pad_id = self.tok.pad_token_id
        ids = torch.tensor([[pad_id] * p + t.ids for p, t in zip(pads, toks, strict=True)])
        mask = torch.tensor([[0] * p + [1] * len(t.ids) for p, t in zip(pads, toks, strict=True)])
        batch = {"input_ids": ids.to(self.m.device), "attention_mask": mask.to(self.m.device)}
        if with_positions:
            pos = (mask.cumsum(-1) - 1).clamp(min=0)
            batch["position_ids"] = pos.to(self.m.device)
        return batch, pads

    def _check_layer(self, layer: int, where: str) -> None:
        if not 0 <= layer < self.m.n_layers:
            raise BadRequest(f"{where}: layer {layer} outside 0..{self.m.n_layers - 1}")

    def _check_neurons(self, neurons: list[int] | None, component: str, where: str) -> None:
        if neurons is None:
            return
        w = self.m.width(component)
        bad = [n for n in neurons if not 0 <= n < w]
        if bad:
            raise BadRequest(f"{where}: neurons {bad[:5]} outside 0..{w - 1} of {component}")
        if len(set(neurons)) != len(neurons):
            raise BadRequest(f"{where}: neuron ids repeat")

    def _positions(self, toks: list[Tok], positions: S.Positions, where: str) -> list[list[int]]:
        specs = _as_list(positions, len(toks), where)
        out = [
            resolve_positions(s, t, f"{where}, text {i}")
            for i, (s, t) in enumerate(zip(specs, toks, strict=True))
        ]
        for i, p in enumerate(out):
            if len(p) > self.limits.max_positions:
                raise BadRequest(
                    f"{where}, text {i}: {len(p)} positions; at most {self.limits.max_positions}"
                )
        return out

    # --- activations -------------------------------------------------------------------------
    def activations(self, req: S.ActivationsRequest) -> S.ActivationsResponse:
        for layer in req.layers:
            self._check_layer(layer, "layers")
        if len(set(req.layers)) != len(req.layers):
            raise BadRequest("layers repeat")
        sae = self._sae(req) if req.sae is not None else None
        if sae is None:
            self._check_neurons(req.neurons, req.component, "neurons")
        toks = self.tokenize(req.texts)
        pos = self._positions(toks, req.positions, "positions")
        with self.truncated_after(max(req.layers)):
            values = self.collect(toks, pos, req.component, req.layers, req.neurons, sae)
        results = []
        for i, t in enumerate(toks):
            layers = []
            for li, layer in enumerate(req.layers):
                v = values[li][i]
                if req.pooling == "max":
                    v = v.max(dim=0, keepdim=True).values
                elif req.pooling == "mean":
                    v = v.mean(dim=0, keepdim=True)
                layers.append(S.LayerValues(layer=layer, values=v.tolist()))
            results.append(
                S.TextActivations(
                    positions=pos[i],
                    tokens=self.token_strings([t.ids[p] for p in pos[i]]),
                    layers=layers,
                )
            )
        return S.ActivationsResponse(
            model=self.m.name,
            component=req.component,
            neurons=req.neurons,
            results=results,
            sae=req.sae,
        )

    @contextmanager
    def truncated_after(self, layer: int) -> Iterator[None]:
        """The model cut after block `layer`, without its unembedding, while only reading: a
        block's values do not depend on later blocks (a causal stack), and a full pass costs up to
        several times more (SmolLM2's layer 12 of 30; the unembedding is a fifth of its weights).
        Safe because the engine runs on one worker thread (server.Batcher)."""
        m = self.m
        parent = m.lm.transformer if m.family == "gpt2" else m.lm.model
        attr = "h" if m.family == "gpt2" else "layers"
        blocks, head = getattr(parent, attr), m.lm.lm_head
        setattr(parent, attr, blocks[: layer + 1])
        m.lm.lm_head = torch.nn.Identity()
        try:
            yield
        finally:
            setattr(parent, attr, blocks)
            m.lm.lm_head = head

    def _sae(self, req: S.ActivationsRequest) -> Any:
        """The SAELens SAE a request names, after checking the request reads its hook."""
        info, sae = self.saes.get(req.sae or "")
        where = f"sae {info.name!r} ({info.hook_name})"
        if req.layers != [info.layer] or req.component != info.component:
            raise BadRequest(
                f"{where} reads {info.component} of layer {info.layer}: send layers "
                f"[{info.layer}] and component {info.component!r} (got layers {req.layers}, "
                f"component {req.component!r})"
            )
        if info.d_in != self.m.width(info.component):
            raise BadRequest(
                f"{where} encodes {info.d_in}-dim vectors but {self.m.name}'s {info.component} "
                f"has {self.m.width(info.component)} dims: it was trained on another model"
            )
        if req.neurons is None or len(req.neurons) > MAX_SAE_LATENTS:
            raise BadRequest(
                f"{where}: name the latents to read in `neurons` (1 to {MAX_SAE_LATENTS} of "
                f"0..{info.d_sae - 1})"
            )
        bad = [n for n in req.neurons if not 0 <= n < info.d_sae]
        if bad:
            raise BadRequest(f"{where}: latents {bad[:5]} outside 0..{info.d_sae - 1}")
        if len(set(req.neurons)) != len(req.neurons):
            raise BadRequest(f"{where}: latent ids repeat")
        return sae

    @torch.inference_mode()
    def collect(
        self,
        toks: list[Tok],
        positions: list[list[int]],
        component: str,
        layers: list[int],
        neurons: list[int] | None,
        sae: Any = None,
    ) -> list[list[torch.Tensor]]:
        """values[layer_i][text_i]: float32 CPU tensor [positions, neurons] via CollectIntervention;
        with an SAELens `sae`, `neurons` are its latents, encoded on the model's device."""
        pv = _pv()
        width = self.m.width(component)
        cfg = pv.IntervenableConfig(
            representations=[_one_position(layer, component, _collect(width)) for layer in layers]
        )
        pm = pv.IntervenableModel(cfg, self.m.lm)
        idx = (
            None
            if neurons is None or sae is not None
            else torch.tensor(neurons, device=self.m.device)
        )
        out: list[list[Any]] = [[None] * len(toks) for _ in layers]
        lim = self.limits
        for chunk in chunks([len(t.ids) for t in toks], self.batch_tokens, lim.batch_rows):
            check_cancelled()
            batch, pads = self._batch([toks[i] for i in chunk])
            locs = _rect([[pads[j] + p for p in positions[i]] for j, i in enumerate(chunk)])
            (_, acts), _ = pm(batch, unit_locations={"base": [locs] * len(layers)})
            for li, a in enumerate(acts):
                if sae is not None:
                    a = encode(sae, a, neurons)
                elif idx is not None:
                    a = a.index_select(-1, idx)
                a = a.float().cpu()
                for j, i in enumerate(chunk):
                    out[li][i] = a[j, : len(positions[i])]
        return out

    # --- interchange -------------------------------------------------------------------------
    def _validate_sites(self, req: S.InterchangeRequest) -> None:
        if len(req.sites) > self.limits.max_sites:
            raise BadRequest(f"{len(req.sites)} sites; at most {self.limits.max_sites}")
        if req.max_new_tokens > self.limits.max_new_tokens:
            raise BadRequest(f"max_new_tokens is at most {self.limits.max_new_tokens}")
        for j, s in enumerate(req.sites):
            where = f"sites[{j}]"
            self._check_layer(s.layer, where)
            self._check_neurons(s.neurons, s.component, where)
            if s.op == "interchange":
                short = [i for i, e in enumerate(req.examples) if s.source >= len(e.sources)]
                if short:
                    raise BadRequest(
                        f"{where} reads source {s.source} but examples {short[:5]} have fewer sources"
                    )
            if s.op == "mean" and not req.mean_texts:
                raise BadRequest(f"{where}: op 'mean' needs mean_texts")
            if s.featurizer is not None:
                try:
                    f = self.featurizers.get(s.featurizer.id)
                    f.check_dims(s.featurizer.dims or f.feature_dims)
                except FeaturizerError as e:
                    raise BadRequest(f"{where}: {e}") from e
                if f.component != s.component:
                    raise BadRequest(
                        f"{where}: featurizer {f.id!r} maps {f.component}, not {s.component}"
                    )

    def interchange(self, req: S.InterchangeRequest) -> S.InterchangeResponse:
        self._validate_sites(req)
        bases = self.tokenize([e.base for e in req.examples], "examples")
        n_src = max(len(e.sources) for e in req.examples)
        sources = [
            self.tokenize([e.sources[k] if k < len(e.sources) else e.base for e in req.examples])
            for k in range(n_src)
        ]
        # per site: base and source positions per example
        base_pos, src_pos = [], []
        for j, s in enumerate(req.sites):
            bp = self._positions(bases, s.base_positions, f"sites[{j}].base_positions")
            if s.op != "interchange":
                sp = bp
            else:
                spec = s.source_positions if s.source_positions is not None else s.base_positions
                sp = self._positions(sources[s.source], spec, f"sites[{j}].source_positions")
                for i, (a, b) in enumerate(zip(bp, sp, strict=True)):
                    if len(a) != len(b):
                        raise BadRequest(
                            f"sites[{j}], example {i}: {len(a)} base positions but {len(b)} "
                            "source positions (they are swapped pairwise)"
                        )
            base_pos.append(bp)
            src_pos.append(sp)
        read_positions: list[list[int]] = []
        if req.read is not None:
            self._check_layer(req.read.layer, "read")
            self._check_neurons(req.read.neurons, req.read.component, "read")
            read_positions = self._positions(bases, req.read.positions, "read.positions")
        means = self._means(req)
        costs = [len(b.ids) + sum(len(src[i].ids) for src in sources) for i, b in enumerate(bases)]
        results: list[Any] = [None] * len(bases)
        for chunk in chunks(costs, self.batch_tokens, self.limits.batch_rows):
            check_cancelled()
            outs = self._interchange_chunk(
                req, chunk, bases, sources, base_pos, src_pos, means, read_positions
            )
            for i, r in zip(chunk, outs, strict=True):
                results[i] = r
        return S.InterchangeResponse(model=self.m.name, results=results)

    def _means(self, req: S.InterchangeRequest) -> dict[tuple[int, str], torch.Tensor]:
        """Mean activation over every token of mean_texts, per (layer, component) of mean sites."""
        keys = sorted({(s.layer, s.component) for s in req.sites if s.op == "mean"})
        if not keys:
            return {}
        toks = self.tokenize(req.mean_texts or [], "mean_texts")
        out = {}
        for layer, comp in keys:
            vals = self.collect(toks, [list(range(len(t.ids))) for t in toks], comp, [layer], None)
            out[(layer, comp)] = torch.cat(vals[0]).mean(0)
        return out

    def _intervention(self, site: S.Site, means: dict) -> Any:
        pv = _pv()
        d = self.m.width(site.component)
        if site.featurizer is not None:
            iv = self.featurizers.get(site.featurizer.id).intervention(self.m.device, self.m.dtype)
        elif site.op == "zero":
            iv = pv.ZeroIntervention(embed_dim=d)
        elif site.op == "mean":
            mean = means[(site.layer, site.component)].to(self.m.device, self.m.dtype)
            iv = pv.VanillaIntervention(embed_dim=d, source_representation=mean)
        else:
            iv = pv.VanillaIntervention(embed_dim=d)
        return iv

    def _subspace(self, site: S.Site) -> list[int] | None:
        if site.featurizer is not None:
            f = self.featurizers.get(site.featurizer.id)
            return site.featurizer.dims or f.feature_dims
        return site.neurons

    @torch.inference_mode()
    def _interchange_chunk(
        self,
        req: S.InterchangeRequest,
        chunk: list[int],
        bases: list[Tok],
        sources: list[list[Tok]],
        base_pos: list[list[list[int]]],
        src_pos: list[list[list[int]]],
        means: dict,
        read_positions: list[list[int]],
    ) -> list[S.InterchangeResult]:
        pv = _pv()
        # pyvene runs one source forward per group and wants groups in ascending order: sites that
        # read the same source share a group; sourceless sites (zero/mean) get their own.
        n_src = len(sources)
        raw = [s.source if s.op == "interchange" else n_src + j for j, s in enumerate(req.sites)]
        rank = {g: r for r, g in enumerate(sorted(set(raw)))}  # pyvene indexes sources by key
        group = [rank[g] for g in raw]
        src_of = {rank[g]: g for g in raw if g < n_src}  # group key -> source index
        order = sorted(range(len(req.sites)), key=lambda j: group[j])
        base_batch, base_pads = self._batch([bases[i] for i in chunk])
        src_batches = {}
        for g, k in src_of.items():
            src_batches[g] = self._batch([sources[k][i] for i in chunk])
        reps, b_locs, s_locs, subspaces = [], [], [], []
        for j in order:
            s = req.sites[j]
            intervention = self._intervention(s, means)
            reps.append(_one_position(s.layer, s.component, intervention, group_key=group[j]))
            rows_b = [[base_pads[r] + p for p in base_pos[j][i]] for r, i in enumerate(chunk)]
            if group[j] in src_batches:
                sp = src_batches[group[j]][1]
                rows_s = [[sp[r] + p for p in src_pos[j][i]] for r, i in enumerate(chunk)]
            else:
                rows_s = rows_b
            pairs = _rect(
                [list(zip(a, b, strict=True)) for a, b in zip(rows_b, rows_s, strict=True)]
            )
            b_locs.append([[a for a, _ in row] for row in pairs])
            s_locs.append([[b for _, b in row] for row in pairs])
            sub = self._subspace(s)
            subspaces.append(None if sub is None else [list(sub)] * len(chunk))
        read_pos: list[list[int]] = []
        if req.read is not None:  # last group: its hook runs after every write on the module
            r = req.read
            collect = _collect(self.m.width(r.component))
            reps.append(_one_position(r.layer, r.component, collect, group_key=len(rank)))
            read_pos = [read_positions[i] for i in chunk]
            rows = _rect([[base_pads[k] + p for p in read_pos[k]] for k in range(len(chunk))])
            b_locs.append(rows)
            s_locs.append(rows)
            subspaces.append(None)
        pm = pv.IntervenableModel(pv.IntervenableConfig(representations=reps), self.m.lm)
        n_groups = len(rank) + (req.read is not None)
        src_inputs = [src_batches[g][0] if g in src_batches else None for g in range(n_groups)]
        kwargs: dict[str, Any] = {
            "unit_locations": {"sources->base": (s_locs, b_locs)},
            "subspaces": subspaces if any(x is not None for x in subspaces) else None,
            "output_original_output": req.return_original,
        }
        collected = None
        if req.max_new_tokens == 1:
            orig, cf = pm(base_batch, src_inputs, **kwargs)
            if req.read is not None:
                orig, collected = orig
            orig_conts = self._next_tokens(orig.logits[:, -1], req.top_k) if orig else None
            cf_conts = self._next_tokens(cf.logits[:, -1], req.top_k)
        else:
            base_gen = {k: v for k, v in base_batch.items() if k != "position_ids"}
            gen = self._gen_kwargs(req.max_new_tokens)
            orig, cf = pm.generate(base_gen, src_inputs, intervene_on_prompt=True, **kwargs, **gen)
            if req.read is not None:
                orig, collected = orig
            width = base_batch["input_ids"].shape[1]
            orig_conts = self._continuations(orig, width, req.top_k) if orig is not None else None
            cf_conts = self._continuations(cf, width, req.top_k)
        reads: list[Any] = [None] * len(chunk)
        if collected:
            a = collected[0]  # [rows, positions, d] of the first (prompt) pass
            if req.read is not None and req.read.neurons is not None:
                a = a[..., req.read.neurons]
            a = a.float().cpu()
            reads = [a[k, : len(read_pos[k])].tolist() for k in range(len(chunk))]
        return [
            S.InterchangeResult(
                original=orig_conts[r] if orig_conts else None, intervened=c, read=reads[r]
            )
            for r, c in enumerate(cf_conts)
        ]

    # --- outputs -----------------------------------------------------------------------------
    def _gen_kwargs(self, n: int) -> dict[str, Any]:
        return {
            "max_new_tokens": n,
            "do_sample": False,
            "output_logits": True,
            "return_dict_in_generate": True,
            "pad_token_id": self.tok.pad_token_id,
        }

    def _top(self, logits: torch.Tensor, k: int) -> list[list[S.TopToken]]:
        if not k:
            return [[] for _ in range(logits.shape[0])]
        lp = torch.log_softmax(logits.float(), dim=-1)
        vals, ids = lp.topk(k, dim=-1)
        return [
            [
                S.TopToken(id=int(i), token=self.tok.decode([int(i)]), logprob=float(v))
                for v, i in zip(vr.tolist(), ir.tolist(), strict=True)
            ]
            for vr, ir in zip(vals, ids, strict=True)
        ]

    def _next_tokens(self, logits: torch.Tensor, k: int) -> list[S.Continuation]:
        ids = logits.argmax(-1).tolist()
        tops = self._top(logits, k)
        return [
            S.Continuation(
                ids=[i], tokens=self.token_strings([i]), text=self.tok.decode([i]), top=t
            )
            for i, t in zip(ids, tops, strict=True)
        ]

    def _continuations(self, out: Any, width: int, k: int) -> list[S.Continuation]:
        seqs = out.sequences[:, width:].tolist()
        tops = self._top(out.logits[0], k)
        eos = self.tok.eos_token_id
        res = []
        for row, top in zip(seqs, tops, strict=True):
            if eos in row:  # generate pads finished rows; keep up to the first end-of-text
                row = row[: row.index(eos) + 1]
            res.append(
                S.Continuation(
                    ids=row, tokens=self.token_strings(row), text=self.tok.decode(row), top=top
                )
            )
        return res

    # --- generation --------------------------------------------------------------------------
    @torch.inference_mode()
    def generate(self, req: S.GenerateRequest) -> S.GenerateResponse:
        if req.max_new_tokens > self.limits.max_new_tokens:
            raise BadRequest(f"max_new_tokens is at most {self.limits.max_new_tokens}")
        toks = self.tokenize(req.prompts, "prompts")
        results: list[Any] = [None] * len(toks)
        costs = [len(t.ids) + req.max_new_tokens for t in toks]
        for chunk in chunks(costs, self.batch_tokens, self.limits.batch_rows):
            check_cancelled()
            batch, _ = self._batch([toks[i] for i in chunk], with_positions=False)
            out = self.m.lm.generate(**batch, **self._gen_kwargs(req.max_new_tokens))
            conts = self._continuations(out, batch["input_ids"].shape[1], req.top_k)
            for i, c in zip(chunk, conts, strict=True):
                results[i] = c
        return S.GenerateResponse(model=self.m.name, results=results)

    def tokenize_response(self, req: S.TokenizeRequest) -> S.TokenizeResponse:
        toks = self.tokenize(req.texts)
        return S.TokenizeResponse(
            results=[
                S.TokenizedText(ids=t.ids, tokens=self.token_strings(t.ids), offsets=t.offsets)
                for t in toks
            ]
        )

    def model_info(self) -> S.ModelInfo:
        return S.ModelInfo(
            id=self.m.name,
            family=self.m.family,
            n_layers=self.m.n_layers,
            hidden_size=self.m.hidden_size,
            mlp_width=self.m.mlp_width,
            max_positions=self.m.max_positions,
            vocab_size=len(self.tok),
            tokenizer=type(self.tok).__name__,
            device=str(self.m.device),
            dtype=str(self.m.dtype).removeprefix("torch."),
            components=list(COMPONENTS),
        )
