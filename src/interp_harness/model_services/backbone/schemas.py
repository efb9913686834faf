"""OpenAI-compatible chat-completion shapes (the subset we serve and read), plus our extensions.

Also the legacy `POST /v1/completions` (a prompt string, list of strings or token ids; `echo`,
integer `logprobs`) and streaming chunks of both (`chat.completion.chunk`, `text_completion`).

Extensions (ignored by, or harmless to, other OpenAI-compatible servers):
- `forced_choice`: a list of strings; the first generated token is restricted to their first
  tokens, and the reply's logprobs list each choice's full-vocabulary logprob;
- `extra_logprobs`: a list of strings; with `logprobs`, every generated position's `top_logprobs`
  also lists the first token of each (after the top ones, whatever its rank);
- `include_stop_str_in_output`: as in vLLM;
- `POST /v1/batch/chat/completions`: many message lists sharing one set of parameters, answered
  in order in one response (one batch on the model, with the shared prefix computed once).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator
from pydantic_core import PydanticCustomError

MAX_N = 16  # choices per request; each counts as one prompt against the queue bound
# content part types OpenAI's clients send, by what they carry (for the 400 that refuses them)
_PART_KINDS = {
    "image_url": "image", "image": "image", "input_image": "image",
    "input_audio": "audio", "audio": "audio", "file": "file", "input_file": "file",
}  # fmt: skip


class TextPart(BaseModel):
    """A list-form content part. Only text is served: an image or audio part is a 400."""

    type: Literal["text"]
    text: str


class ChatMessage(BaseModel):
    # `developer` is the newer OpenAI name of `system` (sent by recent SDKs and tools)
    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[TextPart]

    @field_validator("role")
    @classmethod
    def _developer_is_system(cls, v: str) -> str:
        return "system" if v == "developer" else v

    @field_validator("content", mode="before")
    @classmethod
    def _text_parts_only(cls, v: Any) -> Any:
        # Checked before the union: a non-text part otherwise fails both of its branches, and
        # the 400 was a dump of both with `param` naming the string branch.
        for i, part in enumerate(v if isinstance(v, list) else ()):
            kind = part.get("type", "text") if isinstance(part, dict) else "text"
            if kind != "text":
                # only a type we know is named back: errors never echo the caller's input
                known = kind if isinstance(kind, str) and kind in _PART_KINDS else None
                what = f"has type '{known}'" if known else "is not of type 'text'"
                raise PydanticCustomError(
                    "unsupported_content_part",
                    "{kind} parts are not supported: this server reads text only (part {i} of "
                    "the content {what}); send the text parts alone",
                    {"kind": _PART_KINDS.get(known or "", "non-text"), "i": i, "what": what},
                )
        return v

    @field_validator("content")
    @classmethod
    def _join_parts(cls, v: str | list[TextPart]) -> str:
        # as vLLM does: the text parts joined by newlines
        return v if isinstance(v, str) else "\n".join(p.text for p in v)


class StreamOptions(BaseModel):
    include_usage: bool = False


class SamplingParams(BaseModel):
    """Everything of a chat request except the messages."""

    model: str | None = None
    max_tokens: int | None = Field(None, ge=1, le=4096)
    max_completion_tokens: int | None = Field(None, ge=1, le=4096)
    temperature: float | None = Field(None, ge=0, allow_inf_nan=False)  # only greedy is served
    logprobs: bool = False
    top_logprobs: int | None = Field(None, ge=0, le=20)
    logit_bias: dict[str, float] | None = None
    stop: str | list[str] | None = None
    n: int = Field(1, ge=1, le=MAX_N)  # decoding is greedy: the n choices are the same
    forced_choice: list[str] | None = Field(None, min_length=1, max_length=20)
    extra_logprobs: list[str] | None = Field(None, min_length=1, max_length=20)
    include_stop_str_in_output: bool = False

    stream: bool = False
    stream_options: StreamOptions | None = None
    # Not served: declared so that a request using them is refused with a 400 that says so,
    # instead of being answered with prose its caller did not ask for.
    tools: list[Any] | None = None
    tool_choice: Any = None
    functions: list[Any] | None = None
    function_call: Any = None
    response_format: dict[str, Any] | None = None

    def unserved(self) -> str | None:
        """The first parameter set to something this server does not serve, or None."""
        if self.tools or self.functions:
            return "tools" if self.tools else "functions"
        if self.tool_choice not in (None, "none"):
            return "tool_choice"
        if self.function_call not in (None, "none"):
            return "function_call"
        if self.response_format and self.response_format.get("type", "text") != "text":
            return "response_format"
        return None


class ChatCompletionRequest(SamplingParams):
    messages: list[ChatMessage] = Field(min_length=1)


class CompletionRequest(SamplingParams):
    """The legacy completions request: a raw prompt (no chat template). `logprobs` is an integer
    there (how many alternatives per position), and `echo` returns the prompt (with its tokens'
    logprobs) before the completion."""

    prompt: (
        str
        | Annotated[list[int], Field(min_length=1)]
        | Annotated[list[str], Field(min_length=1)]
        | Annotated[list[Annotated[list[int], Field(min_length=1)]], Field(min_length=1)]
    )
    logprobs: int | None = Field(None, ge=0, le=20)  # type: ignore[assignment]
    max_tokens: int | None = Field(16, ge=0, le=4096)  # OpenAI's default; 0 with echo scores
    echo: bool = False
    suffix: str | None = None

    def prompts(self) -> list[str | list[int]]:
        p = self.prompt
        if isinstance(p, str) or (p and isinstance(p[0], int)):
            return [p]  # type: ignore[list-item]
        return list(p)  # type: ignore[arg-type]


class BatchChatCompletionRequest(SamplingParams):
    # every item is one conversation: an empty one has no prompt to complete
    messages_list: list[Annotated[list[ChatMessage], Field(min_length=1)]] = Field(
        min_length=1, max_length=1024
    )


class TopLogprob(BaseModel):
    token: str
    logprob: float
    bytes: list[int] | None = None


class TokenLogprobOut(TopLogprob):
    top_logprobs: list[TopLogprob] = Field(default_factory=list)


class ChoiceLogprobs(BaseModel):
    content: list[TokenLogprobOut] | None = None


class ResponseMessage(BaseModel):
    role: str = "assistant"
    content: str | None = None


class Choice(BaseModel):
    index: int = 0
    message: ResponseMessage
    logprobs: ChoiceLogprobs | None = None
    finish_reason: str | None = None


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class ChatCompletion(BaseModel):
    id: str = ""
    object: str = "chat.completion"
    created: int = 0
    model: str = ""
    choices: list[Choice]
    usage: Usage | None = None


class DeltaMessage(BaseModel):
    role: str | None = None
    content: str | None = None


class ChunkChoice(BaseModel):
    index: int = 0
    delta: DeltaMessage
    logprobs: ChoiceLogprobs | None = None
    finish_reason: str | None = None


class ChatCompletionChunk(BaseModel):
    id: str
    object: str = "chat.completion.chunk"
    created: int
    model: str
    choices: list[ChunkChoice]
    usage: Usage | None = None


class LegacyLogprobs(BaseModel):
    """The completions endpoint's logprobs: parallel lists over the tokens (the prompt's too with
    `echo`; the first prompt token has no logprob)."""

    tokens: list[str] = Field(default_factory=list)
    token_logprobs: list[float | None] = Field(default_factory=list)
    top_logprobs: list[dict[str, float] | None] = Field(default_factory=list)
    text_offset: list[int] = Field(default_factory=list)


class CompletionChoice(BaseModel):
    index: int = 0
    text: str
    logprobs: LegacyLogprobs | None = None
    finish_reason: str | None = None


class Completion(BaseModel):
    id: str
    object: str = "text_completion"
    created: int
    model: str
    choices: list[CompletionChoice]
    usage: Usage | None = None


class BatchChatCompletion(BaseModel):
    object: str = "batch.chat.completion"
    model: str = ""
    completions: list[ChatCompletion]


# request parameters declared only to be refused (SamplingParams.unserved)
UNSERVED_PARAMETERS = ("tools", "tool_choice", "functions", "function_call", "response_format")


class ModelCard(BaseModel):
    id: str
    object: str = "model"
    created: int = 0
    owned_by: str = "interp-harness"
    # what a request may set, in OpenRouter's model-list field: a client (the harness's
    # pre-flight) learns that no `tools` are served before a run, not from every episode's 400
    supported_parameters: list[str] = Field(
        default_factory=lambda: [
            f for f in ChatCompletionRequest.model_fields if f not in UNSERVED_PARAMETERS
        ]
    )


class ModelList(BaseModel):
    object: str = "list"
    data: list[ModelCard]


class TokenizeRequest(BaseModel):
    """vLLM's `/tokenize` shape (the fields we use)."""

    model: str | None = None
    prompt: str
    add_special_tokens: bool = False


class TokenizeResponse(BaseModel):
    tokens: list[int]
    count: int
    max_model_len: int | None = None


class DetokenizeRequest(BaseModel):
    """vLLM's `/detokenize` shape."""

    model: str | None = None
    tokens: list[int]


class DetokenizeResponse(BaseModel):
    prompt: str


class TokenizerInfo(BaseModel):
    """`GET /tokenizer_info`, as vLLM answers it (the fields lm-evaluation-harness reads: the
    special tokens as text, the chat template), plus the tokenizer's class and the context."""

    tokenizer_class: str
    bos_token: str | None = None
    eos_token: str | None = None
    pad_token: str | None = None
    unk_token: str | None = None
    chat_template: str | None = None
    model_max_length: int
