"""The model in this process, for training featurizers: hidden vectors at the last entity token,
and forward passes with a differentiable edit of that vector at one layer (a forward hook on the
decoder layer, the same site as pyvene's `block_output`). Batches are left-padded with position
ids counted from each row's first real token, as the intervention service pads them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from interp_harness.model_services.intervention.model import LoadedModel

Edit = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (base rows, source rows) -> new rows


class LocalModel:
    def __init__(self, loaded: LoadedModel, layer: int) -> None:
        if not 0 <= layer < loaded.n_layers:
            raise ValueError(f"layer {layer} out of range (model has {loaded.n_layers})")
        self.m, self.layer, self.tok = loaded, layer, loaded.tokenizer
        for p in loaded.lm.parameters():
            p.requires_grad_(False)
        self.block = _layers(loaded.lm)[layer]

    def _batch(self, texts: Sequence[str], spans: Sequence[tuple[int, int]]) -> tuple[dict, list]:
        enc = self.tok(list(texts), return_offsets_mapping=True, add_special_tokens=True)
        width = max(len(ids) for ids in enc["input_ids"])
        pad = self.tok.pad_token_id
        rows, masks, where = [], [], []
        for ids, offs, (s, e) in zip(enc["input_ids"], enc["offset_mapping"], spans, strict=True):
            hit = [i for i, (a, b) in enumerate(offs) if a < e and b > s and b > a]
            if not hit:
                raise ValueError(f"no token covers characters {s}-{e}")
            p = width - len(ids)
            rows.append([pad] * p + list(ids))
            masks.append([0] * p + [1] * len(ids))
            where.append(p + hit[-1])
        ids_t, mask = torch.tensor(rows), torch.tensor(masks)
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        dev = self.m.device
        return {
            "input_ids": ids_t.to(dev),
            "attention_mask": mask.to(dev),
            "position_ids": pos.to(dev),
        }, where

    @torch.no_grad()
    def hidden(
        self, texts: Sequence[str], spans: Sequence[tuple[int, int]], batch_size: int = 32
    ) -> torch.Tensor:
        """[len(texts), hidden] output of the layer at the token holding each span's last char."""
        out = []
        for i in range(0, len(texts), batch_size):
            batch, where = self._batch(texts[i : i + batch_size], spans[i : i + batch_size])
            grab: list[torch.Tensor] = []

            def hook(_m, _inp, output, where=where, grab=grab):
                h = output[0] if isinstance(output, tuple) else output
                grab.append(h[torch.arange(len(where)), torch.tensor(where)].float().clone())
                raise _Stop  # nothing after this layer is needed

            handle = self.block.register_forward_hook(hook)
            try:
                self.m.lm(**batch)
            except _Stop:
                pass
            finally:
                handle.remove()
            out.append(grab[0])
        return torch.cat(out).cpu()

    def next_token_logits(
        self,
        texts: Sequence[str],
        spans: Sequence[tuple[int, int]],
        sources: torch.Tensor,
        edit: Edit,
    ) -> torch.Tensor:
        """Logits of the next token after each text, with the entity-token vector h replaced by
        edit(h, source row) at the layer (gradients flow into the edit's parameters)."""
        batch, where = self._batch(texts, spans)
        rows = torch.arange(len(where))
        cols = torch.tensor(where)

        def hook(_m, _inp, output):
            h = output[0] if isinstance(output, tuple) else output
            h = h.clone()
            b = h[rows, cols]
            h[rows, cols] = edit(b.float(), sources.to(b.device)).to(h.dtype)
            return (h, *output[1:]) if isinstance(output, tuple) else h

        handle = self.block.register_forward_hook(hook)
        try:
            logits = self.m.lm(**batch).logits
        finally:
            handle.remove()
        return logits[:, -1].float()


class _Stop(Exception):
    pass


def _layers(lm: torch.nn.Module) -> torch.nn.ModuleList:
    for path in ("model.layers", "transformer.h"):
        obj = lm
        try:
            for part in path.split("."):
                obj = getattr(obj, part)
        except AttributeError:
            continue
        return obj
    raise ValueError(f"cannot find the decoder layers of {type(lm).__name__}")
