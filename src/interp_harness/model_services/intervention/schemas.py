"""Request and response shapes of the intervention service (declarative JSON, never code).

Positions always index the text's own tokens (0 = first token, as `/v1/tokenize` lists them),
whatever padding the server uses. A position spec is "all", "last", or an object:
`{"token_span": [start, end]}` (end exclusive), `{"char_span": [start, end]}` (every token that
overlaps the characters), or `{"tokens": [i, ...]}` (negative counts from the end).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from interp_harness.model_services.intervention.model import Component

Pooling = Literal["none", "max", "mean"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt field is an error, not a default


class TokenSpan(_Strict):
    token_span: tuple[int, int]


class CharSpan(_Strict):
    char_span: tuple[int, int]


class TokenList(_Strict):
    tokens: list[int] = Field(min_length=1)


PositionSpec = Literal["all", "last"] | TokenSpan | CharSpan | TokenList
# one spec for every text, or one per text
Positions = PositionSpec | list[PositionSpec]


class TokenizeRequest(_Strict):
    texts: list[str] = Field(min_length=1)


class TokenizedText(BaseModel):
    ids: list[int]
    tokens: list[str]
    offsets: list[tuple[int, int]]  # character span of each token in the text


class TokenizeResponse(BaseModel):
    results: list[TokenizedText]


class ActivationsRequest(_Strict):
    texts: list[str] = Field(min_length=1)
    component: Component
    layers: list[int] = Field(min_length=1)
    neurons: list[int] | None = Field(None, min_length=1)  # None: the whole vector
    positions: Positions = "all"
    pooling: Pooling = "none"
    # a served SAE's name (GET /v1/saes): the values are its latents' activations at its hook
    # (`layers` = [its layer], `component` = its component) and `neurons` are latent indices
    sae: str | None = Field(None, min_length=1, max_length=100)


class LayerValues(BaseModel):
    layer: int
    values: list[list[float]]  # [position (or 1 pooled row)][neuron]


class TextActivations(BaseModel):
    positions: list[int]  # token positions read (pooled over, with pooling)
    tokens: list[str]  # the tokens at those positions
    layers: list[LayerValues]


class ActivationsResponse(BaseModel):
    model: str
    component: str
    neurons: list[int] | None
    results: list[TextActivations]
    sae: str | None = None  # the SAE whose latents `neurons` name, when the request named one
    # seconds this request waited for the model: queued behind other requests, and the share of
    # a merged engine call spent on its neighbours' texts (a target call's limit leaves it out)
    queue_s: float | None = None


class FeaturizerRef(_Strict):
    id: str
    dims: list[int] | None = Field(None, min_length=1)  # None: the registered feature dims


class Site(_Strict):
    layer: int
    component: Component
    base_positions: Positions = "last"
    source_positions: Positions | None = None  # None: the same spec as base_positions
    op: Literal["interchange", "zero", "mean"] = "interchange"
    source: int = Field(0, ge=0)  # which of the example's sources (multi-source form)
    neurons: list[int] | None = Field(None, min_length=1)  # None: the whole vector
    featurizer: FeaturizerRef | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Site:
        if self.neurons is not None and self.featurizer is not None:
            raise ValueError("a site swaps either neurons or featurizer dims, not both")
        if self.op != "interchange" and self.featurizer is not None:
            raise ValueError("featurizer sites must use op 'interchange'")
        return self


class Example(_Strict):
    base: str
    sources: list[str] = Field(default_factory=list)


class Readout(_Strict):
    """Activations to read from the intervened base run (after every site has been written)."""

    layer: int
    component: Component
    positions: Positions = "all"
    neurons: list[int] | None = Field(None, min_length=1)


class InterchangeRequest(_Strict):
    examples: list[Example] = Field(min_length=1)
    sites: list[Site] = Field(min_length=1)
    max_new_tokens: int = Field(1, ge=1)
    top_k: int = Field(0, ge=0, le=100)  # top-k next-token logprobs at the first step
    return_original: bool = True  # also run the base without the intervention
    mean_texts: list[str] | None = None  # texts whose mean activation 'mean' sites write
    read: Readout | None = None


class TopToken(BaseModel):
    id: int
    token: str
    logprob: float


class Continuation(BaseModel):
    ids: list[int]
    tokens: list[str]
    text: str
    top: list[TopToken] = Field(default_factory=list)


class InterchangeResult(BaseModel):
    original: Continuation | None = None
    intervened: Continuation
    read: list[list[float]] | None = None  # [position][neuron] of `read`, intervened run


class InterchangeResponse(BaseModel):
    model: str
    results: list[InterchangeResult]
    queue_s: float | None = None  # as ActivationsResponse.queue_s


class GenerateRequest(_Strict):
    prompts: list[str] = Field(min_length=1)
    max_new_tokens: int = Field(16, ge=1)
    top_k: int = Field(0, ge=0, le=100)


class GenerateResponse(BaseModel):
    model: str
    results: list[Continuation]
    queue_s: float | None = None  # as ActivationsResponse.queue_s


class ArrayB64(_Strict):
    """A little-endian float array: base64 of its raw bytes, with its shape."""

    shape: list[int] = Field(min_length=1, max_length=2)
    dtype: Literal["float32", "float16", "float64"] = "float32"
    data: str


class FeaturizerSpec(_Strict):
    """A bijective map of one component's vectors into a feature space.

    - rotation: `weight` is k×n with orthonormal rows (rows are features, as RAVEL stores them);
      k = n is a full rotation, k < n a low-rank (DAS) subspace;
    - autoencoder: `encoder_weight` m×n, `encoder_bias` m, `decoder_weight` n×m, `decoder_bias` n
      (an SAE; its reconstruction error is kept, so the map stays invertible);
    - mask: `mask` of n values in [0, 1]; features are the dims with mask > 0.5 (DBM).
    Weights come as `arrays` (base64 float arrays) or `safetensors` (base64 of a safetensors
    file with tensors of those names).
    """

    id: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.:-]+$")
    kind: Literal["rotation", "autoencoder", "mask"]
    component: Component
    layer: int | None = None  # informative; sites name the layer
    feature_dims: list[int] | None = None  # the dims that localise the concept (default: all)
    arrays: dict[str, ArrayB64] | None = None
    safetensors: str | None = None
    replace: bool = False


class FeaturizerInfo(BaseModel):
    id: str
    kind: str
    component: str
    layer: int | None
    input_dim: int
    feature_count: int
    feature_dims: list[int]


class FeaturizerList(BaseModel):
    data: list[FeaturizerInfo]


class SAEInfo(BaseModel):
    """One served SAE (no filesystem path: the listing reaches API callers)."""

    name: str
    d_in: int
    d_sae: int
    layer: int
    component: str
    hook_name: str  # its SAELens (TransformerLens) hook, e.g. blocks.3.hook_resid_post
    architecture: str  # SAELens's: standard, topk, jumprelu, ...
    k: int | None = None  # topk only


class SAEList(BaseModel):
    data: list[SAEInfo]


class ModelInfo(BaseModel):
    id: str
    object: str = "model"
    family: str
    n_layers: int
    hidden_size: int
    mlp_width: int
    max_positions: int
    vocab_size: int
    tokenizer: str
    device: str
    dtype: str
    components: list[str]


class ModelList(BaseModel):
    object: str = "list"
    data: list[ModelInfo]
