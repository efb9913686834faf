"""Request and response shapes of the intervention service (declarative JSON, never code).

Positions always index the text's own tokens (0 = first token, as `/v1/tokenize` lists them),
whatever padding the server uses. A position spec is "all", "last", or an object:
`{"token_span": [start, end]}` (end exclusive), `{"char_span": [start, end]}` (every token that
overlaps the characters), or `{"tokens": [i, ...]}` (negative counts from the end).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, model_validator

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


# ---- compiled transformers (the circuits family's tracr models) -------------------------------
# Bounds of one request, the target service's own (function_store/circuits/runner.py reads them)
CIRCUIT_MAX_INPUTS = 64  # inputs of one run / ablate / patch call
CIRCUIT_MAX_READ = 16  # inputs of one activations call (its reply is [input][position][unit])
CIRCUIT_MAX_REFERENCE = 4 * CIRCUIT_MAX_INPUTS  # reference inputs of one ablation
# tokens of one input: far above any compiled model's longest input (each model checks its own)
CIRCUIT_MAX_TOKENS = 64
# a target id: `/`-separated names, none starting with a dot, so no id is a path that climbs
# (`..`) or starts at the root; the server also looks every id up in its catalogs
CIRCUIT_ID = r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*){0,7}$"

CircuitId = Annotated[str, Field(min_length=1, max_length=200, pattern=CIRCUIT_ID)]
# a token of the program's vocabulary: a string or an integer, as its catalog lists it (no
# coercion: "1" and 1 are different tokens)
CircuitToken = StrictInt | Annotated[StrictStr, Field(max_length=32)]
CircuitInput = Annotated[list[CircuitToken], Field(min_length=1, max_length=CIRCUIT_MAX_TOKENS)]
CircuitComponent = Annotated[str, Field(min_length=1, max_length=40)]
CircuitComponents = Annotated[list[CircuitComponent], Field(min_length=1, max_length=256)]


class CircuitTarget(BaseModel):
    """A served compiled model's interface: what its `task` command tells an agent, nothing of
    its program, its variables or which components are empty."""

    id: str
    vocab: list[str | int]
    max_len: int
    n_layers: int
    n_heads: int
    output_kind: Literal["categorical", "numerical"]
    components: list[str]  # every head slot and MLP (empty ones included)


class CircuitTargetList(BaseModel):
    object: str = "list"
    data: list[str]  # the ids served


class CircuitRunRequest(_Strict):
    target: CircuitId
    inputs: list[CircuitInput] = Field(min_length=1, max_length=CIRCUIT_MAX_INPUTS)


class CircuitActivationsRequest(_Strict):
    target: CircuitId
    inputs: list[CircuitInput] = Field(min_length=1, max_length=CIRCUIT_MAX_READ)
    component: CircuitComponent  # L0H1, L0MLP, L0H1.pattern, L0.resid_mid, L0.resid_post, embed


class CircuitAblateRequest(_Strict):
    target: CircuitId
    inputs: list[CircuitInput] = Field(min_length=1, max_length=CIRCUIT_MAX_INPUTS)
    components: CircuitComponents
    kind: Literal["zero", "mean", "resample"] = "zero"
    # None: drawn from the vocabulary with `seed`, per input length
    reference: list[CircuitInput] | None = Field(
        None, min_length=1, max_length=CIRCUIT_MAX_REFERENCE
    )
    seed: int = Field(0, ge=0, le=2**62)


class CircuitPatchRequest(_Strict):
    target: CircuitId
    base: list[CircuitInput] = Field(min_length=1, max_length=CIRCUIT_MAX_INPUTS)
    source: list[CircuitInput] = Field(min_length=1, max_length=CIRCUIT_MAX_INPUTS)
    components: CircuitComponents


class CircuitTokenizeRequest(_Strict):
    target: CircuitId
    # inputs as an agent writes them: tokens separated by commas (a,b,c) or written together
    texts: list[Annotated[str, Field(max_length=1000)]] = Field(
        min_length=1, max_length=CIRCUIT_MAX_INPUTS
    )


class CircuitTokenized(BaseModel):
    tokens: list[str | int]
    ids: list[int]  # rows of the token embedding (the BOS row, which the model adds, left out)


class CircuitTokenizeResponse(BaseModel):
    target: str
    results: list[CircuitTokenized]


class CircuitOutputs(BaseModel):
    """Per input, the decoded output at each position (None where it is undefined)."""

    target: str
    results: list[list[Any]]


class CircuitActivationsResponse(BaseModel):
    """[input][position][unit] (a pattern: [input][query position][key position]); None past an
    input's end (the in-process array's NaN: JSON has none)."""

    target: str
    component: str
    results: list[list[list[float | None]]]
