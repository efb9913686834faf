"""OpenAI-compatible chat-completion shapes (the subset we serve and read), plus our extensions.

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

from typing import Annotated, Literal

from pydantic import BaseModel, Field


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


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
    n: int = Field(1, ge=1, le=1)
    forced_choice: list[str] | None = Field(None, min_length=1, max_length=20)
    extra_logprobs: list[str] | None = Field(None, min_length=1, max_length=20)
    include_stop_str_in_output: bool = False


class ChatCompletionRequest(SamplingParams):
    messages: list[ChatMessage] = Field(min_length=1)


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


class BatchChatCompletion(BaseModel):
    object: str = "batch.chat.completion"
    model: str = ""
    completions: list[ChatCompletion]


class ModelCard(BaseModel):
    id: str
    object: str = "model"
    created: int = 0
    owned_by: str = "interp-harness"


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
