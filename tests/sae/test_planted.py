"""A planted latent end to end: an SAE whose latent fires on exactly the tokens we choose (on the
tiny model's token embedding, `blocks.0.hook_resid_pre`), added with `harness sae add` (SAELens
files -> catalog from the held-out corpus), then scored: the right explanation gets F1 1.0 and
perfect detection and fuzzing, a wrong one F1 about 0."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from interp_harness.evaluator.api import EpisodeStats
from interp_harness.evaluator.judge import JudgeSettings
from interp_harness.evaluator.sae.cli import sae_app
from interp_harness.evaluator.sae.scorer import SAEScorer
from interp_harness.evaluator.scorer import ScoringContext
from interp_harness.function_store.sae.catalog import load
from interp_harness.function_store.sae.targets import targets_of
from interp_harness.model_services.intervention import model as model_mod
from interp_harness.model_services.intervention.saelens import save_sae

MODEL = "llama-tiny-random"  # byte-level tokens: one character, one token
CHOSEN = ["x", "z"]


def _planted(folder: Path) -> None:
    """Latent 0 fires on exactly the CHOSEN tokens: its encoder column is the sum of their
    normalised embeddings, its bias halfway between their lowest pre-activation and every other
    token's highest (checked over the whole vocabulary). Latent 1 never fires."""
    m = model_mod.load(MODEL, device="cpu")
    emb = m.lm.get_input_embeddings().weight.detach().float()
    ids = [m.tokenizer.convert_tokens_to_ids(t) for t in CHOSEN]
    w = sum(emb[i] / emb[i].norm() for i in ids)
    pre = emb @ w
    inside = torch.zeros(len(emb), dtype=torch.bool)
    inside[ids] = True
    assert pre[inside].min() > pre[~inside].max(), "embeddings too close to plant the latent"
    d = emb.shape[1]
    W_enc = torch.stack([w, torch.zeros(d)], dim=1)  # noqa: N806
    b_enc = torch.tensor([-float(pre[inside].min() + pre[~inside].max()) / 2, -1.0])
    save_sae(
        folder,
        W_enc=W_enc,
        b_enc=b_enc,
        W_dec=torch.zeros(2, d),
        b_dec=torch.zeros(d),
        architecture="standard",
        hook_name="blocks.0.hook_resid_pre",
        model_name=MODEL,
        d_in=d,
        d_sae=2,
        apply_b_dec_to_input=False,
    )


def test_planted_latent_scores_right_and_wrong_explanations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    _planted(tmp_path / "planted")
    flags = ["--model", MODEL, "--max-density", "0.5", "--device", "cpu"]
    out = CliRunner().invoke(sae_app, ["add", "planted", str(tmp_path / "planted"), *flags])
    assert out.exit_code == 0, out.output
    cat = load("planted")
    (rec,) = cat.latents  # latent 1 is dead: not catalogued
    assert rec.latent == 0 and {t for t, _, _ in rec.top_tokens} == set(CHOSEN)
    for e in rec.activating + rec.non_activating:  # fires exactly on the chosen tokens
        assert [a > 0 for a in e.acts] == [t in CHOSEN for t in e.tokens]
    (target,) = targets_of(cat)
    ctx = ScoringContext(judge_settings=JudgeSettings(provider="none"))  # the lexical decider

    def scores(description: str) -> dict[str, float]:
        res = asyncio.run(
            SAEScorer().score(target, f"[DESCRIPTION]: {description}", EpisodeStats(), ctx)
        )
        assert all(r.status == "ok" for r in res), res
        return {r.metric: r.value for r in res if r.value is not None}

    right = scores('fires on the letters "x" and "z"')
    for metric in ("observational_f1", "detection_balanced_accuracy", "fuzzing_balanced_accuracy"):
        assert right[metric] == 1.0, (metric, right)
    # wrong: a word of a non-activating example that no activating example contains (picked from
    # the catalog's examples, so whatever texts the corpus gave): claimed, never firing -> F1 0
    on = " ".join(e.text.lower() for e in rec.activating)  # membership ignores case
    words = [w for e in rec.non_activating for w in re.findall(r"[a-z]{3,}", e.text.lower())]
    decoy = next(w for w in words if w not in on)
    wrong = scores(f'fires on "{decoy}"')
    assert wrong["observational_precision"] == 0.0 and wrong["observational_f1"] == 0.0, wrong
    again = CliRunner().invoke(sae_app, ["add", "planted", str(tmp_path / "planted"), *flags])
    assert again.exit_code == 1 and "exists already" in again.output
