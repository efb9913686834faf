"""Loading a causal LM for the intervention service and naming its parts.

Components are pyvene's abstract names; pyvene maps them to modules for the GPT-2 and Llama
families (Llama's layout also covers SmolLM2, TinyLlama and Mistral-style models). Models:
- `smollm2` or a `.gguf` path: loaded by the backbone's loader (GGUF de-quantised, cached);
- `gpt2-tiny-random`, `llama-tiny-random`, `gpt2-xl-random`: built from a config with seeded random
  weights and a byte-level tokenizer (tests and speed checks; nothing is downloaded);
- anything else: a Hugging Face id or local folder for `from_pretrained`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal, get_args

import torch

log = logging.getLogger(__name__)

Component = Literal[
    "block_input", "block_output", "attention_output", "mlp_input", "mlp_activation", "mlp_output"
]
COMPONENTS: tuple[str, ...] = get_args(Component)
FAMILIES = {"gpt2": "gpt2", "llama": "llama", "mistral": "llama", "qwen2": "llama"}
RANDOM_MODELS = ("gpt2-tiny-random", "llama-tiny-random", "gpt2-xl-random")


class ModelNotSupported(RuntimeError):
    pass


@dataclass
class LoadedModel:
    name: str
    tokenizer: Any
    lm: Any
    family: str  # "gpt2" | "llama"
    n_layers: int
    hidden_size: int
    mlp_width: int
    max_positions: int
    device: torch.device
    dtype: torch.dtype

    def width(self, component: str) -> int:
        return self.mlp_width if component == "mlp_activation" else self.hidden_size


def resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    d = torch.device(device)
    if d.type == "cuda" and not torch.cuda.is_available():
        raise ModelNotSupported(f"device {device!r} asked for but CUDA is not available")
    return d


def resolve_dtype(dtype: str, device: torch.device) -> torch.dtype:
    if dtype == "auto":  # half precision only where it is fast (GPU)
        return torch.float16 if device.type == "cuda" else torch.float32
    try:
        out = getattr(torch, dtype)
    except AttributeError:
        out = None
    if not isinstance(out, torch.dtype) or not out.is_floating_point:
        raise ModelNotSupported(f"unknown dtype {dtype!r} (float32, float16, bfloat16 or auto)")
    return out


def byte_tokenizer() -> Any:
    """A byte-level tokenizer (256 byte tokens + end-of-text) with character offsets, for the
    random models: no file or download needed."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    vocab["<|endoftext|>"] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>"
    )


def random_model(name: str, seed: int = 0) -> tuple[Any, Any]:
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    tok = byte_tokenizer()
    vocab, eos = len(tok), tok.eos_token_id
    torch.manual_seed(seed)
    if name == "gpt2-tiny-random":
        cfg = GPT2Config(n_layer=3, n_embd=48, n_head=4, n_positions=512, vocab_size=vocab)
        lm: Any = GPT2LMHeadModel(cfg)
    elif name == "gpt2-xl-random":  # GPT-2 XL's shape: speed checks need no weights
        cfg = GPT2Config(n_layer=48, n_embd=1600, n_head=25, n_positions=1024, vocab_size=vocab)
        lm = GPT2LMHeadModel(cfg)
    elif name == "llama-tiny-random":
        cfg = LlamaConfig(
            num_hidden_layers=3,
            hidden_size=48,
            intermediate_size=80,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=512,
            vocab_size=vocab,
        )
        lm = LlamaForCausalLM(cfg)
    else:
        raise ModelNotSupported(f"unknown random model {name!r}; known: {', '.join(RANDOM_MODELS)}")
    lm.config.bos_token_id = lm.config.eos_token_id = lm.config.pad_token_id = eos
    lm.generation_config.bos_token_id = lm.generation_config.eos_token_id = eos
    lm.generation_config.pad_token_id = eos
    return tok, lm


def _load_raw(model: str, dtype: torch.dtype) -> tuple[Any, Any]:
    from pathlib import Path

    if model in RANDOM_MODELS:
        return random_model(model)
    from interp_harness.model_services.backbone import model as backbone_model

    if model == backbone_model.DEFAULT_MODEL or Path(model).suffix == ".gguf":
        return backbone_model.load(model)  # float32; cast below
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoTokenizer.from_pretrained(model), AutoModelForCausalLM.from_pretrained(
        model, dtype=dtype
    )


def load(model: str, device: str = "auto", dtype: str = "auto") -> LoadedModel:
    dev = resolve_device(device)
    dt = resolve_dtype(dtype, dev)
    tok, lm = _load_raw(model, dt)
    cfg = lm.config
    family = FAMILIES.get(getattr(cfg, "model_type", ""))
    if family is None:
        raise ModelNotSupported(
            f"{model!r} is a {cfg.model_type!r} model; served families: GPT-2 and Llama-like "
            f"({', '.join(sorted(FAMILIES))})"
        )
    if not getattr(tok, "is_fast", False):
        raise ModelNotSupported(f"{model!r} has no fast tokenizer (character offsets need one)")
    if tok.pad_token is None:  # padding is always masked out; any id will do
        tok.pad_token = tok.eos_token or tok.unk_token
    tok.padding_side = "left"  # the last token sits in the last column; see engine.encode
    lm = lm.to(device=dev, dtype=dt).eval()
    lm.requires_grad_(False)
    if family == "gpt2":
        hidden, layers = cfg.n_embd, cfg.n_layer
        mlp, max_pos = cfg.n_inner or 4 * cfg.n_embd, cfg.n_positions
    else:
        hidden, layers = cfg.hidden_size, cfg.num_hidden_layers
        mlp, max_pos = cfg.intermediate_size, cfg.max_position_embeddings
    return LoadedModel(
        name=model,
        tokenizer=tok,
        lm=lm,
        family=family,
        n_layers=layers,
        hidden_size=hidden,
        mlp_width=mlp,
        max_positions=max_pos,
        device=dev,
        dtype=dt,
    )
