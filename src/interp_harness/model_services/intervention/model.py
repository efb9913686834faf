"""Loading a causal LM for the intervention service and naming its parts.

Components are pyvene's abstract names; pyvene maps them to modules for the GPT-2 and Llama
families (Llama's layout also covers SmolLM2, TinyLlama and Mistral-style models). Models:
- `smollm2` or a `.gguf` path: loaded by the backbone's loader (GGUF de-quantised, cached);
- `gpt2-tiny-random`, `llama-tiny-random` (tests), `gpt2-small-random`, `gpt2-xl-random`,
  `tinyllama-random` (GPT-2 small's, GPT-2 XL's and TinyLlama-1.1B's shapes, for speed checks):
  built from a config with seeded random weights and a byte-level tokenizer, directly on the
  device and in the dtype asked for (nothing is downloaded);
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
RANDOM_MODELS = (
    "gpt2-tiny-random",
    "llama-tiny-random",
    "gpt2-small-random",
    "gpt2-xl-random",
    "tinyllama-random",
)


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


def _random_config(name: str, vocab: int) -> Any:
    from transformers import GPT2Config, LlamaConfig

    ends = {"bos_token_id": vocab - 1, "eos_token_id": vocab - 1}  # the byte tokenizer's last id

    gpt2 = {  # (layers, width, heads)
        "gpt2-tiny-random": (3, 48, 4),
        "gpt2-small-random": (12, 768, 12),
        "gpt2-xl-random": (48, 1600, 25),
    }
    if name in gpt2:
        layers, width, heads = gpt2[name]
        positions = 512 if name == "gpt2-tiny-random" else 1024
        return GPT2Config(
            n_layer=layers,
            n_embd=width,
            n_head=heads,
            n_positions=positions,
            vocab_size=vocab,
            **ends,  # GPT-2's default 50256 is outside this vocabulary (a warning per build)
        )
    if name == "llama-tiny-random":
        return LlamaConfig(
            num_hidden_layers=3,
            hidden_size=48,
            intermediate_size=80,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=512,
            vocab_size=vocab,
        )
    if name == "tinyllama-random":  # TinyLlama-1.1B's config, our byte vocabulary
        return LlamaConfig(
            num_hidden_layers=22,
            hidden_size=2048,
            intermediate_size=5632,
            num_attention_heads=32,
            num_key_value_heads=4,
            max_position_embeddings=2048,
            rms_norm_eps=1e-5,
            vocab_size=vocab,
        )
    raise ModelNotSupported(f"unknown random model {name!r}; known: {', '.join(RANDOM_MODELS)}")


def random_model(
    name: str,
    seed: int = 0,
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
) -> tuple[Any, Any]:
    """(tokenizer, model) of a random model, its weights drawn on `device` in `dtype`: drawing
    GPT-2 XL's 1.5B weights on a CPU and casting took minutes, and the float32 copy stayed in a
    GPU's peak memory. Seeded: the same name, device and dtype give the same weights."""
    from transformers import GPT2LMHeadModel, LlamaForCausalLM

    tok = byte_tokenizer()
    vocab, eos = len(tok), tok.eos_token_id
    cfg = _random_config(name, vocab)
    cls = GPT2LMHeadModel if cfg.model_type == "gpt2" else LlamaForCausalLM
    torch.manual_seed(seed)  # seeds CUDA's generators too
    with torch.device(device):
        lm = cls._from_config(cfg, dtype=dtype)
    # set after building: a pad id at build time would zero Llama's embedding row of that id
    lm.config.bos_token_id = lm.config.eos_token_id = lm.config.pad_token_id = eos
    lm.generation_config.bos_token_id = lm.generation_config.eos_token_id = eos
    lm.generation_config.pad_token_id = eos
    return tok, lm


def _load_raw(model: str, device: torch.device, dtype: torch.dtype) -> tuple[Any, Any]:
    from pathlib import Path

    if model in RANDOM_MODELS:
        return random_model(model, device=device, dtype=dtype)
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
    tok, lm = _load_raw(model, dev, dt)
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
