"""Batched greedy generation with token logprobs over a transformers causal LM (CPU).

One `generate` call takes many chat requests and runs them as one batch:
1. every prompt is rendered with the model's chat template and tokenised;
2. the longest common token prefix of the batch (for FIND's modules: the system prompt and the
   instruction; only the word differs) is run once, batch size 1, and its keys/values are
   repeated across the batch;
3. the differing suffixes are run together on that cache (right-padded, with explicit positions),
   then all rows decode greedily in lock-step until each hits EOS, a stop string or max_tokens.

Logprobs are log-softmax of the logits after `logit_bias` ("processed" logprobs, like vLLM's
`--logprobs-mode processed_logprobs`); without a bias they are the model's own.
`forced_choice` (our extension) restricts the first generated token to the first tokens of the
given strings and reports their full-vocabulary logprobs. `extra_logprobs` (our extension) adds the
first tokens of the given strings to `top` at every generated position, whatever their rank: a
client that needs P("0") and P("1") at some step then never has to ask again.

A request may carry raw prompt token ids instead of messages (the legacy completions endpoint),
ask for its prompt tokens' logprobs (`echo`), and stream: `on_text` is called from the engine's
thread with each new piece of the reply text as the tokens are decoded (never text that a stop
string could still take back, nor half of a UTF-8 character).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from interp_harness.model_services.backbone.small_matmul import use_small_row_matmul
from interp_harness.model_services.text_bounds import token_chars


@dataclass
class GenRequest:
    messages: list[dict[str, str]] = field(default_factory=list)
    prompt_ids: list[int] | None = None  # raw prompt (legacy completions): no chat template
    max_tokens: int = 16
    logprobs: bool = False
    top_logprobs: int = 0
    logit_bias: dict[int, float] | None = None
    forced_choice: list[str] | None = None
    extra_logprobs: list[str] | None = None
    stop: list[str] | None = None
    include_stop_str_in_output: bool = False  # vLLM's extension, same meaning
    prompt_logprobs: int | None = None  # the prompt tokens' logprobs, with this many alternatives
    on_text: Callable[[str], None] | None = field(default=None, repr=False, compare=False)
    # set when nobody waits for the answer any more (the client went away): not computed, or
    # dropped from its batch at the next decode step
    cancel: threading.Event | None = field(default=None, repr=False, compare=False)

    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()


@dataclass
class TokenLogprob:
    token_id: int
    token: str
    logprob: float
    top: list[tuple[int, str, float]] = field(default_factory=list)


@dataclass
class GenResult:
    text: str
    finish_reason: str  # stop | length
    prompt_tokens: int
    tokens: list[TokenLogprob] = field(default_factory=list)  # with logprobs only
    completion_tokens: int = 0  # always counted
    prompt: list[TokenLogprob] | None = None  # prompt tokens after the first (prompt_logprobs)


PACK_TOKENS = 1024  # most suffix tokens packed into one prefill pass (see Engine._chunks)
PREFILL_CHUNK = 512  # a prefix longer than twice this is prefilled in pieces of this many tokens


class _Dropped(Exception):
    """Every request of a batch was cancelled during its prefill."""


class BadRequest(ValueError):
    """The request cannot be served (e.g. an unknown token id in logit_bias). `param` and `code`
    fill the OpenAI error object's fields of those names."""

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.param, self.code = param, code


CANCELLED = "cancelled"  # finish_reason of a request dropped because its client went away


