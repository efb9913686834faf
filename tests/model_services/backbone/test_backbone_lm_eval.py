"""lm-evaluation-harness against the backbone server (issue 40, item 8): the real `lm_eval`
package, its `local-completions` model with its default tokenizer choice, two small tasks
written here (a log-likelihood multiple choice and a `generate_until`) over a JSONL file.

Before: the server had no `/tokenizer_info` or `/detokenize`, so lm-eval fell back to loading a
Hugging Face tokenizer named after the served model (no such tokenizer: the evaluation failed
before its first request), and `tokenizer_backend=remote` failed on `GET /tokenizer_info` 404.
The numbers lm-eval computes are checked against the same weights run in this process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

MODEL = "SmolLM2-135M-Instruct"
DOCS = [
    {"question": "The capital of France is", "choices": ["Paris", "banana", "seven"], "label": 0},
    {"question": "Two plus two equals", "choices": ["four", "purple", "Tuesday"], "label": 0},
    {"question": "The opposite of hot is", "choices": ["green", "cold", "loud"], "label": 1},
]
GEN_TOKENS = 8


def _task_files(folder: Path) -> None:
    """The two tasks as lm-eval YAML files over one local JSONL file."""
    data = folder / "docs.jsonl"
    data.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    dataset = {
        "dataset_path": "json",
        # the cache in tmp_path: nothing of this test is left in the user's datasets cache
        "dataset_kwargs": {"data_files": {"test": str(data)}, "cache_dir": str(folder / "hf")},
        "test_split": "test",
    }
    mc = {
        "task": "backbone_tiny_mc",
        **dataset,
        "output_type": "multiple_choice",
        "doc_to_text": "{{question}}",
        "doc_to_choice": "{{choices}}",
        "doc_to_target": "label",
        "metric_list": [{"metric": "acc"}],
    }
    gen = {
        "task": "backbone_tiny_gen",
        **dataset,
        "output_type": "generate_until",
        "doc_to_text": "Q: {{question}}\nA:",
        "doc_to_target": " {{choices[label]}}",
        "generation_kwargs": {"until": ["\n"], "max_gen_toks": GEN_TOKENS},
        "metric_list": [{"metric": "exact_match"}],
    }
    # JSON is YAML: lm-eval reads these as it reads its own task files
    (folder / "mc.yaml").write_text(json.dumps(mc))
    (folder / "gen.yaml").write_text(json.dumps(gen))


def _loglikelihood(tok: Any, lm: Any, context: str, continuation: str) -> tuple[float, bool]:
    """log P(continuation | context) and whether it is the greedy continuation, split into
    tokens as lm-eval splits them (the whole text's tokens past the context's)."""
    whole = tok(context + continuation, add_special_tokens=False).input_ids
    ctx = len(tok(context, add_special_tokens=False).input_ids)
    with torch.no_grad():
        lps = torch.log_softmax(lm(torch.tensor([whole])).logits[0].float(), dim=-1)
    total = sum(float(lps[i - 1, whole[i]]) for i in range(ctx, len(whole)))
    greedy = all(int(lps[i - 1].argmax()) == whole[i] for i in range(ctx, len(whole)))
    return total, greedy


def _greedy_reply(tok: Any, lm: Any, prompt: str) -> str:
    ids = tok(prompt, add_special_tokens=False, return_tensors="pt").input_ids
    with torch.no_grad():
        out = lm.generate(ids, max_new_tokens=GEN_TOKENS, do_sample=False)
    text = tok.decode(out[0, ids.shape[1] :], skip_special_tokens=True)
    return text.split("\n")[0]


@pytest.fixture(scope="module")
def evaluated(
    backbone_url: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Any, dict[str, Any]]:
    import lm_eval
    from lm_eval.api.registry import get_model
    from lm_eval.tasks import TaskManager

    folder = tmp_path_factory.mktemp("lm_eval_tasks")
    _task_files(folder)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")  # a local dataset: no hub look-up
        mp.setenv("HF_DATASETS_OFFLINE", "1")
        # no tokenizer named: lm-eval chooses one itself, as a user's first try does
        lm = get_model("local-completions")(
            base_url=backbone_url + "/v1/completions", model=MODEL, timeout=300
        )
        results = lm_eval.simple_evaluate(
            model=lm,
            tasks=["backbone_tiny_mc", "backbone_tiny_gen"],
            task_manager=TaskManager(include_path=str(folder), include_defaults=False),
            bootstrap_iters=0,
        )
    assert results is not None
    return lm, results


def test_lm_eval_uses_the_servers_own_tokenizer(evaluated, local_model) -> None:  # type: ignore[no-untyped-def]
    lm, _ = evaluated
    tok, _ = local_model
    assert lm.tokenizer_backend == "remote"
    text = "The capital of France is Paris.\nA: <|im_end|> 3.14"
    ids = lm.tok_encode(text)
    assert ids == tok(text, add_special_tokens=False).input_ids
    assert lm.decode_batch([ids]) == [text]
    assert lm.eot_token_id == tok.eos_token_id and lm.eos_string == tok.eos_token
    assert lm.prefix_token_id == tok.bos_token_id


def test_lm_eval_loglikelihood_task_matches_the_model(evaluated, local_model) -> None:  # type: ignore[no-untyped-def]
    _, results = evaluated
    tok, model = local_model
    acc = results["results"]["backbone_tiny_mc"]["acc,none"]
    assert 0.0 <= acc <= 1.0
    samples = sorted(results["samples"]["backbone_tiny_mc"], key=lambda s: s["doc_id"])
    assert len(samples) == len(DOCS)
    correct = 0
    for s, doc in zip(samples, DOCS, strict=True):
        got = [r[0] for r in s["resps"]]  # one (logprob, is_greedy) per choice
        want = [_loglikelihood(tok, model, doc["question"], " " + c) for c in doc["choices"]]
        assert [g[1] for g in got] == [w[1] for w in want], (doc, got, want)
        assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-3), doc
        assert all(g[0] < 0 for g in got)
        best = max(range(len(want)), key=lambda i: want[i][0])
        correct += best == doc["label"]
    assert acc == pytest.approx(correct / len(DOCS))


def test_lm_eval_generate_until_task_matches_the_model(evaluated, local_model) -> None:  # type: ignore[no-untyped-def]
    _, results = evaluated
    tok, model = local_model
    em = results["results"]["backbone_tiny_gen"]["exact_match,none"]
    assert 0.0 <= em <= 1.0
    samples = sorted(results["samples"]["backbone_tiny_gen"], key=lambda s: s["doc_id"])
    assert len(samples) == len(DOCS)
    for s, doc in zip(samples, DOCS, strict=True):
        reply = s["resps"][0][0]
        assert reply.strip(), s  # a reply, not lm-eval's placeholder for a failed request
        assert "\n" not in reply  # `until` reached the server as a stop string
        assert reply == _greedy_reply(tok, model, f"Q: {doc['question']}\nA:"), doc
