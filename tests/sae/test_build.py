"""`build_sae` on the tiny random Llama: SAELens files, the catalog's latents and examples checked
against the real intervention service and sae-lens, the reconstruction report, the cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from support.sae_cases import TINY

from interp_harness.function_store.sae.build import BuildOptions, build_sae
from interp_harness.function_store.sae.catalog import SAECatalog, load, sae_dir
from interp_harness.function_store.sae.catalog import built as built_names
from interp_harness.model_services.intervention.client import InterventionClient


def _site_acts(url: str, texts: list[str], layer: int) -> list[tuple[list[str], torch.Tensor]]:
    """Every token's residual vector at the SAE's site, as the service reads it."""
    with InterventionClient(url) as c:
        res = c.activations(
            {"texts": texts, "component": "block_output", "layers": [layer], "positions": "all"}
        ).results
    return [(r.tokens, torch.tensor(r.layers[0].values)) for r in res]


def _sae(path: Path):  # noqa: ANN202 (sae-lens's class, imported lazily)
    from sae_lens import SAE

    return SAE.load_from_disk(path, device="cpu")


def test_saelens_files(built: SAECatalog, in_cache: Path) -> None:
    folder = sae_dir(built.sae)
    cfg = json.loads((folder / "cfg.json").read_text())
    assert (folder / "sae_weights.safetensors").is_file()
    assert cfg["architecture"] == "topk" and cfg["k"] == TINY.k
    assert (cfg["d_in"], cfg["d_sae"]) == (48, TINY.d_sae)
    assert cfg["metadata"]["hook_name"] == "blocks.1.hook_resid_post"
    assert cfg["metadata"]["model_name"] == "llama-tiny-random"
    sae = _sae(folder)
    assert sae.W_enc.shape == (48, TINY.d_sae)
    assert built_names() == [built.sae] and load(built.sae) == built


def test_catalog_latents_live_with_examples(built: SAECatalog) -> None:
    assert len(built.latents) == TINY.n_latents
    assert len({r.latent for r in built.latents}) == TINY.n_latents
    for r in built.latents:
        assert TINY.min_density <= r.density <= TINY.max_density
        assert 0 <= r.latent < TINY.d_sae
        assert len(r.activating) == TINY.n_activating
        assert len(r.non_activating) == TINY.n_non_activating
        assert all(max(e.acts) > 0 for e in r.activating)
        assert all(max(e.acts) == 0 for e in r.non_activating)
        assert max(max(e.acts) for e in r.activating) == r.max_act
        for e in r.activating + r.non_activating:
            assert len(e.tokens) == len(e.acts)
        assert r.top_tokens and r.reference.startswith("fires on ")
        assert r.top_tokens[0][0].strip() in r.reference


def test_examples_are_the_saved_sae_on_the_service_activations(
    built: SAECatalog, in_cache: Path, sae_llama_url: str
) -> None:
    """What the catalog lists is what sae-lens's encoder gives on the service's own activations
    (the values the service will return for the latent)."""
    sae = _sae(sae_dir(built.sae))
    for r in built.latents[:3]:
        examples = r.activating + r.non_activating
        for e, (tokens, x) in zip(
            examples, _site_acts(sae_llama_url, [e.text for e in examples], 1), strict=True
        ):
            assert e.tokens == tokens
            want = sae.encode(x)[:, r.latent]
            assert torch.allclose(torch.tensor(e.acts), want, atol=1e-3)


def test_references_come_from_texts_no_example_is_drawn_from(
    built: SAECatalog, in_cache: Path, sae_llama_url: str
) -> None:
    """Issue 50 item 2: a latent's reference explanation is fitted on held-out texts that share
    none with the texts its examples (every scoring set) are drawn from. Its top tokens are
    recomputed here from the reference texts alone: the service's activations through sae-lens's
    encoder, counted past position 0."""
    ref = built.reference_texts
    assert ref and built.report.reference_texts == len(ref) and len(set(ref)) == len(ref)
    assert not set(ref) & set(built.held_out)
    sae = _sae(sae_dir(built.sae))
    read = _site_acts(sae_llama_url, ref, 1)
    with torch.no_grad():
        z = [(tokens, sae.encode(x)) for tokens, x in read]
    for r in built.latents:
        assert not {e.text for e in r.activating + r.non_activating} & set(ref)
        seen: dict[str, list[float]] = {}
        for tokens, acts in z:
            for tok, v in zip(tokens[1:], acts[1:, r.latent].tolist(), strict=True):
                if v > 0:
                    c = seen.setdefault(tok, [0, 0.0])
                    c[0], c[1] = c[0] + 1, max(c[1], v)
        want = sorted(seen, key=lambda t: (-seen[t][0], -seen[t][1], t))[:10]
        assert [t for t, _, _ in r.top_tokens] == want, r.latent
        assert [c for _, c, _ in r.top_tokens] == [seen[t][0] for t in want]
        words: list[str] = []
        for t in want:
            w = t.strip() or t.replace("\n", "\\n")
            if w not in words:
                words.append(w)
        assert r.reference == "fires on " + ", ".join(f'"{w}"' for w in words[:5])


def test_report_matches_held_out_reconstruction(
    built: SAECatalog, in_cache: Path, sae_llama_url: str
) -> None:
    """FVE and L0 recomputed here from the held-out texts the service reads (past position 0)."""
    held = built.held_out
    sae = _sae(sae_dir(built.sae))
    x = torch.cat([v[1:] for _, v in _site_acts(sae_llama_url, held, 1)])
    with torch.no_grad():
        z = sae.encode(x)
        fve = 1 - (x - sae.decode(z)).pow(2).sum() / (x - x.mean(0)).pow(2).sum()
    rep = built.report
    assert rep.held_out_texts == len(held) and rep.held_out_tokens == len(x)
    assert abs(rep.fve - float(fve)) < 2e-3
    assert 0 < rep.fve <= 1  # a trained SAE reconstructs better than the mean
    assert abs(rep.l0 - float((z > 0).sum(1).float().mean())) < 0.01
    assert 0 < rep.l0 <= TINY.k  # TopK: at most k active latents per token
    density = (z > 0).float().mean(0)
    assert rep.dead == int((density < TINY.min_density).sum())
    assert rep.dense == int((density > TINY.max_density).sum())
    assert rep.tokens == TINY.tokens


def test_cache_hit_skips_training_and_force_rebuilds(
    built: SAECatalog, in_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weights = sae_dir(built.sae) / "sae_weights.safetensors"
    before = weights.stat().st_mtime_ns
    assert build_sae(TINY, progress=False) == built
    assert weights.stat().st_mtime_ns == before  # nothing trained or written
    # changed options, then `force`: rebuilt (in a cache of its own, the session's keeps one SAE)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    quick = TINY.model_copy(update={"steps": 5, "n_latents": 2})
    first = build_sae(quick, progress=False)
    path = sae_dir(first.sae) / "sae_weights.safetensors"
    stamp = path.stat().st_mtime_ns
    changed = quick.model_copy(update={"steps": 6})
    assert build_sae(changed, progress=False).options_hash != first.options_hash
    assert load(first.sae).report.steps == 6 and path.stat().st_mtime_ns != stamp
    stamp = path.stat().st_mtime_ns
    build_sae(changed.model_copy(update={"force": True}), progress=False)
    assert path.stat().st_mtime_ns != stamp


def test_options_hash_ignores_force_and_device() -> None:
    base = BuildOptions()
    assert (
        base.options_hash()
        == base.model_copy(update={"force": True, "device": "cpu"}).options_hash()
    )
    assert base.options_hash() != base.model_copy(update={"k": 16}).options_hash()
    assert base.sae_name() == "smollm2-l12-topk"