class Engine:
    def __init__(
        self, tokenizer: Any, model: Any, *, max_batch: int = 64, small_row_matmul: bool = True
    ) -> None:
        self.tok = tokenizer
        self.model = model
        if small_row_matmul:  # faster decode steps on CPU (see small_matmul)
            use_small_row_matmul(model)
        self.max_batch = max_batch
        # prompt + completion tokens one request may use: the model's own context, or less
        self.context_len = int(getattr(model.config, "max_position_embeddings", 0) or 2048)
        self.token_chars = token_chars(tokenizer)  # a text longer than context × this never fits
        self.vocab_size = int(model.get_output_embeddings().weight.shape[0])
        eos = model.generation_config.eos_token_id
        if eos is None:
            eos = tokenizer.eos_token_id
        self.eos_ids = set(eos if isinstance(eos, list) else [eos])
        self.pad_id = (
            tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(self.eos_ids)
        )
        self._lock = threading.Lock()  # one forward pass at a time; torch uses all cores anyway
        self.stats = {"batches": 0, "requests": 0, "prefix_tokens_saved": 0}

    # --- prompts ---------------------------------------------------------------------------
    def render(self, messages: Sequence[dict[str, str]]) -> str:
        """The chat-templated prompt. A final assistant message is continued, not closed."""
        cont = bool(messages) and messages[-1].get("role") == "assistant"
        return self.tok.apply_chat_template(
            list(messages),
            tokenize=False,
            add_generation_prompt=not cont,
            continue_final_message=cont,
        )

    def encode_prompt(self, messages: Sequence[dict[str, str]]) -> list[int]:
        return list(self.tok(self.render(messages), add_special_tokens=False)["input_ids"])

    def prompt_of(self, r: GenRequest) -> list[int]:
        return list(r.prompt_ids) if r.prompt_ids is not None else self.encode_prompt(r.messages)

    def tokenize(self, text: str) -> list[int]:
        return list(self.tok(text, add_special_tokens=False)["input_ids"])

    def token_text(self, token_id: int) -> str:
        return self.tok.decode([token_id])

    @property
    def max_prompt_chars(self) -> int:
        """More characters than this can never fit the context, whatever they are."""
        return self.context_len * self.token_chars

    def check_chars(self, chars: int, param: str = "messages", what: str = "messages") -> None:
        """BadRequest (`context_length_exceeded`) for a text too long to fit the context in any
        tokenization: decided from its length alone, before tokenizing it (seconds and
        gigabytes for megabytes of text)."""
        if chars > self.max_prompt_chars:
            raise BadRequest(
                f"This model's maximum context length is {self.context_len} tokens, which hold at "
                f"most {self.max_prompt_chars} characters (no token is longer than "
                f"{self.token_chars}). However, the {what} hold {chars} characters. Please reduce "
                f"the length of the {what}.",
                param=param,
                code="context_length_exceeded",
            )

    # --- generation ------------------------------------------------------------------------
    def check_length(self, prompt_tokens: int, max_tokens: int, param: str = "messages") -> None:
        """BadRequest (OpenAI's `context_length_exceeded`) unless the prompt and the completion
        fit the context; checked before any forward pass."""
        if prompt_tokens + max_tokens > self.context_len:
            raise BadRequest(
                f"This model's maximum context length is {self.context_len} tokens. However, you "
                f"requested {prompt_tokens + max_tokens} tokens ({prompt_tokens} in the messages, "
                f"{max_tokens} in the completion). Please reduce the length of the messages or "
                "completion.",
                param=param,
                code="context_length_exceeded",
            )

    def generate(self, requests: Sequence[GenRequest]) -> list[GenResult]:
        reqs = list(requests)
        out: list[GenResult] = [GenResult("", CANCELLED, 0)] * len(reqs)
        index = {id(r): i for i, r in enumerate(reqs)}
        live = [r for r in reqs if not r.cancelled()]
        for chunk in self._chunks(live):
            chunk = [r for r in chunk if not r.cancelled()]  # the client left meanwhile
            if not chunk:
                continue
            with self._lock, torch.inference_mode():
                try:
                    results = self._generate_batch(chunk)
                except _Dropped:  # every client of this chunk left during its prefill
                    continue
                for r, res in zip(chunk, results, strict=True):
                    if r.prompt_logprobs is not None and not r.cancelled():
                        res.prompt = self._prompt_logprobs(self.prompt_of(r), r.prompt_logprobs)
                    out[index[id(r)]] = res
        return out

    def _chunks(self, reqs: list[GenRequest]) -> list[list[GenRequest]]:
        """Consecutive groups of at most `max_batch` requests whose suffixes (after the group's
        common prefix) add up to at most PACK_TOKENS: the packed prefill attends over all of a
        group's tokens at once, so its cost grows with the square of that total. Short suffixes
        (a word each) still go 64 at a time; long ones (judge prompts, ~100 tokens after their
        shared description) go in groups, each with its own longer shared prefix."""
        chunks: list[list[GenRequest]] = []
        cur: list[GenRequest] = []
        first: list[int] = []
        plen = 0
        lens: list[int] = []
        for r in reqs:
            ids = self.prompt_of(r)
            if cur:
                p = min(plen, _common_prefix_len([first, ids]))
                total = sum(n - p for n in lens) + len(ids) - p
                if len(cur) < self.max_batch and total <= PACK_TOKENS:
                    cur.append(r)
                    lens.append(len(ids))
                    plen = p
                    continue
                chunks.append(cur)
            cur, first, plen, lens = [r], ids, len(ids), [len(ids)]
        if cur:
            chunks.append(cur)
        return chunks

    def _generate_batch(self, reqs: list[GenRequest]) -> list[GenResult]:
        prompts = [self.prompt_of(r) for r in reqs]
        if any(not p for p in prompts):
            raise BadRequest("empty prompt")
        self.stats["batches"] += 1
        self.stats["requests"] += len(reqs)
        n = len(reqs)
        # Shared prefix; every row keeps at least one token of its own to produce its logits.
        # (A lone prompt is all prefix but its last token: the same one pass, and a long one is
        # then prefilled in pieces, see _prefill.)
        plen = _common_prefix_len(prompts) if n > 1 else len(prompts[0])
        plen = min(plen, min(len(p) for p in prompts) - 1)
        if plen > 0:
            self.stats["prefix_tokens_saved"] += plen * (n - 1)
        suffixes = [p[plen:] for p in prompts]
        lens = [len(s) for s in suffixes]
        logits, packed = self._prefill(
            prompts[0][:plen], suffixes, lambda: all(r.cancelled() for r in reqs)
        )
        cache = mask = next_pos = None  # padded batch layout, built only if some row decodes on
        rows = list(range(n))  # batch row -> request index (finished rows leave the batch)

        biases = [self._bias_vector(r) for r in reqs]
        choices = [self._first_tokens(r.forced_choice) for r in reqs]
        extras = [self._first_tokens(r.extra_logprobs) for r in reqs]
        limits = [1 if r.forced_choice else max(1, r.max_tokens) for r in reqs]
        gen: list[list[int]] = [[] for _ in reqs]
        infos: list[list[TokenLogprob]] = [[] for _ in reqs]
        done = [False] * n
        finish = ["length"] * n
        streamed = [""] * n  # text already handed to each request's on_text
        step = 0
        while True:
            logits = logits.float()
            chosen = torch.full((len(rows),), self.pad_id, dtype=torch.long)
            for i, b in enumerate(rows):
                r = reqs[b]
                if done[b]:
                    continue
                row = logits[i]
                if biases[b] is not None:
                    row = row + biases[b]
                lp = torch.log_softmax(row, dim=-1)
                if choices[b] is not None and step == 0:
                    cids = torch.tensor(choices[b])
                    tid = int(cids[torch.argmax(lp[cids])])
                    top = [(c, self.token_text(c), float(lp[c])) for c in choices[b]]
                else:
                    tid = int(torch.argmax(lp))
                    top = []
                    if r.top_logprobs > 0:
                        vals, idx = torch.topk(lp, min(r.top_logprobs, lp.shape[0]))
                        top = [
                            (int(i), self.token_text(int(i)), float(v))
                            for v, i in zip(vals, idx, strict=True)
                        ]
                    listed = {t[0] for t in top}
                    top += [
                        (c, self.token_text(c), float(lp[c]))
                        for c in extras[b] or ()
                        if c not in listed
                    ]
                chosen[i] = tid
                if tid in self.eos_ids:
                    done[b], finish[b] = True, "stop"
                    continue
                gen[b].append(tid)
                if r.logprobs or r.forced_choice:
                    infos[b].append(TokenLogprob(tid, self.token_text(tid), float(lp[tid]), top))
                if r.stop and any(s in self.tok.decode(gen[b][-8:]) for s in r.stop):
                    done[b], finish[b] = True, "stop"
                elif len(gen[b]) >= limits[b]:
                    done[b] = True
                if r.on_text is not None and not done[b]:  # the last piece comes with the result
                    text = self.tok.decode(gen[b], skip_special_tokens=True)
                    streamed[b] = _stream(r.on_text, streamed[b], _settled(text, r.stop))
            step += 1
            for b in rows:
                if not done[b] and reqs[b].cancelled():
                    done[b], finish[b] = True, CANCELLED
            alive = [i for i, b in enumerate(rows) if not done[b]]
            if not alive:
                break
            if cache is None:  # first decode step: only the unfinished rows are unpacked
                rows = [rows[i] for i in alive]
                chosen = chosen[alive]
                cache, mask = _unpack(packed, plen, lens, rows)
                next_pos = torch.tensor([plen + lens[b] for b in rows])
            elif len(alive) < len(rows):
                sel = torch.tensor(alive)
                cache.batch_select_indices(sel)
                rows, chosen, mask, next_pos = (
                    [rows[i] for i in alive],
                    chosen[sel],
                    mask[sel],
                    next_pos[sel],
                )
            mask = torch.cat([mask, torch.ones((len(rows), 1), dtype=torch.long)], dim=1)
            res = self.model(
                input_ids=chosen.unsqueeze(1),
                attention_mask=mask,
                position_ids=next_pos.unsqueeze(1),
                past_key_values=cache,
                use_cache=True,
            )
            cache = res.past_key_values
            logits = res.logits[:, -1]
            next_pos = next_pos + 1

        results = []
        for b, r in enumerate(reqs):
            text = _cut_at_stop(
                self.tok.decode(gen[b], skip_special_tokens=True),
                r.stop,
                r.include_stop_str_in_output,
            )
            if r.on_text is not None:
                _stream(r.on_text, streamed[b], text)
            results.append(GenResult(text, finish[b], len(prompts[b]), infos[b], len(gen[b])))
        return results

    def _prompt_logprobs(self, ids: list[int], top: int) -> list[TokenLogprob]:
        """Each prompt token's logprob given the tokens before it (the first has none), with the
        `top` most likely alternatives. Pieces of PREFILL_CHUNK tokens on a growing cache: all
        logits of a long prompt at once would take gigabytes."""
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config)
        out: list[TokenLogprob] = []
        for start in range(0, len(ids) - 1, PREFILL_CHUNK):
            end = min(start + PREFILL_CHUNK, len(ids) - 1)
            res = self.model(
                input_ids=torch.tensor([ids[start:end]]), past_key_values=cache, use_cache=True
            )
            cache = res.past_key_values
            lps = torch.log_softmax(res.logits[0].float(), dim=-1)
            for j, lp in enumerate(lps):
                tid = ids[start + j + 1]
                alts = []
                if top > 0:
                    vals, idx = torch.topk(lp, min(top, lp.shape[0]))
                    alts = [
                        (int(i), self.token_text(int(i)), float(v))
                        for v, i in zip(vals, idx, strict=True)
                    ]
                out.append(TokenLogprob(tid, self.token_text(tid), float(lp[tid]), alts))
        return out

    def _prefill(
        self, prefix: list[int], suffixes: list[list[int]], dropped: Callable[[], bool]
    ) -> tuple[torch.Tensor, Any]:
        """The shared prefix once, then every suffix packed after it (no padding), in ONE row. A
        4-D block mask lets each suffix see the prefix and its own earlier tokens only, and each
        suffix's positions restart at len(prefix). A long prefix is run first in PREFILL_CHUNK
        pieces on a growing cache, so `dropped()` (every client gone) is checked between
        pieces: an abandoned long prompt stops within one piece, not after the whole prompt.
        Returns the next-token logits of each suffix [n, vocab] and the packed cache (prefix,
        then the suffixes)."""
        plen = len(prefix)
        lens = [len(s) for s in suffixes]
        total = plen + sum(lens)
        ids = prefix + [t for s in suffixes for t in s]
        pos = list(range(plen)) + [plen + j for ln in lens for j in range(ln)]
        allowed = torch.zeros((1, 1, total, total), dtype=torch.bool)
        allowed[0, 0, :plen, :plen] = torch.tril(torch.ones((plen, plen), dtype=torch.bool))
        ends = []
        off = plen
        for ln in lens:
            allowed[0, 0, off : off + ln, :plen] = True
            allowed[0, 0, off : off + ln, off : off + ln] = torch.tril(
                torch.ones((ln, ln), dtype=torch.bool)
            )
            off += ln
            ends.append(off - 1)
        cache = None
        done = 0  # prefix tokens already in the cache
        if plen > 2 * PREFILL_CHUNK:
            from transformers import DynamicCache

            cache = DynamicCache(config=self.model.config)
            while plen - done > PREFILL_CHUNK:
                if dropped():
                    raise _Dropped()
                end = done + PREFILL_CHUNK
                self.model(
                    input_ids=torch.tensor([ids[done:end]]),
                    attention_mask=allowed[:, :, done:end, :end],
                    position_ids=torch.tensor([pos[done:end]]),
                    past_key_values=cache,
                    use_cache=True,
                    logits_to_keep=1,
                )
                done = end
            if dropped():
                raise _Dropped()
        res = self.model(
            input_ids=torch.tensor([ids[done:]]),
            attention_mask=allowed[:, :, done:, :],
            position_ids=torch.tensor([pos[done:]]),
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=torch.tensor([e - done for e in ends]),
        )
        return res.logits[0], res.past_key_values

    def _bias_vector(self, r: GenRequest) -> torch.Tensor | None:
        if not r.logit_bias:
            return None
        v = torch.zeros(self.vocab_size)
        for tid, val in r.logit_bias.items():
            if not 0 <= int(tid) < self.vocab_size:
                raise BadRequest(f"logit_bias token id {tid} is outside the vocabulary")
            v[int(tid)] = max(-100.0, min(100.0, float(val)))  # OpenAI's documented range
        return v

    def _first_tokens(self, strings: list[str] | None) -> list[int] | None:
        """The distinct first tokens of `strings` (forced_choice, extra_logprobs)."""
        if not strings:
            return None
        out: list[int] = []
        for c in strings:
            ids = self.tokenize(c)
            if not ids:
                raise BadRequest(f"{c!r} has no tokens")
            if ids[0] not in out:
                out.append(ids[0])
        return out


