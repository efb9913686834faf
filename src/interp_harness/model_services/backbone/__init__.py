"""The project's own OpenAI-compatible LM server (transformers on CPU): the offline stand-in for
vLLM serving Vicuna-13B, used by FIND's entity/relation modules and by the judge.

Heavy imports (torch, transformers, FastAPI) happen in the submodules, not here.
"""

from interp_harness.model_services.backbone.model import DEFAULT_MODEL, DEFAULT_SERVED_NAME

__all__ = ["DEFAULT_MODEL", "DEFAULT_SERVED_NAME"]