def _cut_at_stop(text: str, stop: list[str] | None, include: bool) -> str:
    """The reply up to its first stop string (kept when `include`)."""
    hits = [(text.find(s), s) for s in stop or () if s in text]
    if not hits:
        return text
    at, s = min(hits)
    return text[: at + (len(s) if include else 0)]


def _settled(text: str, stop: list[str] | None) -> str:
    """The part of a reply still being generated that no later token can change: without a
    half-decoded UTF-8 character at the end (shown as U+FFFD) and without a tail that could be
    the start of a stop string (cut later)."""
    text = text.rstrip("\ufffd")
    hits = [text.find(s) for s in stop or () if s in text]
    if hits:
        return text[: min(hits)]
    hold = max((len(s) for s in stop or ()), default=1) - 1
    return text[: len(text) - hold] if hold > 0 else text


def _stream(sink: Callable[[str], None], sent: str, text: str) -> str:
    """Hand `sink` what `text` adds to `sent`; returns the text sent so far."""
    if len(text) > len(sent) and text.startswith(sent):
        sink(text[len(sent) :])
        return text
    return sent


def _common_prefix_len(seqs: Sequence[Sequence[int]]) -> int:
    first = seqs[0]
    n = min(len(s) for s in seqs)
    for i in range(n):
        t = first[i]
        if any(s[i] != t for s in seqs):
            return i
    return n


def _unpack(packed: Any, plen: int, lens: list[int], rows: list[int]) -> tuple[Any, torch.Tensor]:
    """Turn the packed single-row cache into a right-padded batch cache of the given suffixes
    [len(rows), plen + width] and its 2-D attention mask, so those rows decode in lock-step."""
    offsets = [plen + sum(lens[:b]) for b in range(len(lens))]
    n, width = len(rows), max(lens[b] for b in rows)
    idx = torch.zeros((n, plen + width), dtype=torch.long)
    mask = torch.zeros((n, plen + width), dtype=torch.long)
    for i, b in enumerate(rows):
        idx[i, :plen] = torch.arange(plen)
        idx[i, plen : plen + lens[b]] = torch.arange(offsets[b], offsets[b] + lens[b])
        mask[i, : plen + lens[b]] = 1
    for layer in packed.layers:
        # keys/values: [1, heads, plen + sum(lens), dim] -> [n, heads, plen + width, dim]
        layer.keys = layer.keys[0][:, idx].permute(1, 0, 2, 3).contiguous()
        layer.values = layer.values[0][:, idx].permute(1, 0, 2, 3).contiguous()
    return packed, mask
